"""A confirmation run that completed fewer than two rounds (killed in its first round, every launch
of it failed) hides no earlier confirmation: export, status and ``confirm --show`` keep the latest
confirmation of two rounds or more. In-process on a ``backend: model`` landscape (no server).

QA (qa192): a confirm killed in its first round, after an 11-round confirmation, put `export --pick
throughput` back to the study's single measurements (another trial), its header saying `not
confirmed: measured by the study alone, never interleaved with the baseline`.
"""

from __future__ import annotations

import json
import shutil
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from support.model_study import SPACE
from support.prepared_once import prepared_once

from tuner.cli import cli
from tuner.cli.study import _backend
from tuner.config.study import load_study
from tuner.engine.confirm import open_confirm_study, run_confirmation
from tuner.engine.study import config_from_study, open_study
from tuner.results.confirmed import ConfirmedCandidate, Interval, confirm_candidates, decide_picks, load_confirmation
from tuner.results.export import build_export
from tuner.sglang.rules import SpecConfig

TABLE = {"name": "two", "concurrency": 32, "load_s": 10,
         "baseline": {"single_tok_per_s": 100.0, "tok_per_s@32": 1000.0},
         "configs": [{"num_steps": 1, "eagle_topk": 1, "num_draft_tokens": 2, "accept_length": 1.8,
                      "single_tok_per_s": 150.0, "tok_per_s@32": 1200.0},
                     {"num_steps": 2, "eagle_topk": 1, "num_draft_tokens": 3, "accept_length": 2.4,
                      "single_tok_per_s": 151.5, "tok_per_s@32": 1212.0}]}
STUDY = f"""
name: two
search_space: {SPACE}
server:
  backend: model
  model_path: m
  draft_model_path: d
  model: {{landscape: node.json, noise: 0.04, seed: 7}}
bench: {{suite: quick}}
budget: {{n_trials: 2}}
default_seed_trials: false
seed_trials:
  - {{speculative_num_steps: 1, speculative_eagle_topk: 1, speculative_num_draft_tokens: 2}}
  - {{speculative_num_steps: 2, speculative_eagle_topk: 1, speculative_num_draft_tokens: 3}}
"""


class KilledAfter:
    """The study's own backend, interrupted (Ctrl-C) at its ``n``-th measurement."""

    def __init__(self, backend, n: int):
        self.backend, self.left = backend, n

    def __getattr__(self, name):
        return getattr(self.backend, name)

    def measure(self, *args, **kwargs):
        self.left -= 1
        if self.left < 0:
            raise KeyboardInterrupt
        return self.backend.measure(*args, **kwargs)


def _build_confirmed(folder):
    """The study run, then confirmed in 2 rounds; the run id in ``first-run``. The table is an input
    beside the folder: the study stores its absolute path, which prepared_once refuses inside it."""
    node = folder.parent / f"table-{folder.name}.json"  # not a path under the folder, nor one it prefixes
    node.write_text(json.dumps(TABLE))
    path = folder / "s.yaml"
    path.write_text(STUDY.replace("landscape: node.json", f"landscape: {json.dumps(str(node))}"))
    r = CliRunner().invoke(cli, ["study", "run", str(path)])
    assert r.exit_code == 0, r.output
    study, stored, space, suite = _open(path)
    first = run_confirmation(study, stored, _backend(stored, space, suite),
                             confirm_candidates(study, ["single", "throughput", "knee"]), repeats=2)
    (folder / "first-run").write_text(first.run)


@pytest.fixture(scope="module")
def confirmed_built(tmp_path_factory):
    """The study run, then confirmed in 2 rounds, once per session (whichever xdist worker asks
    first): its folder and the confirmation's run id."""
    folder = prepared_once(tmp_path_factory, "confirmed", _build_confirmed)
    return folder, SimpleNamespace(run=(folder / "first-run").read_text())


def _open(path):
    config = load_study(path)
    study = open_study(config.name, config.storage)
    return (study, *config_from_study(study, config.workdir))


@pytest.fixture
def confirmed(confirmed_built, tmp_path):
    """Each test's own copy of the confirmed study (SQLite file and all)."""
    folder, first = confirmed_built
    shutil.copytree(folder, tmp_path, dirs_exist_ok=True)
    path = tmp_path / "s.yaml"
    return (path, *_open(path), first)


@pytest.mark.parametrize("measured", [0, 2])  # killed at its first launch; after round 1's baseline and trial
def test_a_run_killed_in_its_first_round_hides_no_earlier_confirmation(confirmed, measured):
    path, study, stored, space, suite, first = confirmed
    before = load_confirmation(study)
    assert before.run == first.run and before.rounds == 2 and before.picks
    picked = build_export(study, "throughput").spec
    with pytest.raises(KeyboardInterrupt):
        run_confirmation(study, stored, KilledAfter(_backend(stored, space, suite), measured),
                         confirm_candidates(study, ["single", "throughput", "knee"]), repeats=3)

    conf = load_confirmation(study)
    assert conf.run == first.run and conf.rounds == 2
    assert {k: c.trial for k, c in conf.picks.items()} == {k: c.trial for k, c in before.picks.items()}
    exp = build_export(study, "throughput")
    assert exp.spec == picked
    assert f"# confirmed: run {first.run}, 2 rounds" in exp.yaml_text() and "not confirmed" not in exp.yaml_text()
    r = CliRunner().invoke(cli, ["study", "confirm", str(path), "--show"])
    assert r.exit_code == 0 and f"confirmation {first.run}: 2 rounds" in r.output, r.output


def test_a_confirm_whose_every_launch_fails_exits_1_on_its_own_run(confirmed, monkeypatch):
    """The command reads its own run after measuring: an earlier confirmation does not make a run
    that measured nothing exit 0 as if it had confirmed."""
    path, study, stored, space, suite, first = confirmed
    from tuner.engine.model_backend import ModelBackend

    monkeypatch.setattr(ModelBackend, "launch_failure", lambda self, spec: ("oom", "out of memory"))
    r = CliRunner().invoke(cli, ["study", "confirm", str(path), "--repeats", "2"])
    assert r.exit_code == 1, r.output
    assert "completed 0 rounds of 2" in r.output, r.output
    assert load_confirmation(study).run == first.run  # and the earlier one still decides


def test_a_setting_measured_in_one_round_only_decides_no_pick(confirmed, monkeypatch):
    """A round whose candidates failed (a hung server, an OOM) leaves them one reading each: no
    interval, so no pick, and `confirm` exits 1 (QA, qa192: a SIGSTOPped server in round 1 of 2 left
    trial 0 one reading, `1.654 (n=1)`, and it became every pick, exit 0)."""
    path, study, stored, space, suite, first = confirmed
    from tuner.engine.model_backend import ModelBackend

    launched = []

    def first_round_fails(self, spec):
        launched.append(spec)
        return ("hung", "stopped answering") if spec is not None and launched.count(spec) == 1 else None

    monkeypatch.setattr(ModelBackend, "launch_failure", first_round_fails)
    r = CliRunner().invoke(cli, ["study", "confirm", str(path), "--repeats", "2"])
    assert r.exit_code == 1, r.output
    assert "measured no setting in two rounds with the baseline" in r.output, r.output
    assert load_confirmation(study).run == first.run  # the earlier two-round confirmation still decides
    latest = [c for c in open_confirm_study(study).get_trials() if c.user_attrs["run"] != first.run]
    assert latest and load_confirmation(study, run=latest[0].user_attrs["run"]).picks == {}


def test_picks_go_to_settings_with_an_interval():
    lucky = ConfirmedCandidate(1, SpecConfig(1, 1, 2), ["single"], 1, {"single_speedup": Interval.of([1.9])}, {},
                               Interval.of([1.9]), {"single_speedup": {0: 1.9}})
    steady = ConfirmedCandidate(2, SpecConfig(2, 1, 3), ["single"], 3, {"single_speedup": Interval.of([1.5, 1.52, 1.49])},
                                {}, None, {"single_speedup": {0: 1.5, 1: 1.52, 2: 1.49}})
    picks, _ = decide_picks([lucky, steady], ["single_speedup"])
    assert picks["single"] is steady and picks["knee"] is steady


def test_status_of_a_confirmation_that_decided_no_pick_says_so(tmp_path, monkeypatch):
    """A study whose only confirmation measured no setting in two rounds: `status` said `picks  (`,
    an empty list (QA, qa192); it says there is none and why."""
    from tuner.engine.model_backend import ModelBackend

    (tmp_path / "node.json").write_text(json.dumps(TABLE))
    path = tmp_path / "s.yaml"
    path.write_text(STUDY)
    assert CliRunner().invoke(cli, ["study", "run", str(path)]).exit_code == 0
    launched = []

    def first_round_fails(self, spec):
        launched.append(spec)
        return ("hung", "stopped answering") if spec is not None and launched.count(spec) == 1 else None

    monkeypatch.setattr(ModelBackend, "launch_failure", first_round_fails)
    assert CliRunner().invoke(cli, ["study", "confirm", str(path), "--repeats", "2"]).exit_code == 1
    r = CliRunner().invoke(cli, ["study", "status", str(path)])
    assert r.exit_code == 0, r.output
    line = next(ln for ln in r.output.splitlines() if ln.startswith("confirmed:"))
    assert "picks none (no setting measured in two rounds with the baseline)" in line, line
