"""``server.backend: model`` in the study file: exactly one of profile and landscape, paths relative
to the study file, the table checked against the objectives, and one line for every mistake."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.landscapes import table_from_profile, write_table

from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError

ROOT = Path(__file__).resolve().parents[2]

STUDY = """name: m
search_space: {space}
server:
  backend: {backend}
  model_path: some/model
{model}
objectives: {objectives}
"""


def write(tmp_path, model="  model: {profile: dense-27b-tp1}", backend="model",
          objectives="[single_speedup, speedup@32]", extra="") -> Path:
    path = tmp_path / "study.yaml"
    path.write_text(STUDY.format(space=ROOT / "search_spaces" / "eagle3.yaml", backend=backend, model=model,
                                 objectives=objectives) + extra)
    return path


def test_profile_by_name_and_defaults(tmp_path):
    m = load_study(write(tmp_path)).server.model
    assert (m.profile, m.landscape, m.noise, m.seed, m.load_s) == ("dense-27b-tp1", None, 0.02, None, None)


def test_relative_paths_are_from_the_study_file(tmp_path, monkeypatch):
    (tmp_path / "tables").mkdir()
    write_table(tmp_path / "tables" / "node.json", table_from_profile())
    path = write(tmp_path, model="  model: {landscape: tables/node.json, noise: 0.04, seed: 7}")
    monkeypatch.chdir("/")
    m = load_study(path).server.model
    assert m.landscape == str(tmp_path / "tables" / "node.json") and m.noise == 0.04 and m.seed == 7
    m = load_study(write(tmp_path, model="  model: {profile: profiles/mine.yaml}")).server.model
    assert m.profile == str(tmp_path / "profiles" / "mine.yaml")


@pytest.mark.parametrize("model, backend, objectives, extra, key, words", [
    ("", "model", "[single_speedup]", "", "server.model", "profile"),
    ("  model: {profile: a, landscape: b.json}", "model", "[single_speedup]", "", "server.model", "exactly one"),
    ("  model: {}", "model", "[single_speedup]", "", "server.model", "exactly one"),
    ("  model: {profile: a, noise: 1.5}", "model", "[single_speedup]", "", "server.model.noise", "less than 1"),
    ("  model: {profile: a}", "sim", "[single_speedup]", "", "server.model", "backend model only"),
    ("  model: {profile: a}", "model", "[goodput@32]", "slo: [{concurrency: 32, e2e_p99_ms: 100}]\n",
     "objectives", "latencies"),
    ("  model: {profile: a}", "model", "[single_speedup]", "slo: [{concurrency: 32, e2e_p99_ms: 100}]\n",
     "slo", "latencies"),
    ("  model: {landscape: missing.json}", "model", "[single_speedup]", "", "server.model.landscape",
     "missing.json: file not found"),
    ("  model: {landscape: /tmp}", "model", "[single_speedup]", "", "server.model.landscape", "/tmp: is a folder"),
    ("  model: {landscape: ''}", "model", "[single_speedup]", "", "server.model.landscape", "at least 1 character"),
    ("  model: {landscape: t.json}", "model", "[single_speedup, speedup@8]", "", "objectives", "tok_per_s@8"),
])
def test_mistakes_are_one_line(tmp_path, model, backend, objectives, extra, key, words):
    write_table(tmp_path / "t.json", table_from_profile())
    path = write(tmp_path, model=model, backend=backend, objectives=objectives, extra=extra)
    with pytest.raises(ConfigError) as err:
        load_study(path)
    text = str(err.value)
    assert "\n" not in text and words in text, text
    assert err.value.key == key and text.startswith(str(path)), text


def test_a_study_is_one_landscape_by_content_not_by_path(tmp_path):
    """QA: a table edited after create was measured into the same study (trials of two landscapes
    side by side), and a byte-identical copy at another path was refused."""
    from support.cli_in_process import tuner_here

    def tuner(*args):  # in this process: the runs' exits and lines are tested, not their processes
        return tuner_here(*args, cwd=tmp_path)

    data = table_from_profile(keep=lambda s: s.num_draft_tokens <= 8)
    write_table(tmp_path / "node.json", data)
    path = write(tmp_path, model="  draft_model_path: some/draft\n  model: {landscape: node.json, noise: 0, seed: 1}",
                 extra="budget: {n_trials: 3}\n")
    digest = load_study(path).server.model.landscape_sha256
    assert digest and len(digest) == 64
    r = tuner("study", "run", str(path), "--n-trials", "1")
    assert r.exit_code == 0, r.output
    # the same bytes at another path: the same study
    write_table(tmp_path / "copy.json", data)
    moved = path.read_text().replace("node.json", "copy.json")
    path.write_text(moved)
    r = tuner("study", "run", str(path), "--n-trials", "1")
    assert r.exit_code == 0, r.output
    # another table: refused, through the study file and by name from the storage
    data["configs"][0]["single_tok_per_s"] *= 0.5
    write_table(tmp_path / "copy.json", data)
    r = tuner("study", "run", str(path), "--n-trials", "1")
    assert r.exit_code == 2 and "server.model.landscape_sha256 differs" in r.stderr, r.stderr
    r = tuner("study", "run", "--study", "m", "--storage", f"sqlite:///{tmp_path / 'm.db'}", "--add-trials", "1")
    assert r.exit_code == 2 and "changed since study m was created" in r.stderr, r.stderr
    assert "extended" not in r.stdout  # a refused run extends nothing (QA: it grew the budget first)
    import optuna

    assert optuna.load_study(study_name="m", storage=f"sqlite:///{tmp_path / 'm.db'}").user_attrs[
        "tuner_config"]["budget"]["n_trials"] == 3
    # a pinned digest that does not match is refused at load
    path.write_text(moved.replace("seed: 1}", f"seed: 1, landscape_sha256: {digest}}}"))
    with pytest.raises(ConfigError, match="server.model.landscape_sha256: .* not the one the study file pins"):
        load_study(path)


@pytest.mark.parametrize("extra", [["--baseline"], ["--baseline", "--print"]])
def test_launch_refuses_a_model_study_it_has_no_server_for(tmp_path, extra):
    """QA: `tuner launch` on a model study started the simulator, with none of the study's figures
    behind it (no noise, no table), and said nothing."""
    from click.testing import CliRunner

    from tuner.cli import cli

    r = CliRunner().invoke(cli, ["launch", str(write(tmp_path)), *extra])
    assert r.exit_code == 2, r.output
    assert "server.backend: model has no server to launch" in r.stderr and len(r.stderr.strip().splitlines()) == 1
