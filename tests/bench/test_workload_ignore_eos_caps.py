"""With ``ignore_eos: false`` a suite's output lengths are caps: a real model ends a request at its end
of sequence (finish reason ``stop``), often far sooner. The workload line (``tuner bench``'s header,
``status``, the report, the export's header) stated them as the lengths generated (QA: a model that stops
after 60 tokens read ``output tokens 512/512/512``). It says "at most" then; the default
(``ignore_eos: true``, every request generates exactly its length) and stats stored before the key
existed read as before."""

from tuner.bench.workload import workload_line, workload_stats
from tuner.config.suite import load_suite

SUITE = {"name": "s", "prompts": [{"name": "a", "text": "Name a colour."}], "single": {"lengths": [64]},
         "sweep": {"concurrencies": [1, 8]}}


def test_caps_are_said_to_be_caps_when_the_model_may_stop_sooner():
    line = workload_line(workload_stats(load_suite({**SUITE, "ignore_eos": False})))
    assert ", output tokens at most 512/512/512 (ignore_eos false: the model may stop sooner); temperature 0" \
        in line, line


def test_exact_lengths_read_as_before():
    stats = workload_stats(load_suite(SUITE))
    assert ", output tokens 512/512/512; temperature 0" in workload_line(stats)
    older = {k: v for k, v in stats.items() if k != "ignore_eos"}  # a study stored before the key
    assert ", output tokens 512/512/512; temperature 0" in workload_line(older)
