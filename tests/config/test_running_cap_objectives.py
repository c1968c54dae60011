"""A ``max_running_requests`` below the concurrency an objective names is refused when the study loads.

SGLang 0.5.23 runs at most ``max(1, N // attn_dp_size)`` requests per attention-DP worker for
``--max-running-requests N`` (``mem_cache/kv_cache_configurator.py`` line 3128, ``resolve_max_num_reqs``)
and queues the rest. QA (qa226): ``server.args: {max_running_requests: 16}`` with the default objectives
(``speedup@32``) was created, `tuner doctor` said "10 of 10 checks pass", and every trial would have
stored what 16 running requests give as its concurrency-32 figure; the launch log said only "requests
above it queue", with no fix.
"""

from pathlib import Path

import pytest
import yaml

from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _study(tmp_path: Path, *, args: dict | None = None, extra_args: list | None = None,
           fixed: dict | None = None, objectives: list | None = None) -> Path:
    space = str(ROOT / "search_spaces" / "eagle3.yaml")
    if fixed is not None:
        data = yaml.safe_load(Path(space).read_text())
        data["fixed"] = fixed
        (tmp_path / "space.yaml").write_text(yaml.safe_dump(data))
        space = "space.yaml"
    study = {"name": "cap", "search_space": space,
             "server": {"backend": "sim", "model_path": "m", "draft_model_path": "d", "tp_size": 8,
                        "args": args or {}, "extra_args": extra_args or []},
             "bench": {"suite": "quick"}}
    if objectives is not None:
        study["objectives"] = objectives
    path = tmp_path / "cap.yaml"
    path.write_text(yaml.safe_dump(study))
    return path


def _refusal(path: Path) -> str:
    with pytest.raises(ConfigError) as err:
        load_study(path)
    line = str(err.value)
    assert "\n" not in line, line
    return line


def test_a_cap_below_the_objectives_concurrency_is_refused_with_the_fix(tmp_path):
    path = _study(tmp_path, args={"max_running_requests": 16})
    line = _refusal(path)
    assert line.startswith(f"{path}: server.args: max_running_requests 16: SGLang 0.5.23 runs at most 16 "
                           "requests at once"), line
    assert "speedup@32" in line and "raise it to 32 or more" in line and "leave it out" in line, line
    assert "resolve_max_num_reqs" in line, line


def test_attention_dp_workers_each_run_their_share(tmp_path):
    # 12 over 8 attention-DP workers is 1 each: 8 at once (running_requests_cap)
    line = _refusal(_study(tmp_path, args={"max_running_requests": 12, "attn_dp_size": 8}))
    assert "runs at most 8 requests at once (1 on each of 8 attention-DP workers)" in line, line
    assert "raise it to 32 or more" in line, line


def test_extra_args_and_fixed_are_named_where_they_set_it(tmp_path):
    line = _refusal(_study(tmp_path, extra_args=["--max-running-requests", "8"]))
    assert ": server.extra_args: max_running_requests 8: " in line, line
    (tmp_path / "f").mkdir()
    line = _refusal(_study(tmp_path / "f", fixed={"max_running_requests": 8}))
    assert "space.yaml: fixed: with the study's objectives: max_running_requests 8: " in line, line


@pytest.mark.parametrize("args, objectives", [
    ({"max_running_requests": 32}, None),
    ({"max_running_requests": 32, "attn_dp_size": 8}, None),  # 4 on each of 8 workers
    ({"max_running_requests": 16, "dp_size": 2}, None),  # each DP replica takes 16 whole
    ({"max_running_requests": 8}, ["single_speedup", "speedup@8"]),  # sweep level 32 is no objective: warned
    ({}, None),  # unset: the launcher pins it to the largest concurrency
])
def test_a_cap_that_runs_every_objective_loads(tmp_path, args, objectives):
    study = load_study(_study(tmp_path, args=args, objectives=objectives))
    assert study.server.args == args
