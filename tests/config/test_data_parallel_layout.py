"""A data-parallel layout SGLang 0.5.23 refuses while handling its arguments
(``arg_groups/parallel_hook.py``) is refused when the study file loads, one line naming
``server: args``: every launch, the baseline's too, would fail (attention DP that does not divide
``tp_size`` with a bare ``AssertionError``, no message). QA: taken at create. The simulator raises
the same (tests/sim/test_sim_argument_handling_edges.py); both read tuner/sglang/parallel.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError
from tuner.sglang.parallel import data_parallel_layout

ROOT = Path(__file__).resolve().parents[2]


def _study(tmp_path: Path, tp_size: int, args: dict) -> Path:
    path = tmp_path / "dp.yaml"
    path.write_text(yaml.safe_dump({"name": "dp", "search_space": str(ROOT / "search_spaces" / "eagle3.yaml"),
                                    "server": {"backend": "sim", "model_path": "m", "draft_model_path": "d",
                                               "tp_size": tp_size, "args": args},
                                    "bench": {"suite": "quick"}}))
    return path


@pytest.mark.parametrize("tp_size, args, says", [
    (4, {"attn_dp_size": 3}, "attention data parallelism of 3 does not divide tp_size 4"),
    (2, {"enable_dp_attention": True, "dp_size": 4}, "attention data parallelism of 4 does not divide tp_size 2"),
    (4, {"attn_dp_size": 2, "dp_size": 2}, "--dp-size 2 with --attn-dp-size 2: data-parallel replicas"),
    (4, {"attn_dp_size": 0}, "--attn-dp-size must be positive (got 0)"),
])
def test_a_layout_sglang_refuses_is_one_line_naming_server_args(tmp_path, tp_size, args, says):
    with pytest.raises(ConfigError) as err:
        load_study(_study(tmp_path, tp_size, args))
    line = str(err.value)
    assert "\n" not in line and "server: args: " in line and says in line, line


@pytest.mark.parametrize("tp_size, args, layout", [
    (4, {"attn_dp_size": 2}, (2, 1)),
    (4, {"enable_dp_attention": True, "dp_size": 4}, (4, 1)),  # the deprecated spelling
    (8, {"dp_size": 2}, (1, 2)),  # DP replicas alone
    (1, {}, (1, 1)),
])
def test_a_layout_sglang_runs_loads_as_sglang_resolves_it(tmp_path, tp_size, args, layout):
    assert load_study(_study(tmp_path, tp_size, args)).server.tp_size == tp_size
    got = data_parallel_layout(args, tp_size)
    assert (got.attn_dp_size, got.dp_size, got.error) == (*layout, None)


@pytest.mark.parametrize("args, says", [
    ({"dp_size": 2, "enable_dp_lm_head": True}, "--enable-dp-lm-head requires attention DP (--attn-dp-size)."),
    ({"enable_tp_lm_head_all_to_all": True}, "--enable-tp-lm-head-all-to-all requires attention DP"),
])
def test_an_lm_head_flag_without_attention_dp_is_refused_at_load(tmp_path, args, says):
    """QA (qa145): the simulator refused these as SGLang does (overrides.py, _dp_lm_head_validation),
    but a study of them loaded and every launch failed."""
    with pytest.raises(ConfigError) as info:
        load_study(_study(tmp_path, 4, args))
    assert says in str(info.value) and "server: args:" in str(info.value), str(info.value)
    # with attention DP beside it, SGLang runs it
    assert load_study(_study(tmp_path, 4, {"attn_dp_size": 2, "enable_dp_lm_head": True})).server.tp_size == 4
