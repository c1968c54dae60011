"""`tuner study export --format json -o NAME.yaml`: the JSON document in a file SGLang's --config
loads is refused, one line naming -o, exit 2, nothing written."""

from __future__ import annotations

import json

import pytest
from support.cli_in_process import tuner_here
from support.model_study import make_model_study

from tuner.sim.args import build_parser, merge_config


@pytest.fixture(scope="module")
def study_file(tmp_path_factory):
    return make_model_study(tmp_path_factory.mktemp("jsonname"), "js", n_trials=1)


@pytest.mark.parametrize("name", ["best.yaml", "best.YML"])
def test_json_into_a_config_file_name_is_refused(study_file, tmp_path, name):
    """QA: `export --pick knee --format json -o j.yaml` wrote the JSON document, exit 0; SGLang's
    --config loader (YAML reads JSON) handed its keys over as flags, and the launch failed on
    `unrecognized arguments: --study js --pick knee ...`."""
    out = tmp_path / name
    r = tuner_here("study", "export", str(study_file), "--pick", "knee", "--format", "json", "-o", str(out))
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: -o: {out}: --format json") and "best.json" in lines[0]
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_what_was_refused_is_what_sglang_could_not_load(study_file, tmp_path):
    r = tuner_here("study", "export", str(study_file), "--pick", "knee", "-o", str(tmp_path / "best.json"))
    assert r.exit_code == 0, r.output
    document = json.loads((tmp_path / "best.json").read_text())
    (tmp_path / "as.yaml").write_text(json.dumps(document))
    parser = build_parser()
    argv = merge_config(["--config", str(tmp_path / "as.yaml")], parser)
    assert argv[:2] == ["--study", "js"]
    with pytest.raises(SystemExit):
        parser.parse_args(argv)
