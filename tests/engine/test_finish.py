"""Finishing trials exactly once (tuner/engine/finish.py, journal.py, requeue.py, records.py), on a
real SQLite storage with the performance model as the backend: a finish applied twice, a trial
another worker failed meanwhile (the measurement re-homed and then reused, not measured again), a
journal entry replayed by the next run, a retry that carries the setting and nothing else, and
what readers believe of a trial that never finished."""

import json

import optuna
import pytest
from optuna.trial import TrialState

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.asktell import ask
from tuner.engine.backends import ModelBackend
from tuner.engine.finish import ALREADY, REHOMED, TOLD, Finish, apply_finish, finish_of, record_finish, replay_journal
from tuner.engine.journal import Journal
from tuner.engine.records import load_records
from tuner.engine.requeue import clear_inherited, requeue
from tuner.engine.runner import run_study
from tuner.engine.storage import storage_label
from tuner.engine.study import create_study, open_study
from tuner.engine.workers import Worker

STUDY = """
name: fin
search_space: {space}
server: {{backend: sim, model_path: moonshotai/Kimi-K2.6, draft_model_path: sim/draft, tp_size: 8}}
bench: {{suite: quick}}
sampler: {{seed: 2}}
budget: {{n_trials: {budget}}}
default_seed_trials: false
seed_trials:
  - {{speculative_num_steps: 3, speculative_eagle_topk: 1, speculative_num_draft_tokens: 4}}
"""


@pytest.fixture
def config(tmp_path):
    from support.faults import ROOT

    p = tmp_path / "fin.yaml"
    p.write_text(STUDY.format(space=ROOT / "search_spaces" / "eagle3.yaml", budget=3))
    cfg = load_study(p)
    create_study(cfg, cfg.storage)
    return cfg


def backend(seed=0):
    return ModelBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=seed)


def running_trial(study):
    """A RUNNING trial of the study's next queued setting (or a sampled one), as a worker holds it."""
    from support.faults import ROOT
    from tuner.config.space import SearchSpace

    trial = ask(study, SearchSpace.load(ROOT / "search_spaces" / "eagle3.yaml").distributions())
    trial.set_user_attr("worker", {"host": "elsewhere", "pid": 1, "start": 1})
    return trial


def a_finish(study, trial, values=(2.0, 1.5)):
    attrs = {"status": "measured", "effective_key": "3-1-4", "effective": {"num_steps": 3, "eagle_topk": 1,
             "num_draft_tokens": 4}, "single_tok_per_s": 60.0, "tok_per_s@32": 700.0}
    return finish_of(study, trial, attrs, list(values), {"measured": -1.0}, measured=True)


def test_a_finish_applied_twice_is_told_once(config):
    study = open_study(config.name, config.storage)
    trial = running_trial(study)
    finish = a_finish(study, trial)
    assert apply_finish(study, finish)[0] == TOLD
    assert apply_finish(study, finish)[0] == ALREADY
    done = study.get_trials(deepcopy=False)
    assert len(done) == 1 and done[0].state == TrialState.COMPLETE and done[0].values == [2.0, 1.5]
    assert done[0].constraints == {"measured": -1.0, "0": -1.0}
    # through JSON (the journal) and back, the same finish
    assert Finish.from_dict(json.loads(json.dumps(finish.to_dict()))) == finish


def test_a_pruned_finish_is_told_pruned_once_and_re_homed_as_pruned(config):
    study = open_study(config.name, config.storage)
    trial = running_trial(study)
    attrs = {"status": "pruned", "effective_key": "3-1-4", "pruned_at": "probe", "partial": {"single_tok_per_s": 30.0}}
    finish = finish_of(study, trial, attrs, None, {"measured": 1.0}, measured=True, pruned=True)
    back = Finish.from_dict(json.loads(json.dumps(finish.to_dict())))  # through the journal
    assert back == finish and back.pruned and back.values is None
    assert apply_finish(study, finish)[0] == TOLD
    assert apply_finish(study, finish)[0] == ALREADY
    (done,) = study.get_trials(deepcopy=False)
    assert done.state == TrialState.PRUNED and load_records(study)[0].status == "pruned"
    # Failed meanwhile by another worker: the pruned verdict comes back as a PRUNED trial of its own,
    # so the setting is never launched again.
    other = running_trial(study)
    late = finish_of(study, other, {**attrs, "effective_key": "2-1-3"}, None, {"measured": 1.0}, measured=True,
                     pruned=True)
    study._storage.set_trial_state_values(other._trial_id, TrialState.FAIL)
    assert apply_finish(study, late)[0] == REHOMED
    rehomed = [r for r in load_records(study) if r.attrs.get("replayed_from") == other.number]
    assert len(rehomed) == 1 and rehomed[0].state == "PRUNED" and rehomed[0].status == "pruned"


def test_a_trial_failed_meanwhile_keeps_its_measurement_and_the_retry_reuses_it(config):
    study = open_study(config.name, config.storage)
    trial = running_trial(study)
    finish = a_finish(study, trial)
    # Another worker judged it dead (a database outage hid its heartbeat): failed, setting queued.
    study._storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
    assert requeue(study, study._storage.get_trial(trial._trial_id))
    outcome, _ = apply_finish(study, finish)
    assert outcome == REHOMED
    records = {r.number: r for r in load_records(study)}
    assert records[0].status is None  # the failed original claims nothing
    rehomed = [r for r in records.values() if r.attrs.get("replayed_from") == 0]
    assert len(rehomed) == 1 and rehomed[0].status == "measured" and rehomed[0].values == [2.0, 1.5]
    assert rehomed[0].feasible
    # A worker now asks the queued retry: the setting was measured, so it is reused, not launched.
    model = backend()
    run_study(config, config.storage, model, n_trials=1)
    retry = [r for r in load_records(open_study(config.name, config.storage)) if r.attrs.get("retry_of") == 0]
    assert len(retry) == 1 and retry[0].status == "reused" and retry[0].attrs["reused_from"] == rehomed[0].number
    assert retry[0].values == [2.0, 1.5]
    assert model.calls == 2  # the baseline and one new setting; the re-homed one never again


def test_the_next_run_replays_a_dead_workers_journal_first(config, tmp_path):
    study = open_study(config.name, config.storage)
    trial = running_trial(study)  # its worker "elsewhere" is no host's: only the journal knows
    trial.set_user_attr("worker", {"host": "gone", "pid": 1, "start": 1})
    finish = a_finish(study, trial)
    journal = Journal(config.workdir)
    dead = {**Worker().as_dict(), "pid": 2 ** 22 + 7}  # this host, a process that is not there
    journal.write({"storage": storage_label(study._storage), "worker": dead, "finish": finish.to_dict(),
                   "files": {}}, stem="fin-0")
    assert replay_journal(study, config.workdir) == [("fin", 0, TOLD)]
    assert journal.entries() == []
    t = study._storage.get_trial(trial._trial_id)
    assert t.state == TrialState.COMPLETE and t.user_attrs["status"] == "measured"
    # a live worker's entry is its own business: left alone
    other = running_trial(study)
    journal.write({"storage": storage_label(study._storage), "worker": Worker().as_dict(),
                   "finish": a_finish(study, other).to_dict()}, stem="fin-1")
    assert replay_journal(study, config.workdir) == [] and len(journal.entries()) == 1
    # so is another host's worker's (this host cannot tell whether it lives: its own next run replays it)
    third = running_trial(study)
    journal.write({"storage": storage_label(study._storage), "worker": {**dead, "host": "another-host"},
                   "finish": a_finish(study, third).to_dict()}, stem="fin-2")
    assert replay_journal(study, config.workdir) == [] and len(journal.entries()) == 2
    assert study._storage.get_trial(third._trial_id).state == TrialState.RUNNING


def test_record_finish_journals_first_and_survives_an_unwritable_journal(config, tmp_path):
    study = open_study(config.name, config.storage)
    trial = running_trial(study)
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the journal folder would go")
    seen = {}

    def files():
        seen["journal"] = Journal(config.workdir).entries()
        return {}

    rec = record_finish(study, a_finish(study, trial), journal=Journal(config.workdir), files=files,
                        storage=storage_label(study._storage))
    assert rec.outcome == TOLD and rec.warnings == []
    assert len(seen["journal"]) == 1  # on disk before the files step (and before the tell)
    assert Journal(config.workdir).entries() == []  # and gone once told
    other = running_trial(study)
    rec = record_finish(study, a_finish(study, other, (1.0, 1.0)), journal=Journal(blocked),
                        storage=storage_label(study._storage))
    assert rec.outcome == TOLD and len(rec.warnings) == 1 and "not journaled" in rec.warnings[0]
    stored = study._storage.get_trial(other._trial_id)
    assert stored.values == [1.0, 1.0] and stored.user_attrs["file_warnings"] == rec.warnings


def test_a_retry_carries_the_setting_only(config):
    study = open_study(config.name, config.storage)
    trial = running_trial(study)
    for k, v in {"status": "measured", "effective_key": "3-1-4", "launching": True, "claim": "3-1-4",
                 "tok_per_s@32": 1.0}.items():
        trial.set_user_attr(k, v)
    trial.set_constraint("measured", -1.0)
    study._storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
    assert requeue(study, study._storage.get_trial(trial._trial_id), max_retry=1)  # max_retry=1: one retry
    retry = study.get_trials(deepcopy=False, states=(TrialState.WAITING,))[0]
    assert retry.params == trial.params
    assert retry.user_attrs == {"retry_of": trial.number}
    assert retry.constraints == {}
    assert retry.system_attrs["failed_trial"] == trial.number and retry.system_attrs["retry_history"] == [trial.number]
    # At most max_retry times per setting.
    again = running_trial(study)
    study._storage.set_trial_state_values(again._trial_id, TrialState.FAIL)
    assert again.user_attrs.get("retry_of") == trial.number  # the retry, failed in its turn: no second
    assert not requeue(study, study._storage.get_trial(again._trial_id), max_retry=1)


def test_a_retry_queued_by_optuna_is_cleared_of_its_inherited_result(config):
    """Optuna's own callback (what older tuners used) copies the dead trial's attributes."""
    from optuna.storages import RetryHeartbeatStaleTrialCallback

    study = open_study(config.name, config.storage)
    trial = running_trial(study)
    trial.set_user_attr("status", "measured")
    trial.set_user_attr("tok_per_s@32", 700.0)
    trial.set_constraint("measured", -1.0)
    study._storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
    with pytest.warns(optuna.exceptions.ExperimentalWarning):
        RetryHeartbeatStaleTrialCallback()(study, study._storage.get_trial(trial._trial_id))
    copy = running_trial(study)
    assert copy.user_attrs["status"] == "measured"  # what the old callback left
    cleared = clear_inherited(study._storage, copy._trial_id)
    assert {"status", "tok_per_s@32", "worker"} <= set(cleared)
    fresh = study._storage.get_trial(copy._trial_id)
    assert fresh.user_attrs["status"] is None and fresh.user_attrs["tok_per_s@32"] is None
    assert all(v <= 0 for v in fresh.constraints.values()) and fresh.system_attrs["constraints:measured"] == 0.0


def test_readers_believe_a_status_only_of_a_complete_trial(config):
    study = open_study(config.name, config.storage)
    trial = running_trial(study)
    trial.set_user_attr("status", "measured")  # killed between the status and the tell
    assert load_records(study)[0].status is None
    study._storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
    assert load_records(study)[0].status is None
    abandoned = running_trial(study)
    abandoned.set_user_attr("status", "abandoned")
    study._storage.set_trial_state_values(abandoned._trial_id, TrialState.FAIL)
    assert load_records(study)[1].status == "abandoned"


def test_a_replayed_entry_stores_its_server_log_capped_at_the_study_s_cap(config, tmp_path):
    """A dead worker's server log was never trimmed after its crash (nothing capped it since): the
    replay stores it as a copy capped at the cap the journal entry names (server.log_max_mb)."""
    from optuna.artifacts import download_artifact, get_all_artifact_meta

    from tuner.engine.artifacts import artifact_store

    study = open_study(config.name, config.storage)
    trial = running_trial(study)
    log = tmp_path / "trials" / "0" / "server.log"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"startup\n" + b"".join(b"%07d\n" % i for i in range(400_000)))  # 3.2 MB
    dead = {**Worker().as_dict(), "pid": 2 ** 22 + 7}
    Journal(config.workdir).write({"storage": storage_label(study._storage), "worker": dead,
                                   "finish": a_finish(study, trial).to_dict(),
                                   "files": {"log": str(log), "log_max_mb": 1.0}}, stem="fin-0")
    assert replay_journal(study, config.workdir) == [("fin", 0, TOLD)]
    meta, = get_all_artifact_meta(study._storage.get_trial(trial._trial_id), storage=study._storage)
    out = tmp_path / "stored.log"
    download_artifact(artifact_store=artifact_store(config.workdir), artifact_id=meta.artifact_id,
                      file_path=str(out))
    stored = out.read_bytes()
    assert len(stored) <= 1 << 20
    assert stored.startswith(b"startup\n0000000\n") and stored.endswith(b"0399999\n")
    assert b"\n[tuner: " in stored


def test_a_re_homed_measurement_keeps_the_setting_its_trial_was_given(config):
    # The engine puts the setting on the trial before launching (TrialRunner: requested, effective,
    # effective_key) and the figures into the finish; a trial failed meanwhile (Ctrl-C while its
    # measurement was being recorded, or another worker's verdict) is re-homed from the finish alone.
    # QA: the copy had no setting, so `tuner study compare` died on it and CSV showed no flags.
    study = open_study(config.name, config.storage)
    trial = running_trial(study)
    setting = {"num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}
    trial.set_user_attr("requested", setting)
    trial.set_user_attr("effective", setting)
    trial.set_user_attr("effective_key", "3-1-4")
    trial.set_user_attr("launching", True)  # a mark of the dead attempt, never copied
    finish = finish_of(study, trial, {"status": "measured", "single_tok_per_s": 60.0, "tok_per_s@32": 700.0},
                       [2.0, 1.5], {"measured": -1.0}, measured=True)
    finish = Finish.from_dict(json.loads(json.dumps(finish.to_dict())))  # as the journal holds it
    study._storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
    assert apply_finish(study, finish)[0] == REHOMED
    (rehomed,) = [r for r in load_records(study) if r.attrs.get("replayed_from") == trial.number]
    assert rehomed.effective is not None and rehomed.effective.label() == "steps=3 topk=1 draft=4"
    assert rehomed.attrs["effective_key"] == "3-1-4" and rehomed.attrs["requested"] == setting
    assert "launching" not in rehomed.attrs


def test_a_measurement_re_homed_without_its_setting_is_unreadable_not_a_traceback(config):
    # A journal entry written before finishes carried the setting (or a study re-homed then) holds a
    # measured trial with figures and no effective setting: readers show it as unreadable
    # (README "What fails a trial instead of joining the front") instead of dying on it.
    from click.testing import CliRunner

    from tuner.cli import cli

    study = open_study(config.name, config.storage)
    run_study(config, config.storage, backend(), n_trials=1)
    trial = running_trial(study)
    figures = {"status": "measured", "single_tok_per_s": 60.0, "tok_per_s@1": 60.0, "tok_per_s@8": 400.0,
               "tok_per_s@32": 700.0}
    old = finish_of(study, trial, figures, [9.0, 9.0], {"measured": -1.0}, measured=True).to_dict()
    old.pop("setting", None)
    study._storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
    assert apply_finish(study, Finish.from_dict(old))[0] == REHOMED
    rehomed = load_records(study)[-1]  # the copy, added last
    assert rehomed.number > trial.number and rehomed.status == "unreadable" and not rehomed.feasible
    for args in (["pareto", config.name], ["compare", config.name, config.name], ["status", config.name]):
        r = CliRunner().invoke(cli, ["study", *args, "--storage", config.storage])
        assert r.exit_code == 0 and r.exception is None, (args, r.output)


def test_a_re_homed_measurement_keeps_its_stage_estimates_as_intermediate_values(config):
    """QA: a pruned trial journaled by a killed worker, failed meanwhile and re-homed on the next
    run, came back with its stages attribute but no intermediate values ({}), where its original
    had one per stage and objective (what optuna-dashboard draws). The copy gets them again."""
    study = open_study(config.name, config.storage)
    stages = [{"stage": "probe", "estimates": [2.5, 0.9]}, {"stage": "single 1/1", "estimates": [2.4, 0.9]}]
    for pruned in (True, False):
        trial = running_trial(study)
        attrs = {"status": "pruned" if pruned else "measured", "effective_key": "3-1-4", "stages": stages,
                 "effective": {"num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}}
        finish = finish_of(study, trial, attrs, None if pruned else [2.4, 0.9],
                           {"measured": 1.0 if pruned else -1.0}, measured=True, pruned=pruned)
        study._storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
        assert apply_finish(study, finish)[0] == REHOMED
        copy = study.get_trials(deepcopy=False)[-1]
        assert copy.user_attrs["replayed_from"] == trial.number
        assert copy.intermediate_values == {0: 2.5, 1: 0.9, 2: 2.4, 3: 0.9}


def test_a_reused_result_of_a_trial_failed_meanwhile_is_dropped_not_re_homed(config):
    """Only a measurement is re-homed: a finish that measured nothing (a result reused from another
    trial, ``measured=False``) of a trial another worker failed meanwhile is dropped; the result it
    reused is stored already."""
    from tuner.engine.finish import DROPPED

    study = open_study(config.name, config.storage)
    trial = running_trial(study)
    attrs = {"status": "reused", "effective_key": "3-1-4", "effective": {"num_steps": 3, "eagle_topk": 1,
             "num_draft_tokens": 4}}
    finish = finish_of(study, trial, attrs, [2.0, 1.5], {"measured": -1.0}, measured=False)
    study._storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
    assert apply_finish(study, finish)[0] == DROPPED
    assert [t.state for t in study.get_trials(deepcopy=False)] == [TrialState.FAIL]


def test_another_finish_of_a_trial_complete_with_other_values_is_re_homed_not_taken_as_told(config):
    """"Already told" means the same result: a trial completed meanwhile with other values (another
    worker's) keeps them, and this measurement gets a trial of its own, never lost."""
    study = open_study(config.name, config.storage)
    trial = running_trial(study)
    assert apply_finish(study, a_finish(study, trial, values=(2.0, 1.5)))[0] == TOLD
    assert apply_finish(study, a_finish(study, trial, values=(3.0, 1.0)))[0] == REHOMED
    assert sorted(t.values for t in study.get_trials(deepcopy=False)) == [[2.0, 1.5], [3.0, 1.0]]
