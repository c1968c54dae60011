"""``server.extra_args`` giving an argument that ``server.args`` (or the search space's fixed args) sets
too, under any of its spellings, is refused when the study is created: one line naming
``server.extra_args``, the flag and where else it is set, exit 2, nothing written.

QA (qa128): ``args: {max_running_requests: 7}`` with ``extra_args: [--max-running, "8"]`` was created,
and every launch carried ``--max-running-requests 7 ... --max-running 8``: SGLang's argparse keeps the
last, so the server ran 8 while the study recorded 7 and its rules judged 7 (likewise an attention
backend: the rules judged flashinfer, the server ran triton). The verdict that argparse keeps the
last one is SGLang 0.5.23's own parser's (run on CPU from the wheel: ``--tp 2 --tp-size 1`` is
tp_size 1).
"""

from __future__ import annotations

import pytest
import yaml
from support.cli_in_process import tuner_here
from support.demo_study import ROOT, demo_study

SPACE = ROOT / "search_spaces" / "eagle3.yaml"


@pytest.mark.parametrize("args, extra, flag, where", [
    ({"max_running_requests": 7}, ["--max-running", "8"], "--max-running sets max_running_requests", "server.args"),
    ({"attention_backend": "flashinfer"}, ["--attention-back=triton"], "--attention-back=triton sets attention_backend",
     "server.args"),
    ({"enable_tf32_matmul": True}, ["--no-enable-tf32-matmul"], "--no-enable-tf32-matmul sets enable_tf32_matmul",
     "server.args"),
    ({"mem_fraction_static": 0.8}, ["--mem-fraction-static", "0.8"], "--mem-fraction-static sets mem_fraction_static",
     "server.args"),
])
def test_an_argument_given_twice_is_refused_at_create(tmp_path, args, extra, flag, where):
    path = demo_study(tmp_path, **{"server.args": args, "server.extra_args": extra})
    r = tuner_here("study", "create", str(path))
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert "\n" not in line and line.startswith(f"error: {path}: server.extra_args: {flag}, which {where} sets too")
    assert line.endswith("set it in one place")
    assert not (tmp_path / "demo.db").exists() and not (tmp_path / "work").exists()


def test_one_the_search_space_fixes_is_named_as_the_space_s(tmp_path):
    space = yaml.safe_load(SPACE.read_text())
    space.setdefault("fixed", {})["max_running_requests"] = 16
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    path = demo_study(tmp_path, **{"server.extra_args": ["--max-running-requests=32"]})
    data = yaml.safe_load(path.read_text())
    data["search_space"] = str(tmp_path / "space.yaml")
    path.write_text(yaml.safe_dump(data))
    r = tuner_here("study", "create", str(path))
    assert r.exit_code == 2, r.output
    assert ("server.extra_args: --max-running-requests=32 sets max_running_requests, which the search space's "
            "fixed args sets too (max_running_requests: 16)") in r.stderr
    assert not (tmp_path / "demo.db").exists()


def test_other_arguments_in_both_places_launch(tmp_path):
    path = demo_study(tmp_path, **{"server.args": {"max_running_requests": 40},
                                   "server.extra_args": ["--trust-remote-code", "--max-prefill-tokens", "8192"]})
    r = tuner_here("study", "create", str(path))
    assert r.exit_code == 0, r.output
