"""Two workers of a study that start at once on one host replay a dead worker's journal entry once.

A worker replays, before its first trial, the entries a dead worker of the study on this host left
in the workdir's journal (:func:`tuner.engine.finish.replay_journal`). Two starting together both
read the entry; when its trial had been failed by another worker meanwhile (its setting queued
again), each re-homed the measurement as a new trial: one measurement stored twice, counted as two
launches and averaged in twice (QA, qa93: 2 re-homed trials of 1 entry). Now a replayer holds the
entry alone while it replays it (:meth:`tuner.engine.journal.Journal.taken`); the other leaves it.

Forced with real files and a real SQLite study: each replayer, about to store the re-homed trial,
waits until the other is there too, or done (it left the entry to the first); each has a storage
of its own, as a process does.
"""

from __future__ import annotations

import threading
import time

from optuna.trial import TrialState
from support.together import run_together
import test_finish
from test_finish import a_finish, running_trial

from tuner.engine.finish import REHOMED, replay_journal
from tuner.engine.journal import Journal
from tuner.engine.records import load_records
from tuner.engine.requeue import requeue
from tuner.engine.storage import storage_label
from tuner.engine.study import open_study
from tuner.engine.workers import Worker


config = test_finish.config  # the fixture: a study (SQLite) and its workdir


def hold_for_the_other(engine, me: int, there: list[threading.Event], done: list[threading.Event]) -> None:
    """Hold this engine's first trial INSERT until the other replayer is at its own, or done."""
    import sqlalchemy as sa

    def before(conn, cursor, statement, parameters, context, executemany):
        if not there[me].is_set() and statement.upper().startswith("INSERT INTO TRIALS "):
            there[me].set()
            other = 1 - me
            deadline = time.monotonic() + 120
            while not (there[other].is_set() or done[other].is_set()) and time.monotonic() < deadline:
                time.sleep(0.05)

    sa.event.listen(engine, "before_cursor_execute", before)


def test_two_workers_starting_at_once_re_home_a_dead_workers_measurement_once(config):
    study = open_study(config.name, config.storage)
    trial = running_trial(study)
    finish = a_finish(study, trial)
    # another worker failed it as dead and queued its setting; the measurement waits in the journal
    study._storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
    requeue(study, study._storage.get_trial(trial._trial_id))
    dead = {**Worker().as_dict(), "pid": 2 ** 22 + 7}  # this host, a process that is not there
    Journal(config.workdir).write({"storage": storage_label(study._storage), "worker": dead,
                                   "finish": finish.to_dict(), "files": {}}, stem="fin-0")

    workers = [open_study(config.name, config.storage) for _ in range(2)]
    there, done = [threading.Event(), threading.Event()], [threading.Event(), threading.Event()]
    for me, w in enumerate(workers):
        hold_for_the_other(w._storage._backend.engine, me, there, done)

    def replay(me: int):
        try:
            return replay_journal(workers[me], config.workdir)
        finally:
            done[me].set()

    said, errors = run_together([lambda: replay(0), lambda: replay(1)])
    assert not errors
    rehomed = [r for r in load_records(study) if r.attrs.get("replayed_from") == trial.number]
    assert len(rehomed) == 1  # before the fix: 2, one measurement stored twice
    assert sorted(said) == [[], [("fin", trial.number, REHOMED)]]
    assert rehomed[0].status == "measured" and rehomed[0].values == [2.0, 1.5]
    assert Journal(config.workdir).entries() == []
