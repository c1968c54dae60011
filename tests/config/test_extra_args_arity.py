"""``server.extra_args`` that SGLang 0.5.23's parser refuses on every launch, for the words its flags
take, are refused when the study file loads (``study create``), one line naming the entry and the fix.

QA: ``extra_args: [--trust-remote-code, "true"]`` (a switch given a value, as a YAML ``true`` reads)
and ``[--served-model-name, my, model]`` were created; SGLang's parser then stopped every launch.
The verdicts below are SGLang's own: its real parser (``srt/server_args.py`` line 679,
``prepare_server_args``: ``argparse.ArgumentParser(prog="sglang serve")`` + ``ServerArgs.add_cli_args``),
built from the 0.5.23 wheel (heavy imports stubbed as ``tools/sglang_server_args.py`` does) and given
``--model-path m`` and each case, recorded here so CI needs no wheel. The arities come from
``arg_groups/arg_utils.py`` ``add_cli_args_from_dataclass`` (lines 393-395: a bool field is
store_true; lines 373-380: a list field is nargs "+"), ``fields/model.py`` line 348
(``model_checksum``: nargs "?") and ``server_args.py`` line 427 (``--monokernel-backend``: one value).
"""

import pytest
import yaml
from click.testing import CliRunner
from pydantic import ValidationError
from support.model_study import model_study_data

from tuner.cli import cli
from tuner.config.study import ServerSettings

#: extra_args -> the last line of SGLang 0.5.23's parser error for them (stderr, exit 2)
SGLANG_REFUSES = {
    ("--trust-remote-code", "true"): "unrecognized arguments: true",
    ("--trust-remote-code=true",): "argument --trust-remote-code: ignored explicit argument 'true'",
    ("--enable-tf32-matmul", "false"): "unrecognized arguments: false",
    ("--no-enable-tf32-matmul=1",): "ignored explicit argument '1'",
    ("--trust-remote", "yes"): "unrecognized arguments: yes",  # an abbreviation: still the switch
    ("--trust-remote-code", "-1"): "unrecognized arguments: -1",  # a negative number is a word
    ("--served-model-name", "my", "model"): "unrecognized arguments: model",
    ("--random-seed", "-1", "-2"): "unrecognized arguments: -2",
    ("--model-checksum", "a", "b"): "unrecognized arguments: b",
    ("--cuda-graph-bs-decode=1", "2"): "unrecognized arguments: 2",  # after '=': that one value only
    ("true",): "unrecognized arguments: true",
    ("--mem-fraction-static",): "argument --mem-fraction-static: expected one argument",
    ("--mem-fraction-static", "--random-seed", "1"): "argument --mem-fraction-static: expected one argument",
    ("--served-model-name", "-x"): "argument --served-model-name: expected one argument",
    ("--served-model-name", "-1e3"): "argument --served-model-name: expected one argument",
    ("--cuda-graph-bs-decode",): "argument --cuda-graph-bs-decode: expected at least one argument",
    ("--monokernel-backend",): "argument --monokernel-backend: expected one argument",
}

#: extra_args SGLang 0.5.23's parser takes (the same parser, the same way)
SGLANG_TAKES = [
    ("--cuda-graph-bs-decode", "1", "2", "4"), ("--cuda-graph-bs-decode=1",), ("--random-seed", "-1"),
    ("--model-checksum",), ("--served-model-name=-x",), ("--served-model-name", "-1"),
    ("--served-model-name", "-x y"), ("--lora-paths", "a", "b"),
    ("--numa-node", "0", "1", "--trust-remote-code"),
    ("--uvicorn-access-log-exclude-prefixes",), ("--json-model-override-args", '{"a": 1}'),
    ("--no-enable-tf32-matmul",), ("--served-model-name", ""),
]


def _refusal(extra_args) -> str | None:
    try:
        ServerSettings.model_validate({"model_path": "m", "extra_args": list(extra_args)})
    except ValidationError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("extra_args, sglang_says", SGLANG_REFUSES.items(),
                         ids=[" ".join(k) for k in SGLANG_REFUSES])
def test_what_sglang_s_parser_refuses_is_refused_with_its_words(extra_args, sglang_says):
    said = _refusal(extra_args)
    assert said is not None, f"{extra_args} was taken; SGLang 0.5.23 says: {sglang_says}"
    reason = sglang_says.split(": ", 1)[1] if sglang_says.startswith("argument ") else sglang_says
    assert reason in said and "entry " in said, said


@pytest.mark.parametrize("extra_args", SGLANG_TAKES, ids=[" ".join(k) or "-" for k in SGLANG_TAKES])
def test_what_sglang_s_parser_takes_is_taken(extra_args):
    assert _refusal(extra_args) is None


def test_a_flag_of_another_release_keeps_its_words():
    # server.extra_args is where a flag SGLang 0.5.23 does not have goes (another release's): its
    # arity is unknown here, so the words after it are its own (SGLang 0.5.23 itself refuses the flag)
    assert _refusal(["--a-later-flag", "x", "y", "--trust-remote-code"]) is None


@pytest.mark.parametrize("extra_args, says", [
    (["--trust-remote-code", "true"],
     "server.extra_args: entry 1 ('true') follows the switch --trust-remote-code, which takes no value"),
    (["--served-model-name", "-x"], "a value starting with '-' goes as --served-model-name=-x"),
], ids=["switch", "dash value"])
def test_study_create_refuses_in_one_line_and_writes_nothing(tmp_path, extra_args, says):
    data = model_study_data("arity")
    data["server"]["extra_args"] = extra_args
    path = tmp_path / "arity.yaml"
    path.write_text(yaml.safe_dump(data))
    r = CliRunner().invoke(cli, ["study", "create", str(path)])
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and says in lines[0], r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arity.yaml"]
