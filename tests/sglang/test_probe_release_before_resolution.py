"""`tuner doctor`'s argument check on an SGLang release from before the resolution pipeline: 0.5.18
and older have no ``ServerArgs.resolve_once`` nor ``resolved_dict``, and handle the arguments in
``ServerArgs.__post_init__`` (a dataclass, ``ServerArgs.from_cli_args`` inside
``prepare_server_args``). QA: every command line, the baseline's too, was reported as refused by
SGLang (``AttributeError: 'ServerArgs' object has no attribute 'resolve_once'``), "the rules do not
match this SGLang", on a release that takes them all.

The SGLang side is a stand-in ``sglang`` package first on PYTHONPATH, below the probe's seam
(``sglang.srt.server_args.prepare_server_args``), shaped as 0.5.18's: a real argparse parser built from
the tuner's SGLang table, and a dataclass whose ``__post_init__`` does the one speculative rewrite
SGLang does there (topk 1: draft tokens = steps + 1) and its refusal of a step count of 0.
"""

from __future__ import annotations

import json
import textwrap

from support.demo_study import demo_study

from tuner.config.study import load_study
from tuner.engine.doctor import FAIL, PASS, run_checks
from tuner.sglang.server_args import SERVER_ARGS_TABLE

SERVER_ARGS_0_5_18 = textwrap.dedent('''
    import argparse, dataclasses, json, os

    @dataclasses.dataclass
    class ServerArgs:
        ns: dict

        def __post_init__(self):
            self.__dict__.update(self.ns)
            del self.__dict__["ns"]
            if self.speculative_num_steps == 0:
                raise ValueError("speculative_num_steps must be at least 1")
            if self.speculative_eagle_topk == 1:
                self.speculative_num_draft_tokens = self.speculative_num_steps + 1

    def prepare_server_args(argv):
        parser = argparse.ArgumentParser(prog="sglang serve")
        for o in json.load(open(os.environ["QA_TABLE"]))["options"]:
            kind = {"int": int, "float": float}.get(o["type"])
            if o["action"] in ("store_true", "boolean_optional"):
                parser.add_argument(*o["flags"], dest=o["dest"], action="store_true")
            elif o["action"] == "store_const":
                parser.add_argument(*o["flags"], dest=o["dest"], action="store_const", const=o.get("const"))
            else:
                parser.add_argument(*o["flags"], dest=o["dest"], nargs=o["nargs"], type=kind)
        return ServerArgs(vars(parser.parse_args(argv)))
''')


def _study(tmp_path, monkeypatch, server_args: str):
    """A demo study on SGLang (an MLA model on Hopper), its server.python this interpreter with the
    stand-in release ``server_args`` first on PYTHONPATH."""
    pkg = tmp_path / "site" / "sglang"
    (pkg / "srt").mkdir(parents=True)
    (pkg / "__init__.py").write_text('__version__ = "0.5.18"\n')
    (pkg / "srt" / "__init__.py").write_text("")
    (pkg / "srt" / "server_args.py").write_text(server_args)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))
    monkeypatch.setenv("QA_TABLE", str(SERVER_ARGS_TABLE))
    models = {}
    for name, architecture in (("k2", "DeepseekV3ForCausalLM"), ("head", "LlamaForCausalLMEagle3")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text(json.dumps({"architectures": [architecture]}))
        models[name] = str(tmp_path / name)
    path = demo_study(tmp_path, **{
        "server.backend": "sglang", "server.python": None, "server.model_path": models["k2"],
        "server.draft_model_path": models["head"], "server.facts": {"gpu_compute_capability": "9.0"}})
    return {c.name: c for c in run_checks(load_study(path))}


def test_a_release_without_resolve_once_is_judged_by_its_post_init(tmp_path, monkeypatch):
    checks = _study(tmp_path, monkeypatch, SERVER_ARGS_0_5_18)
    assert "0.5.18" in checks["interpreter"].message, checks["interpreter"].line()
    c = checks["sglang arguments"]
    assert c.status == PASS, c.line()
    assert "the baseline and" in c.message and "pass SGLang's argument handling" in c.message, c.line()


def test_its_post_init_refusal_still_counts(tmp_path, monkeypatch):
    # the same stand-in, whose __post_init__ refuses the 3 steps the seed trials ask for: the check
    # fails on it, so the probe did not skip the release's argument handling
    refusing = SERVER_ARGS_0_5_18.replace('self.speculative_num_steps == 0:\n            raise ValueError("speculative_num_steps must be at least 1")',
                                          'self.speculative_num_steps == 3:\n            raise ValueError("stand-in: no 3 steps")')
    assert refusing != SERVER_ARGS_0_5_18
    c = _study(tmp_path, monkeypatch, refusing)["sglang arguments"]
    assert c.status == FAIL and "ValueError: stand-in: no 3 steps" in c.message, c.line()
    assert "AttributeError" not in c.message and "baseline" not in c.message, c.line()
