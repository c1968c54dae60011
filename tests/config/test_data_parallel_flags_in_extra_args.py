"""The data-parallel and LM-head flags SGLang 0.5.23 reads from ``server.extra_args`` (raw argv, appended
last to every launch) count in the study's DP checks as they do in ``server.args``: SGLang's parser
reads one command line (``arg_groups/parallel_hook.py``, ``arg_groups/overrides.py``
``_dp_lm_head_validation``), and so does the simulator (tests/sim/test_sim_lm_head_data_parallel.py).

QA (qa146): ``args: {dp_size: 2}`` with ``extra_args: [--enable-dp-lm-head]`` loaded (and
``tuner study create`` made the study), and every launch failed with "--enable-dp-lm-head requires
attention DP (--attn-dp-size)."; ``args: {dp_size: 2, enable_dp_lm_head: true}`` with
``extra_args: [--enable-dp-attention]`` (attention DP of 2, which SGLang runs) was refused."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _study(tmp_path: Path, args: dict, extra_args: list[str], tp_size: int = 4) -> Path:
    path = tmp_path / "dp.yaml"
    path.write_text(yaml.safe_dump({"name": "dp", "search_space": str(ROOT / "search_spaces" / "eagle3.yaml"),
                                    "server": {"backend": "sim", "model_path": "m", "draft_model_path": "d",
                                               "tp_size": tp_size, "args": args, "extra_args": extra_args},
                                    "bench": {"suite": "quick"}}))
    return path


@pytest.mark.parametrize("args, extra_args, says", [
    ({"dp_size": 2}, ["--enable-dp-lm-head"], "--enable-dp-lm-head requires attention DP (--attn-dp-size)."),
    ({}, ["--data-parallel-size=2", "--enable-dp-lm"], "--enable-dp-lm-head requires attention DP (--attn-dp-size)."),
    ({}, ["--enable-tp-lm-head-all-to-all"], "--enable-tp-lm-head-all-to-all requires attention DP"),
    ({"enable_dp_attention": True}, ["--dp-size", "3"], "attention data parallelism of 3 does not divide tp_size 4"),
])
def test_a_flag_in_extra_args_that_sglang_refuses_is_refused_at_load(tmp_path, args, extra_args, says):
    with pytest.raises(ConfigError) as info:
        load_study(_study(tmp_path, args, extra_args))
    line = str(info.value)
    assert "\n" not in line and "server: args with extra_args: " in line and says in line, line


@pytest.mark.parametrize("args, extra_args", [
    ({"dp_size": 2, "enable_dp_lm_head": True}, ["--enable-dp-attention"]),
    ({"enable_dp_lm_head": True}, ["--attn-dp-size", "2"]),
    ({"attn_dp_size": 4, "enable_tp_lm_head_all_to_all": True}, []),
    ({"attn_dp_size": 4, "enable_dp_lm_head": True}, ["--no-enable-tp-lm-head-all-to-all"]),
])
def test_what_sglang_runs_loads(tmp_path, args, extra_args):
    assert load_study(_study(tmp_path, args, extra_args)).server.extra_args == extra_args
