"""`tuner doctor` on a server whose argparse refuses the command line: argparse's own words and the
study key that wrote the flag, in the check's one line (QA: "SGLang refuses (SystemExit: 2) ... the
rules do not match this SGLang; pin the release they know", three times, no flag named; on the
simulator its usage text, 286 lines, went to doctor's stderr besides).

The SGLang side is a stand-in ``sglang`` package first on PYTHONPATH, below the seam the doctor
already has (``tuner/sglang/probe.py`` imports ``sglang.srt.server_args.prepare_server_args``): a real
argparse parser built from SGLang 0.5.23's own table (``server_args_0_5_23.json``) with the one
difference SGLang 0.5.22 has there: ``--enable-tf32-matmul`` is a plain store_true, with no
``--no-enable-tf32-matmul`` (0.5.23 made it a BooleanOptionalAction, ``arg_groups/fields/exec_.py``).
"""

from __future__ import annotations

import json
import textwrap

from click.testing import CliRunner
from support.demo_study import demo_study

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.engine.doctor import FAIL, run_checks
from tuner.sglang.server_args import SERVER_ARGS_TABLE

FAKE_SERVER_ARGS = textwrap.dedent('''
    import argparse, json, os

    class _Args:
        def __init__(self, ns):
            self.ns = ns

        def resolve_once(self):
            pass

        def resolved_dict(self):
            return vars(self.ns)

    def prepare_server_args(argv):
        parser = argparse.ArgumentParser(prog="sglang serve")
        for o in json.load(open(os.environ["QA_TABLE"]))["options"]:
            flags = [f for f in o["flags"] if not f.startswith("--no-")]
            if o["dest"] == os.environ.get("QA_DROP"):  # a release without this flag
                continue
            if os.environ.get("QA_ONE_CUDA_GRAPH_MAX_BS") and o["dest"].startswith("cuda_graph_max_bs_"):
                # 0.5.10 and older: one --cuda-graph-max-bs, no -decode / -prefill
                if o["dest"].endswith("_decode"):
                    parser.add_argument("--cuda-graph-max-bs", dest="cuda_graph_max_bs", type=int)
                continue
            if o["dest"] == "enable_tf32_matmul" or o["action"] == "store_true":
                parser.add_argument(*flags, dest=o["dest"], action="store_true")
            elif o["action"] == "boolean_optional":
                parser.add_argument(*flags, dest=o["dest"], action=argparse.BooleanOptionalAction)
            elif o["action"] == "store_const":
                parser.add_argument(*flags, dest=o["dest"], action="store_const", const=o.get("const"))
            else:
                parser.add_argument(*flags, dest=o["dest"], nargs=o["nargs"],
                                    type={"int": int, "float": float}.get(o["type"]))
        return _Args(parser.parse_args(argv))
''')


def _older_sglang(tmp_path, monkeypatch, version="0.5.22"):
    pkg = tmp_path / "site" / "sglang"
    (pkg / "srt").mkdir(parents=True)
    (pkg / "__init__.py").write_text(f'__version__ = "{version}"\n')
    (pkg / "srt" / "__init__.py").write_text("")
    (pkg / "srt" / "server_args.py").write_text(FAKE_SERVER_ARGS)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    monkeypatch.setenv("QA_TABLE", str(SERVER_ARGS_TABLE))


def _model(tmp_path, name, architecture):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"architectures": [architecture]}))
    return str(folder)


def test_a_flag_the_older_release_lacks_is_named_with_its_study_key(tmp_path, monkeypatch):
    _older_sglang(tmp_path, monkeypatch)
    path = demo_study(tmp_path, **{
        "server.backend": "sglang", "server.python": None,
        "server.model_path": _model(tmp_path, "k2", "DeepseekV3ForCausalLM"),
        "server.draft_model_path": _model(tmp_path, "head", "LlamaForCausalLMEagle3"),
        "server.facts": {"gpu_compute_capability": "9.0"},
        "server.args": {"enable_tf32_matmul": False}})
    checks = {c.name: c for c in run_checks(load_study(path))}
    assert "0.5.22" in checks["interpreter"].message, checks["interpreter"].line()
    c = checks["sglang arguments"]
    assert c.status == FAIL, c.line()
    assert "sglang serve: error: unrecognized arguments: --no-enable-tf32-matmul" in c.message, c.line()
    assert "server.args.enable_tf32_matmul" in c.message and "rules" not in c.message, c.line()
    assert c.message.count("refuses") == 1, c.line()


def test_the_simulators_parser_refusal_is_the_checks_line_not_doctors_stderr(tmp_path):
    path = demo_study(tmp_path, **{"server.extra_args": ["--no-such-flag"]})
    r = CliRunner().invoke(cli, ["doctor", str(path)], catch_exceptions=False)
    fails = [line for line in r.stdout.splitlines() if line.startswith("fail")]
    assert r.exit_code == 1 and len(fails) == 1, r.stdout
    assert fails[0].startswith("fail  sglang arguments: ")
    assert "unrecognized arguments: --no-such-flag" in fails[0] and "server.extra_args" in fails[0], fails[0]
    assert "usage:" not in r.stderr, r.stderr[:300]


def test_a_pin_the_release_lacks_says_how_to_set_it_yourself(tmp_path, monkeypatch):
    # SGLang 0.5.10 calls the CUDA-graph cap --cuda-graph-max-bs; the launcher pins
    # --cuda-graph-max-bs-decode, which no study key wrote: "remove it" cannot be the fix
    _older_sglang(tmp_path, monkeypatch, "0.5.10")
    monkeypatch.setenv("QA_ONE_CUDA_GRAPH_MAX_BS", "1")
    study = {"server.backend": "sglang", "server.python": None,
             "server.model_path": _model(tmp_path, "k2", "DeepseekV3ForCausalLM"),
             "server.draft_model_path": _model(tmp_path, "head", "LlamaForCausalLMEagle3"),
             "server.facts": {"gpu_compute_capability": "9.0"}}
    c = {c.name: c for c in run_checks(load_study(demo_study(tmp_path, **study)))}["sglang arguments"]
    assert c.status == FAIL and "unrecognized arguments: --cuda-graph-max-bs-decode 32" in c.message, c.line()
    assert "the tuner pins --cuda-graph-max-bs-decode 32" in c.message and "remove it" not in c.message, c.line()
    assert "--cuda-graph-max-bs=N" in c.message, c.line()
    # the fix it names: the study sets the release's own flag, and the pin is left out
    study["server.extra_args"] = ["--cuda-graph-max-bs=32"]
    c = {c.name: c for c in run_checks(load_study(demo_study(tmp_path, name="fixed", **study)))}["sglang arguments"]
    assert c.status != FAIL, c.line()


def test_a_flag_of_the_tuners_own_that_the_release_lacks_is_not_the_studys_to_remove(tmp_path, monkeypatch):
    # a release whose parser has no --speculative-num-draft-tokens: the baseline parses, every trial
    # is refused, and no study key wrote the flag
    _older_sglang(tmp_path, monkeypatch)
    monkeypatch.setenv("QA_DROP", "speculative_num_draft_tokens")
    path = demo_study(tmp_path, **{
        "server.backend": "sglang", "server.python": None,
        "server.model_path": _model(tmp_path, "k2", "DeepseekV3ForCausalLM"),
        "server.draft_model_path": _model(tmp_path, "head", "LlamaForCausalLMEagle3"),
        "server.facts": {"gpu_compute_capability": "9.0"}})
    c = {c.name: c for c in run_checks(load_study(path))}["sglang arguments"]
    assert c.status == FAIL and "unrecognized arguments: --speculative-num-draft-tokens" in c.message, c.line()
    assert "the tuner writes it itself" in c.message and "remove it" not in c.message, c.line()
    assert "0.5.23" in c.message, c.line()
