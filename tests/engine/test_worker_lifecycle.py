"""A worker's trials from the first moment to the study's deletion (tuner/engine/workers.py
start_trial and reap_dead_trials, tuner/server/signals.py signals_held, tuner/engine/lifecycle.py,
tuner/engine/finish.py replay_journal), on a real SQLite storage and real signals: a Ctrl-C while the
sampler proposes leaves a trial that names its worker; a trial nobody named is failed in time; a
running baseline blocks a delete; a journal entry of a study deleted since is set aside, never
stored into the new study of the same name."""

import os
import signal
from contextlib import ExitStack

import optuna
import pytest
from optuna.trial import TrialState
from support.model_study import make_model_study, stale_fast_storage
from support.prepared_once import prepared_once

from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError
from tuner.engine import workers
from tuner.engine.finish import SET_ASIDE, TOLD, finish_of, replay_journal
from tuner.engine.journal import SET_ASIDE_DIR, Journal
from tuner.engine.lifecycle import delete_study
from tuner.engine.storage import storage_label
from tuner.engine.study import UID_ATTR, create_baseline_study, create_study, open_study
from tuner.engine.workers import Worker, reap_dead_trials, start_trial
from tuner.server.signals import signals_held, stop_on_signals


def _created_study(folder):
    make_model_study(folder, "life", n_trials=None)


@pytest.fixture
def config(tmp_path_factory):
    """A created, unrun study (seed trials queued) in its SQLite storage: created once a session, each
    test on a copy of its own (support/prepared_once.py)."""
    return load_study(prepared_once(tmp_path_factory, "life", _created_study) / "life.yaml")


def test_a_held_signal_is_raised_when_the_hold_ends_and_a_second_one_at_once():
    seen = []
    with pytest.raises(KeyboardInterrupt), stop_on_signals():
        with signals_held():
            os.kill(os.getpid(), signal.SIGINT)
            seen.append("after the signal, inside the hold")
        seen.append("never: the held signal is raised as the hold ends")
    assert seen == ["after the signal, inside the hold"]
    with pytest.raises(KeyboardInterrupt), stop_on_signals():
        with signals_held():
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)  # the user insists: raised at once
            seen.append("never")
    assert seen == ["after the signal, inside the hold"]


class _InterruptingSampler(optuna.samplers.RandomSampler):
    """Ctrl-C arrives while the sampler proposes (as the structured sampler's seconds of work)."""

    def before_trial(self, study, trial):
        os.kill(os.getpid(), signal.SIGINT)
        super().before_trial(study, trial)


def test_ctrl_c_while_the_sampler_proposes_leaves_a_trial_that_names_its_worker(config):
    study = optuna.load_study(study_name=config.name, storage=config.storage, sampler=_InterruptingSampler(seed=0))
    worker = Worker()
    with pytest.raises(KeyboardInterrupt), stop_on_signals(), ExitStack() as stack:
        start_trial(study, worker, stack)
    running = study.get_trials(states=(TrialState.RUNNING,))
    assert len(running) == 1 and running[0].user_attrs["worker"] == worker.as_dict()
    # so the next run of this host fails it at once when its worker is gone
    study._storage.set_trial_user_attr(running[0]._trial_id, "worker", {**worker.as_dict(), "pid": 2 ** 22 + 7})
    assert reap_dead_trials(study) == [running[0].number]


def test_a_trial_no_worker_ever_named_is_failed_in_time(config, monkeypatch):
    study = open_study(config.name, config.storage)
    unnamed = study._storage.create_new_trial(study._study_id)  # a worker killed -9 inside ask()
    named = start_trial(study, Worker(), ExitStack())  # a live worker's: never reaped
    assert reap_dead_trials(study) == []  # a proposal may take seconds: not yet
    monkeypatch.setattr(workers, "UNNAMED_AFTER_S", 0.0)
    number = study._storage.get_trial(unnamed).number
    assert reap_dead_trials(study) == [number]
    assert study._storage.get_trial(unnamed).state == TrialState.FAIL
    assert study._storage.get_trial(unnamed).user_attrs["status"] == "interrupted"  # status says why
    assert study._storage.get_trial(named._trial_id).state == TrialState.RUNNING


def test_a_running_baseline_blocks_delete_and_a_baseline_is_not_deleted_alone(config):
    study = open_study(config.name, config.storage)
    bstudy = create_baseline_study(study)
    start_trial(bstudy, Worker(), ExitStack())
    with pytest.raises(ConfigError, match=r"trials \[baseline\] are running"):
        delete_study(config.name, config.storage)
    with pytest.raises(ConfigError, match="is the baseline of study life"):
        delete_study(config.name + ".baseline", config.storage, force=True)
    assert delete_study(config.name, config.storage, force=True) == ["life.baseline", "life"]


def _entry(study, number: int) -> dict:
    trial = start_trial(study, Worker(), ExitStack())
    assert trial.number == number
    attrs = {"status": "measured", "effective_key": "3-1-4", "single_tok_per_s": 60.0, "tok_per_s@32": 700.0,
             "effective": {"num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}}
    finish = finish_of(study, trial, attrs, [2.0, 1.5], {"measured": -1.0}, measured=True)
    dead = {**Worker().as_dict(), "pid": 2 ** 22 + 7}  # this host, a process that is not there
    return {"storage": storage_label(study._storage), "study_uid": study.user_attrs[UID_ATTR], "worker": dead,
            "finish": finish.to_dict(), "files": {}}


def test_a_journal_entry_of_a_deleted_study_is_set_aside_not_stored_in_its_successor(config):
    old = open_study(config.name, config.storage)
    journal = Journal(config.workdir)
    journal.write(_entry(old, 0), stem="life-0")
    old_uid = old.user_attrs[UID_ATTR]
    delete_study(config.name, config.storage, force=True)
    create_study(config, config.storage)  # the same name, made anew: another study (SQLite reuses its id)
    new = open_study(config.name, config.storage)
    assert new.user_attrs[UID_ATTR] != old_uid
    assert replay_journal(new, config.workdir) == [("life", 0, SET_ASIDE)]
    assert journal.entries() == [] and len(list((journal.folder / SET_ASIDE_DIR).glob("*.json"))) == 1
    assert all(t.state == TrialState.WAITING for t in new.get_trials())  # only its seeds, nothing stored
    # an entry of the study itself is still replayed
    journal.write(_entry(new, 0), stem="life-0")
    assert replay_journal(new, config.workdir) == [("life", 0, TOLD)]
    # one written before studies had ids (no study_uid) is taken as the study's own
    entry = _entry(new, 1)
    del entry["study_uid"]
    journal.write(entry, stem="life-1")
    assert replay_journal(new, config.workdir) == [("life", 1, TOLD)]


def test_a_paused_worker_of_this_host_keeps_its_trial_whatever_its_heartbeat(config):
    import time

    # the study's storage with a 2-second grace: a heartbeat goes stale quickly
    storage = stale_fast_storage(config)
    study = optuna.load_study(study_name=config.name, storage=storage)
    with ExitStack() as stack:
        mine = start_trial(study, Worker(), stack)  # this process: alive, as a SIGSTOPped worker is
    with ExitStack() as stack:
        theirs = start_trial(study, Worker(), stack)
    storage.set_trial_user_attr(theirs._trial_id, "worker", {"host": "another-node", "pid": 1, "start": 1})
    time.sleep(3)  # no beat from either since: both stale by the heartbeat
    reap_dead_trials(study)
    assert storage.get_trial(mine._trial_id).state == TrialState.RUNNING
    assert storage.get_trial(theirs._trial_id).state == TrialState.FAIL  # the other host's: judged by its heartbeat


def test_a_tuner_frozen_during_the_suite_blames_no_setting_and_measures_it_again(tmp_path):
    import subprocess
    import sys
    import time

    from support.faults import fault_env, study_file, trial_server_up, wait_for

    from tuner.engine.records import load_records

    path = study_file(tmp_path, "frozen", 1, storage=f"sqlite:///{tmp_path / 'frozen.db'}")
    workdir = tmp_path / "wd"
    log = tmp_path / "run.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "tuner", "study", "run", str(path), "--workdir", str(workdir)],
                                stdout=out, stderr=subprocess.STDOUT, env=fault_env(TUNER_STALL_S="3"), cwd=tmp_path)
    try:
        frozen = wait_for(lambda: trial_server_up(workdir), 180, "a trial's server", [proc])
        # the suite under way (its first cache flush): a pause while the server loads counts for nothing
        log_of = workdir / "trials" / str(frozen) / "server.log"
        wait_for(lambda: log_of.exists() and "Cache flushed" in log_of.read_text(errors="replace"), 180,
                 "the trial's suite", [proc])
        proc.send_signal(signal.SIGSTOP)  # the tuner stands still; its server goes on
        time.sleep(6)
        proc.send_signal(signal.SIGCONT)
        assert proc.wait(timeout=300) == 0, log.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
    study = open_study("frozen", load_study(path).storage)
    stopped = study._storage.get_trial(study._storage.get_trial_id_from_study_id_trial_number(study._study_id, frozen))
    assert stopped.state == TrialState.FAIL and stopped.user_attrs["status"] == "interrupted"
    assert "stood still" in stopped.user_attrs["note"], stopped.user_attrs
    records = load_records(study)
    retried = [r for r in records if r.attrs.get("retry_of") == frozen]
    assert len(retried) == 1 and retried[0].state == "WAITING"  # queued again (behind the other seeds)
    # the frozen launch is not counted: the budget of 1 went to a launch measured whole; nothing blamed
    assert [r.status for r in records if r.state == "COMPLETE"] == ["measured"]
    assert "stood still" in log.read_text() and "queued again" in log.read_text()
