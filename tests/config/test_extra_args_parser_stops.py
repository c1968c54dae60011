"""``server.extra_args`` words on which SGLang 0.5.23's parser stops whatever flag a later release
adds: refused when the study file loads, one line naming the entry and the fix.

QA (qa128): ``[--help]`` was created, and SGLang's parser prints its usage and exits 0 on every
launch (the server never starts); ``[-tp, "2"]`` and ``["--", x]`` were
created and SGLang exits 2 on each (whatever flags a later release adds; an abbreviation
0.5.23's flags share is left alone: it may be a whole flag of another release). The verdicts are SGLang 0.5.23's real parser's
(``argparse.ArgumentParser(prog="sglang serve")`` + ``ServerArgs.add_cli_args``, built from the
wheel with the heavy imports stubbed as ``tools/sglang_server_args.py`` does, given ``--model-path m``
and each case), recorded here so CI needs no wheel.
"""

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data
from test_extra_args_arity import _refusal  # the study file's refusal, or None

from tuner.cli import cli

#: extra_args -> (SGLang 0.5.23's exit code, the last line it printed), and what the refusal says
SGLANG_STOPS = {
    ("--help",): ((0, "usage: sglang serve [-h] --model-path ..."), "prints it and exits"),
    ("-h",): ((0, "usage: sglang serve [-h] --model-path ..."), "prints it and exits"),
    ("--he",): ((0, "usage: sglang serve [-h] --model-path ..."), "prints it and exits"),
    ("-tp", "2"): ((2, "unrecognized arguments: -tp 2"), "all start with '--'"),
    ("-x",): ((2, "unrecognized arguments: -x"), "all start with '--'"),
    ("--", "x"): ((2, "unrecognized arguments: -- x"), "ends SGLang's options"),
    ("--a-later-flag", "-x"): ((2, "unrecognized arguments: --a-later-flag -x"), "all start with '--'"),
}

#: what the same parser takes, or what only SGLang 0.5.23 does not know (another release's flag)
TAKEN = [("--trust-remote", "--served-model-name", "x"), ("--draft", "x"), ("--a-later-flag", "x", "-1"),
         # ambiguous in 0.5.23 (its parser exits 2), a whole flag of older releases: the README's way to
         # give an older SGLang the graph cap
         ("--cuda-graph-max-bs=32",)]


@pytest.mark.parametrize("extra_args, verdict", SGLANG_STOPS.items(), ids=[" ".join(k) for k in SGLANG_STOPS])
def test_a_word_sglangs_parser_stops_on_is_refused(extra_args, verdict):
    (_code, _sglang_says), says = verdict
    said = _refusal(extra_args)
    assert said is not None and says in said and "entry " in said, said


@pytest.mark.parametrize("extra_args", TAKEN, ids=[" ".join(k) for k in TAKEN])
def test_a_flag_sglang_takes_or_another_release_may_is_taken(extra_args):
    assert _refusal(extra_args) is None


def test_study_create_refuses_help_in_one_line_and_writes_nothing(tmp_path):
    data = model_study_data("helpful")
    data["server"]["extra_args"] = ["--trust-remote-code", "--help"]
    path = tmp_path / "helpful.yaml"
    path.write_text(yaml.safe_dump(data))
    r = CliRunner().invoke(cli, ["study", "create", str(path)])
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1, r.output
    assert "server.extra_args: entry 1 ('--help') asks SGLang's parser for its usage" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["helpful.yaml"]
