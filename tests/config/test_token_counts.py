"""SGLang 0.5.23 reads its token-count flags (``--context-length``, ``--max-total-tokens``,
``--max-prefill-tokens``, ``--cuda-graph-prefill-max-context`` alias ``--context-bucket``) with
``human_readable_int`` (``srt/utils/common.py``): ``128k``, ``1Mi``, ``25.6k``. QA: a study's
``server.args: {context_length: "128k"}`` was refused ("expected an integer"), though SGLang takes it.
The study check now takes exactly what SGLang takes for those options (the expected numbers below
are what SGLang 0.5.23's own function returned for each text), and the tuner reads such a value as
SGLang does wherever it needs the number (the context check before a run)."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli
from tuner.config.server_arg_checks import check_server_args

#: text -> what SGLang 0.5.23's human_readable_int returns (None: it raises ArgumentTypeError)
SGLANG_READS = {
    "128k": 128000, "1Mi": 2**20, "25.6k": 25600, " 64k ": 64000, "1G": 10**9, "2T": 2 * 10**12,
    "4Ki": 4096, "0.0001k": 0, "1_000": 1000, "+7": 7, "-1": -1, "4096": 4096,
    "128K": None, "1.5Ki": None, "128kb": None, "1e5": None, "k": None, "1.5": None, "-1k": None,
    "128 k": None, "": None, "0x10": None,
}
COUNT_ARGS = ("context_length", "max_total_tokens", "max_prefill_tokens", "cuda_graph_prefill_max_context")


@pytest.mark.parametrize("name", COUNT_ARGS)
@pytest.mark.parametrize("text, number", SGLANG_READS.items(), ids=[repr(t) for t in SGLANG_READS])
def test_the_study_check_takes_what_sglang_takes(name, text, number):
    if number is None:
        with pytest.raises(ValueError, match=f"^{name}: "):
            check_server_args({name: text}, "server.args")
    else:
        assert check_server_args({name: text}, "server.args") == {name: text}  # kept as written


@pytest.mark.parametrize("value", [128000.0, True, 1.5])
def test_a_yaml_float_or_switch_stays_refused(value):
    # argv holds str(value): "128000.0", SGLang's --config loader "true"; human_readable_int refuses both
    with pytest.raises(ValueError, match="^context_length: "):
        check_server_args({"context_length": value}, "server.args")


def test_the_alias_context_bucket_is_read_alike():
    checked = check_server_args({"context_bucket": "8k"}, "server.args")
    assert checked == {"cuda_graph_prefill_max_context": "8k"}


def _study(tmp_path, context_length, **server) -> str:
    data = model_study_data("counts", seed=1)
    data["server"]["args"] = {"context_length": context_length}
    data["server"].update(server)
    path = tmp_path / "counts.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_a_refused_count_is_one_line_naming_the_key_with_sglangs_reason(tmp_path):
    r = CliRunner().invoke(cli, ["study", "create", _study(tmp_path, "128K")])
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1, r.output
    assert "server.args: context_length: " in lines[0] and "Suffixes are case-sensitive" in lines[0], lines
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counts.yaml"]


@pytest.mark.parametrize("server", [{}, {"extra_args": ["--page-size", "x"]}],
                         ids=["parsed", "unparsed command"])
def test_the_context_check_reads_the_count_as_sglang_does(tmp_path, server):
    """The check before a run (tuner.engine.preflight) compares the suite's requests with the context
    the server would have: "1k" is 1000 tokens, whether the command parses or (a bad extra flag, said
    elsewhere) the pinned server.args value stands."""
    data = model_study_data("counts", seed=1)
    data["server"]["args"] = {"context_length": "1k"}
    data["server"].update(server)
    data["bench"] = {"suite": {"name": "long", "prompts": [{"name": "a", "text": "word " * 2000}],
                               "single": {"lengths": [8], "repeats": 1},
                               "sweep": {"concurrencies": [1, 32], "max_tokens": 8},
                               "warmup": {"requests": 0}}}
    path = tmp_path / "counts.yaml"
    path.write_text(yaml.safe_dump(data))
    r = CliRunner().invoke(cli, ["study", "create", str(path)])
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert "is over the context length 1000 (--context-length of the server's command)" in r.stderr, r.stderr



@pytest.mark.parametrize("text, number", {**{t: n for t, n in SGLANG_READS.items() if n is not None},
                                          "1.0007k": 1000, "2.9999k": 2999}.items())
def test_the_count_read_is_sglangs_number_a_decimal_truncated(text, number):
    """The number itself, not only that it is accepted: an SI decimal is truncated toward zero
    (``int(Decimal(...) * 1000)``), never rounded (1.0007k is 1000 tokens, not 1001)."""
    from tuner.sglang.arg_types import human_readable_int

    assert human_readable_int(text) == number
