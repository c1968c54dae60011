"""A search space's ``fixed`` that sets the data-parallel layout or an LM-head flag is judged with the
study's server (``tp_size``, ``server.args``, ``server.extra_args``) when the study file loads, as every
launch's command line has them all: SGLang 0.5.23 refuses what ``arg_groups/parallel_hook.py`` and
``arg_groups/overrides.py`` (``_dp_lm_head_validation``) refuse while handling the arguments, the
baseline's launch too, and the simulator with it (tests/sim/test_sim_lm_head_data_parallel.py).

QA (qa146): ``fixed: {dp_size: 2, enable_dp_lm_head: true}``, and ``fixed: {attn_dp_size: 3}`` on 8
GPUs, were created by ``tuner study create`` (exit 0) and every launch failed; the same in
``server.args`` was refused. Real ``tuner study create`` in process (click's runner)."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from support.demo_study import demo_study

from tuner.cli import cli


def _create(tmp_path, name, fixed, args=None, extra_args=None):
    space = tmp_path / "space.yaml"
    space.write_text(yaml.safe_dump({
        "algorithm": "EAGLE3", "fixed": fixed,
        "params": {"speculative_num_steps": {"low": 1, "high": 3}, "speculative_eagle_topk": {"choices": [1]},
                   "speculative_num_draft_tokens": {"low": 2, "high": 4}}}))
    study = demo_study(tmp_path, name, **{"search_space": str(space), "server.tp_size": 8,
                                          "server.args": args or {}, "server.extra_args": extra_args or []})
    return CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)


@pytest.mark.parametrize("fixed, args, says", [
    ({"dp_size": 2, "enable_dp_lm_head": True}, {}, "--enable-dp-lm-head requires attention DP (--attn-dp-size)."),
    ({"dp_size": 2}, {"enable_dp_lm_head": True}, "--enable-dp-lm-head requires attention DP (--attn-dp-size)."),
    ({"attn_dp_size": 3}, {}, "attention data parallelism of 3 does not divide tp_size 8"),
])
def test_a_layout_of_fixed_sglang_refuses_is_refused_at_create(tmp_path, fixed, args, says):
    r = _create(tmp_path, "dp", fixed, args)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "space.yaml: fixed: with the study's server (tp_size 8): " in lines[0], r.output
    assert says in lines[0], r.output
    assert not (tmp_path / "dp.db").exists()


@pytest.mark.parametrize("fixed, extra_args", [
    ({"attn_dp_size": 2, "enable_dp_lm_head": True}, []),
    ({"dp_size": 2, "enable_dp_lm_head": True}, ["--enable-dp-attention"]),
])
def test_a_layout_of_fixed_sglang_runs_is_created(tmp_path, fixed, extra_args):
    ok = _create(tmp_path, "dp-ok", fixed, extra_args=extra_args)
    assert ok.exit_code == 0, ok.output
    assert (tmp_path / "dp-ok.db").exists()
