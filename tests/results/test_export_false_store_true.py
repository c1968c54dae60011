"""The exported YAML holds what the launch passes, and nothing it leaves off: a false store_true
(``server.args: {enable_http_worker_reuseport: false}``) is off the command line (SGLang's default)
and off the file. SGLang 0.5.23's ``--config`` loader skips such a key, but 0.5.22's
(``utils/server_args_config_parser.py``, ``_add_boolean_arg``) skips only the store_true flags its
own parser has and turns any other key into ``--KEY false``: run on CPU with 0.5.22's real loader
and parser, ``enable-http-worker-reuseport: false`` (a flag 0.5.23 added) gave ``sglang serve: error:
unrecognized arguments: --enable-http-worker-reuseport false`` where the launch had run.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from tuner.config.space import SearchSpace
from tuner.config.study import load_study
from tuner.results.export import server_mapping
from tuner.sglang.rules import SpecConfig

ROOT = Path(__file__).resolve().parents[2]


def test_a_false_store_true_is_off_the_file_as_it_is_off_the_command_line(tmp_path):
    data = yaml.safe_load((ROOT / "studies" / "sim-demo.yaml").read_text())
    data["server"]["args"] = {"enable_http_worker_reuseport": False, "enable_return_aux_hidden_states": False,
                              "trust_remote_code": True, "mem_fraction_static": 0.8}
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    config = load_study(path)
    mapping, argv, _ = server_mapping(config, SearchSpace.load(config.search_space), {}, SpecConfig(3, 1, 4))
    loaded = yaml.safe_load(yaml.safe_dump(mapping))
    flags = {word for word in argv if word.startswith("--")}
    assert "--enable-http-worker-reuseport" not in flags  # the launch leaves it off
    assert not [key for key in loaded if f"--{key}" not in flags], (loaded, sorted(flags))
    assert loaded["trust-remote-code"] is True and loaded["mem-fraction-static"] == 0.8
