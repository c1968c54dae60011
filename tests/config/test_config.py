"""The study and search-space loaders: typed objects, one-line errors naming file and key."""

from pathlib import Path

import pytest

from tuner.config.space import load_space
from tuner.config.study import load_study, objective_concurrency, parse_duration
from tuner.config.yamlfile import ConfigError

ROOT = Path(__file__).resolve().parents[2]

GOOD_PARAMS = """
params:
  speculative_num_steps: {low: 1, high: 8}
  speculative_eagle_topk: {choices: [1, 2, 4, 8]}
  speculative_num_draft_tokens: {low: 2, high: 64}
"""

# (file text, the key the error must name, a word the message must contain)
BAD_SPACES = [
    (GOOD_PARAMS.replace("low: 2, high: 64", "low: 1, high: 64"), "params", "speculative_num_draft_tokens"),
    (GOOD_PARAMS.replace("low: 1, high: 8", "low: 9, high: 8"), "params.speculative_num_steps", "must not exceed"),
    (GOOD_PARAMS.replace("[1, 2, 4, 8]", "[0, 1]"), "params", "speculative_eagle_topk"),
    (GOOD_PARAMS.replace("[1, 2, 4, 8]", "[]"), "params.speculative_eagle_topk", "at least 1"),
    (GOOD_PARAMS.replace("[1, 2, 4, 8]", "[1, 1]"), "params.speculative_eagle_topk", "repeat"),
    (GOOD_PARAMS.replace("low: 1, high: 8", "low: one, high: 8"), "params.speculative_num_steps", "integer"),
    (GOOD_PARAMS + "colour: blue\n", "colour", "unknown key"),
    (GOOD_PARAMS + "fixed: {page-size: 16}\n", "fixed", "underscores"),
    (GOOD_PARAMS + "fixed: {speculative_num_steps: 2}\n", "fixed", "searched"),
    (GOOD_PARAMS + "algorithm: MEDUSA\n", "algorithm", "EAGLE3"),
    ("params:\n  speculative_num_steps: {low: 1, high: 2}\n", "params", "missing"),
    ("params: [1, 2]\n", "params", "dictionary"),
    ("- a\n- b\n", "", "mapping"),
    ("params: {a: [\n", "line", "YAML"),
]


@pytest.mark.parametrize("text,key,word", BAD_SPACES)
def test_bad_space_files(tmp_path, text, key, word):
    p = tmp_path / "space.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_space(p)
    err = info.value
    line = str(err)
    assert "\n" not in line
    assert line.startswith(str(p))
    assert err.key.startswith(key)
    assert word.lower() in line.lower()


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_space(tmp_path / "nope.yaml")


STUDY = """
name: demo
search_space: space.yaml
server:
  backend: sim
  model_path: m
"""

BAD_STUDIES = [
    (STUDY + "budget: {n_trials: 0}\n", "budget.n_trials", "greater than or equal to 1"),
    (STUDY + "budget: {timeout: soon}\n", "budget.timeout", "duration"),
    (STUDY + "budget: {prune: sometimes}\n", "budget.prune", "true, false or a mapping"),
    (STUDY + "budget: {prune: {z: 0}}\n", "budget.prune.z", "greater than 0"),
    (STUDY + "budget: {prune: {startup: 2}}\n", "budget.prune.startup", "startup_trials"),
    (STUDY + "objectives: [speedup@x]\n", "objectives", "unknown objective"),
    (STUDY + "objectives: []\n", "objectives", "at least 1"),
    (STUDY + "sampler: {name: bayes}\n", "sampler.name", "tpe"),
    (STUDY.replace("backend: sim", "backend: vllm"), "server.backend", "sim"),
    (STUDY.replace("model_path: m", "model_path: m\n  tp_size: eight"), "server.tp_size", "integer"),
    (STUDY.replace("model_path: m", "model_path: m\n  args: {max-running-requests: 8}"), "server.args", "underscores"),
    (STUDY.replace("name: demo", "name: 'a b'"), "name", "letters, digits and ._-"),
    (STUDY + "seed_trials: [{speculative_num_steps: 1, speculative_eagle_topk: 0, speculative_num_draft_tokens: 2}]\n",
     "seed_trials[0].speculative_eagle_topk", "greater than or equal to 1"),
    (STUDY.replace("search_space: space.yaml", "search_space: missing.yaml"), "", "file not found"),
]


@pytest.mark.parametrize("text,key,word", BAD_STUDIES)
def test_bad_study_files(tmp_path, text, key, word):
    (tmp_path / "space.yaml").write_text(GOOD_PARAMS)
    p = tmp_path / "study.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_study(p)
    assert info.value.key.startswith(key)
    assert word.lower() in str(info.value).lower()
    assert "\n" not in str(info.value)
    assert not (tmp_path / "demo.db").exists()


def test_study_defaults_are_absolute(tmp_path):
    (tmp_path / "space.yaml").write_text(GOOD_PARAMS)
    p = tmp_path / "study.yaml"
    p.write_text(STUDY)
    s = load_study(p)
    assert s.storage == f"sqlite:///{tmp_path / 'demo.db'}"
    assert Path(s.search_space) == tmp_path / "space.yaml"
    assert Path(s.workdir) == tmp_path / "demo"
    assert s.objectives == ["single_speedup", "speedup@32"]
    assert s.server.host == "127.0.0.1"


@pytest.mark.parametrize("budget,n_trials,timeout_s,prune", [
    ("", 16, None, True),                                   # the defaults: 16 launches, pruning on
    ("budget: {timeout: 8h}\n", None, 8 * 3600, True),      # a night, however many launches fit
    ("budget: {timeout: 8h, n_trials: 30}\n", 30, 8 * 3600, True),
    ("budget: {prune: false}\n", 16, None, False),
    ("budget: {prune: {startup_trials: 2, z: 3}}\n", 16, None, True),
])
def test_the_budget_launches_time_and_pruning(tmp_path, budget, n_trials, timeout_s, prune):
    (tmp_path / "space.yaml").write_text(GOOD_PARAMS)
    p = tmp_path / "study.yaml"
    p.write_text(STUDY + budget)
    b = load_study(p).budget
    assert (b.n_trials, b.timeout_s, b.prune.enabled) == (n_trials, timeout_s, prune)
    assert b.prune.startup_trials == (2 if "startup_trials" in budget else 4)


@pytest.mark.parametrize("path", sorted((ROOT / "studies").glob("*.yaml")))
def test_shipped_studies_load(path):
    s = load_study(path)
    assert s.name == path.stem


@pytest.mark.parametrize("text,seconds", [("8h", 28800), ("45m", 2700), ("90s", 90), ("1h30m", 5400), (120, 120), ("2.5h", 9000)])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


def test_a_long_run_of_digits_is_refused_as_a_duration_without_a_long_wait():
    """A pasted number with no unit, however long, is one error. In a child with a timeout a hundred
    times what it needs: a pattern that rescans the digits from every start hung here for minutes."""
    import subprocess
    import sys
    code = ("from tuner.config.study import parse_duration\n"
            "for text in ['1' * 100_000, '1' * 100_000 + 'h', '1h' + '2' * 100_000]:\n"
            "    try:\n        print(parse_duration(text, 'study.yaml', 'budget.timeout'))\n"
            "    except Exception as e:\n        print(type(e).__name__, str(e)[:60])\n")
    rows = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          check=True).stdout.splitlines()
    assert len(rows) == 3 and all(r.startswith("ConfigError study.yaml: budget.timeout: ") for r in rows), rows


def test_objective_concurrency():
    assert objective_concurrency("speedup@32") == 32
    assert objective_concurrency("tok_per_s@8") == 8
    assert objective_concurrency("single_speedup") is None


def test_storage_defaults_to_tuner_storage_when_set(tmp_path, monkeypatch):
    (tmp_path / "space.yaml").write_text(GOOD_PARAMS)
    p = tmp_path / "study.yaml"
    p.write_text(STUDY)
    monkeypatch.setenv("TUNER_STORAGE", "postgresql://u:secret@127.0.0.1/db")
    assert load_study(p).storage == "${TUNER_STORAGE}"
    p.write_text(STUDY + "storage: sqlite:///x.db\n")
    # the file's own storage wins (a relative SQLite file: beside the study file)
    assert load_study(p).storage == f"sqlite:///{tmp_path / 'x.db'}"


@pytest.mark.parametrize("text,hint", [
    ("1h30", "write 1h30m for 30 minutes"),   # not 1 h 30 s, not silently 1 h 30 min either
    ("90", "give a unit: 90s, 90m or 90h"),
    ("1m2h", ""), ("1h1h", ""), ("8 hours", ""), ("-5m", ""), ("", ""),
])
def test_durations_need_a_unit_on_every_number(text, hint):
    with pytest.raises(ConfigError) as exc:
        parse_duration(text, "--timeout")
    assert str(exc.value).startswith("--timeout: expected a duration with a unit on every number")
    assert hint in str(exc.value)


def test_parse_duration_with_spaces_and_units():
    assert parse_duration("1h 30m") == 5400
    assert parse_duration("1h30m15s") == 5415
    assert parse_duration("0.5m") == 30


@pytest.mark.parametrize("extra,key,hint", [
    ("budget: {n_trails: 3}\n", "budget.n_trails", "did you mean 'n_trials'?"),
    ("objectivs: [single_speedup]\n", "objectivs", "did you mean 'objectives'?"),
    ("seed_trials: [{speculative_num_steps: 1, speculative_eagle_topk: 1, speculative_num_draft_tokens: 2, "
     "speculative_eagle_tpk: 1}]\n", "seed_trials[0].speculative_eagle_tpk", "did you mean 'speculative_eagle_topk'?"),
    ("zzzzzz: 1\n", "zzzzzz", "expected one of: name, storage, search_space"),
])
def test_unknown_keys_say_what_was_meant(tmp_path, extra, key, hint):
    (tmp_path / "space.yaml").write_text(GOOD_PARAMS)
    p = tmp_path / "study.yaml"
    p.write_text(STUDY + extra)
    with pytest.raises(ConfigError) as exc:
        load_study(p)
    assert exc.value.key == key and hint in exc.value.message, str(exc.value)


def test_unknown_sim_key_and_suite_name_say_what_was_meant(tmp_path):
    (tmp_path / "space.yaml").write_text(GOOD_PARAMS)
    p = tmp_path / "study.yaml"
    p.write_text(STUDY.replace("model_path: m", "model_path: m\n  sim: {speedp: 3}"))
    with pytest.raises(ConfigError, match=r"server\.sim\.speedp: unknown key \(did you mean 'speedup'\?\)"):
        load_study(p)
    p.write_text(STUDY + "bench: {suite: quik}\n")
    with pytest.raises(ConfigError, match=r"bench\.suite: unknown suite 'quik' \(did you mean 'quick'\?\)"):
        load_study(p)
    from tuner.config.suite import load_suite

    with pytest.raises(ConfigError, match=r"quik: unknown suite \(did you mean 'quick'\?\)"):
        load_suite("quik")


@pytest.mark.parametrize("text", ["0", "0.0", "00", "0d"])
def test_a_bare_zero_is_not_told_to_add_a_unit(text):
    """QA: `--timeout 0` said "give a unit: 0s, 0m or 0h", and each of those is refused in turn
    ("must be positive"): the hint led nowhere. A zero is refused as zero."""
    with pytest.raises(ConfigError) as exc:
        parse_duration(text, "--timeout")
    assert "must be positive" in str(exc.value) and "give a unit" not in str(exc.value)


@pytest.mark.parametrize("text,hint", [("1d", "write 24h for 1 day"), ("2d", "write 48h for 2 days"),
                                       ("1.5d", "write 36h for 1.5 days")])
def test_days_are_told_in_hours(text, hint):
    """QA: `--timeout 1d` said only "expected a duration with a unit ... got '1d'": days are a unit
    people write for a weekend's study; the line now says what to write instead."""
    with pytest.raises(ConfigError) as exc:
        parse_duration(text, "--timeout")
    assert hint in str(exc.value)


def test_a_space_of_exactly_the_cap_loads_and_one_row_more_is_refused(tmp_path):
    """MAX_COMBINATIONS is the most a space may hold, inclusive (mutation testing: refusing at the
    cap itself passed every test): 10 steps x 10 topk x 1,000 draft-token counts = 100,000."""
    from tuner.config.space import MAX_COMBINATIONS

    def space(high: int):
        p = tmp_path / f"cap{high}.yaml"
        p.write_text("params:\n  speculative_num_steps: {low: 1, high: 10}\n"
                     "  speculative_eagle_topk: {low: 1, high: 10}\n"
                     f"  speculative_num_draft_tokens: {{low: 2, high: {high}}}\n")
        return p

    assert MAX_COMBINATIONS == 100_000
    assert load_space(space(1001))
    with pytest.raises(ConfigError, match="100,100 combinations of the three flags; the cap is 100,000"):
        load_space(space(1002))
