"""``max_running_requests`` below 1 in a study's ``server.args`` (or a space's ``fixed``) is refused when
the file loads, one line naming the key and the fix.

QA (qa145): ``server.args: {max_running_requests: 0}`` (0 read as "no limit") loaded, and the launcher,
seeing it set, pinned nothing. SGLang 0.5.23's argument handling keeps 0 (its own ``prepare_server_args``
+ ``resolve_once`` on CPU reported 0, and -1 for -1), then its memory pool sizes the requests as
``max(1, N // attn_dp_size)`` (``mem_cache/kv_cache_configurator.py``, ``resolve_max_num_reqs``): one
request at a time, so every concurrency level of the suite would measure a serialized server.
"""

from pathlib import Path

import pytest
import yaml

from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _study(tmp_path: Path, args: dict, objectives: list[str] | None = None) -> Path:
    path = tmp_path / "mrr.yaml"
    path.write_text(yaml.safe_dump({"name": "mrr", "search_space": str(ROOT / "search_spaces" / "eagle3.yaml"),
                                    "server": {"backend": "sim", "model_path": "m", "draft_model_path": "d",
                                               "args": args},
                                    "bench": {"suite": "quick"},
                                    **({"objectives": objectives} if objectives else {})}))
    return path


@pytest.mark.parametrize("value", [0, -1, "0"])
def test_max_running_requests_below_one_is_one_line_naming_the_key(tmp_path, value):
    with pytest.raises(ConfigError) as err:
        load_study(_study(tmp_path, {"max_running_requests": value}))
    line = str(err.value)
    assert "\n" not in line and "server.args: max_running_requests: " in line, line
    assert "1 request at a time" in line and "leave it out" in line, line
    # the number SGLang's argparse reads, whether written as a number or as text (QA qa152: "max(1, '0')")
    assert f"SGLang runs max(1, {int(value)}) = 1" in line, line


def test_an_abbreviation_sglang_reads_as_it_is_refused_too(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_study(_study(tmp_path, {"max_running": 0}))
    assert "server.args: max_running: 0" in str(err.value)


@pytest.mark.parametrize("value", [1, 8, 64])
def test_one_or_more_loads(tmp_path, value):
    # objectives at concurrencies the cap runs (one above it is refused: test_running_cap_objectives.py)
    objectives = ["single_speedup", f"speedup@{min(value, 32)}"]
    study = load_study(_study(tmp_path, {"max_running_requests": value}, objectives))
    assert study.server.args == {"max_running_requests": value}
