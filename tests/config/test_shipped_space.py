"""The EAGLE-3 search space ships in the package and is named ``eagle3`` wherever a space is taken:
a study file's ``search_space`` (also its default), ``tuner space list|check SPACE`` and ``tuner sim
landscape --space``. QA: an installed tuner (no checkout) had no search space at all, and every
study file needs one. The rules are a shipped suite's: the name wins over a file of that name (write
``./eagle3``), any other text is a path, and a bare unknown name is refused as such."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tuner.cli import cli
from tuner.cli.own_files import study_inputs
from tuner.config.space import DEFAULT_SPACE, SHIPPED_SPACES, SPACES_DIR, load_space, space_path
from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError

ROOT = Path(__file__).resolve().parents[2]
CHECKOUT_SPACE = ROOT / "search_spaces" / "eagle3.yaml"
#: a space unlike the shipped one (a single setting), to tell which file was read
OTHER = ("params:\n  speculative_num_steps: {low: 2, high: 2}\n  speculative_eagle_topk: {choices: [1]}\n"
         "  speculative_num_draft_tokens: {low: 3, high: 3}\n")


def study(tmp_path: Path, search_space: str | None = "eagle3", name: str = "s") -> Path:
    data = {"name": name, **({"search_space": search_space} if search_space is not None else {}),
            "server": {"backend": "model", "model_path": "m", "draft_model_path": "d", "tp_size": 8,
                       "model": {"profile": "k2.6-tp8-pcie", "seed": 1}},
            "bench": {"suite": "quick"}, "budget": {"n_trials": 2}}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_the_checkout_space_is_the_shipped_file_byte_for_byte():
    # search_spaces/eagle3.yaml is what the README and older study files name; it must not drift
    assert CHECKOUT_SPACE.read_bytes() == (SPACES_DIR / "eagle3.yaml").read_bytes()


def test_every_shipped_name_is_a_file_that_loads_and_nothing_else_ships():
    assert DEFAULT_SPACE in SHIPPED_SPACES
    assert sorted(p.stem for p in SPACES_DIR.glob("*.yaml")) == sorted(SHIPPED_SPACES)
    for name in SHIPPED_SPACES:
        assert space_path(name) == SPACES_DIR / f"{name}.yaml"
        assert load_space(name).algorithm in ("EAGLE3", "EAGLE")


def test_a_study_names_the_shipped_space_or_leaves_it_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_study(study(tmp_path)).search_space == "eagle3"  # kept as a name, as a shipped suite is
    assert load_study(study(tmp_path, None, "t")).search_space == "eagle3"  # the default


def test_the_shipped_name_wins_over_a_file_of_that_name_and_dot_slash_names_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "eagle3").write_text(OTHER)
    assert load_study(study(tmp_path)).search_space == "eagle3"
    assert load_space("eagle3").params["speculative_num_steps"].bounds() == (1, 8)
    local = load_study(study(tmp_path, "./eagle3", "t")).search_space
    assert local == str(tmp_path / "eagle3")
    assert load_space(local).params["speculative_num_steps"].bounds() == (2, 2)
    # any other text is a path, relative to the study file, as before
    (tmp_path / "mine.yaml").write_text(OTHER)
    assert load_study(study(tmp_path, "mine.yaml", "u")).search_space == str(tmp_path / "mine.yaml")


@pytest.mark.parametrize("value, says", [
    ("eagl3", "s.yaml: search_space: unknown search space 'eagl3' (did you mean 'eagle3'?); expected a shipped "
              "one (eagle3) or a search-space YAML file, as a path relative to the study file"),
    ("EAGLE3", "s.yaml: search_space: unknown search space 'EAGLE3' (did you mean 'eagle3'?)"),
    ("eagle3.yaml", "s.yaml: search_space: "),  # a path: a missing file, not an unknown name
])
def test_a_bad_space_name_is_one_line_exit_2_nothing_written(tmp_path, monkeypatch, value, says):
    monkeypatch.chdir(tmp_path)
    path = study(tmp_path, value)
    r = CliRunner().invoke(cli, ["study", "create", str(path)])
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, r.output
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], r.stderr
    if value.endswith(".yaml"):
        assert "file not found" in lines[0] and "unknown search space" not in lines[0], lines
    assert [p.name for p in tmp_path.iterdir()] == ["s.yaml"]


def test_space_commands_take_the_name_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["space", "list", "eagle3"])
    assert r.exit_code == 0 and "949 valid effective configs" in r.output, r.output
    r = CliRunner().invoke(cli, ["space", "check", "eagle3", "--num-steps", "1", "--topk", "1",
                                 "--draft-tokens", "3"])
    assert r.exit_code == 0 and "runs as steps=1 topk=1 draft=2" in r.output, r.output
    r = CliRunner().invoke(cli, ["space", "list", "eagl3"])
    assert r.exit_code == 2 and r.stderr.strip() == (
        "error: eagl3: unknown search space 'eagl3' (did you mean 'eagle3'?); expected a shipped one (eagle3) "
        "or a search-space YAML file"), r.stderr
    assert list(tmp_path.iterdir()) == []


def test_unknown_names_are_refused_by_the_loader_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="unknown search space 'nope'"):
        load_space("nope")
    with pytest.raises(ConfigError, match="empty; give a shipped space's name"):
        load_space("")


def test_outputs_spare_the_shipped_space_file(tmp_path, monkeypatch):
    # the shipped file is one of the study's inputs: `export -o` / `report -o` may not write over it
    monkeypatch.chdir(tmp_path)
    config = load_study(study(tmp_path))
    assert ("the study's search-space file", SPACES_DIR / "eagle3.yaml") in study_inputs(None, None, config)
