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


def _tables(capsys, ignore_eos: bool) -> str:
    """``tuner bench``'s tables of a run of :data:`SUITE` as the runner saves it (its suite's dump)."""
    from tuner.bench import SuiteResult
    from tuner.bench.records import RequestRecord
    from tuner.cli.bench_tables import print_result

    suite = load_suite({**SUITE, "ignore_eos": ignore_eos}).to_dict()
    records = [RequestRecord(phase, "a", 64, 0, concurrency=c, start_s=0.0, end_s=1.0, ok=True,
                             completion_tokens=60, finish_reason="stop" if not ignore_eos else "length",
                             output_text="x")
               for phase, c in (("single", 1), ("sweep", 1), ("sweep", 8))]
    print_result(SuiteResult(suite=suite, base_url="http://127.0.0.1:1", api="generate", stream=False,
                             records=records, complete=True))
    return capsys.readouterr().out


def test_the_bench_tables_say_caps_too(capsys):
    """QA: the tables under that line still read `tokens 64` and `concurrency sweep, 64 tokens per
    request` for a model that stopped after 60."""
    capped = _tables(capsys, ignore_eos=False)
    assert "max tokens" in capped and "concurrency sweep, at most 64 tokens per request" in capped, capped
    exact = _tables(capsys, ignore_eos=True)
    assert "max tokens" not in exact and "concurrency sweep, 64 tokens per request" in exact, exact
