"""A number a study writes as text (``server.args: {mem_fraction_static: "0.8"}``) is exported as the
number SGLang holds (tuner/results/export.py, ``_as_held``): SGLang 0.5.23's ``--config`` loader
hands ``str(value)`` to argparse, which converts it by the option's type, so both forms load alike,
and the file shows the value SGLang runs with.

QA: the export wrote ``mem-fraction-static: '0.8'``, quoted, while the README says the text is the
number 0.8 on every backend.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from tuner.config.space import SearchSpace
from tuner.config.study import load_study
from tuner.results.export import server_mapping
from tuner.sglang.rules import SpecConfig

ROOT = Path(__file__).resolve().parents[2]


def test_numbers_given_as_text_are_exported_as_numbers(tmp_path):
    data = yaml.safe_load((ROOT / "studies" / "sim-demo.yaml").read_text())
    data["server"]["args"] = {"mem_fraction_static": "0.8", "chunked_prefill_size": "4096",
                              "served_model_name": "42"}
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    config = load_study(path)
    mapping, _, _ = server_mapping(config, SearchSpace.load(config.search_space), {}, SpecConfig(3, 1, 4))
    loaded = yaml.safe_load(yaml.safe_dump(mapping))
    assert (loaded["mem-fraction-static"], loaded["chunked-prefill-size"]) == (0.8, 4096)
    assert loaded["served-model-name"] == "42"  # a text option keeps its text


def test_list_items_given_as_text_are_exported_as_numbers(tmp_path):
    """Each item of a list option (QA, qa200: ``cuda_graph_bs_decode: [1, 2, "4"]`` was exported with
    ``- '4'``); SGLang's ``--config`` loader hands argparse ``str(item)`` of each, so the numbers load
    as the launch's words did. An item whose number would read as an option keeps its text."""
    data = yaml.safe_load((ROOT / "studies" / "sim-demo.yaml").read_text())
    data["server"]["args"] = {"cuda_graph_bs_decode": [1, 2, "4", " 8"], "gc_threshold": ["700", 10, "+10"],
                              "bucket_time_to_first_token": ["0.5", 1, "-0.00001"],
                              "log_requests_target": ["stdout", "10"]}
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    config = load_study(path)
    mapping, argv, _ = server_mapping(config, SearchSpace.load(config.search_space), {}, SpecConfig(3, 1, 4))
    loaded = yaml.safe_load(yaml.safe_dump(mapping))
    assert loaded["cuda-graph-bs-decode"] == [1, 2, 4, 8]
    assert loaded["gc-threshold"] == [700, 10, 10]
    assert loaded["bucket-time-to-first-token"] == [0.5, 1, "-0.00001"]
    assert loaded["log-requests-target"] == ["stdout", "10"]  # a text option keeps its text
    # the words SGLang's loader makes of them (str of each item) parse as the launch's did
    for key, kind in (("cuda-graph-bs-decode", int), ("gc-threshold", int)):
        at = argv.index("--" + key)
        assert [kind(str(v)) for v in loaded[key]] == [kind(w) for w in argv[at + 1:at + 1 + len(loaded[key])]]
