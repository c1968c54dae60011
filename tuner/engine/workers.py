"""Workers, heartbeats and claims: how several workers share one study through its storage alone.

* :class:`Worker` (:mod:`tuner.engine.worker_identity`) names the process that runs a trial (host,
  pid, start time, PID namespace), so a worker on the same host can tell at once that it died.
* :class:`Heartbeat` records Optuna heartbeats for a running trial from a background thread
  (ask/tell records none); a missed beat (the storage unreachable) is retried a second later, never
  raised: the thread neither dies nor blocks the worker.
* :func:`start_trial` asks Optuna for a trial and names its worker, with Ctrl-C held in between
  (:func:`tuner.server.signals.signals_held`): a trial is never left RUNNING with no worker.
* :func:`reap_dead_trials` fails RUNNING trials whose worker is gone and queues their settings again
  (:func:`tuner.engine.requeue.requeue`: the setting only); of several workers reaping at once, one
  fails a trial and queues it (:func:`interrupt`, :func:`fail_running`). Right after a storage outage this
  process saw, nobody's heartbeat could land, so none is judged by its heartbeat until a grace
  period has passed; nor right after the database's clock was stepped (:mod:`tuner.engine.db_clock`).
  A trial that never got its worker's name (the worker was killed while the sampler proposed it) is
  failed once this process has seen it unnamed for :data:`UNNAMED_AFTER_S`
  (its own monotonic clock: the trial's start time is another node's clock).
* :func:`try_claim` / :func:`wait_for_claim`: claim-then-look, so two workers never measure the
  same effective setting (or the baseline) at once, with no coordinator.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from contextlib import ExitStack

from ..server.signals import signals_held
from . import dead_journals
from .db_clock import DATABASE_CLOCK, beats_ahead
from .asktell import ask, move_state, propose
from .patience import fail_fast, patient_backend
from .records import INTERRUPTED
from .requeue import clear_inherited, requeue
from .storage import HEARTBEAT_GRACE_S, HEARTBEAT_INTERVAL_S, MAX_RETRY
from .worker_identity import Worker  # (its callers import it from here too, as before the split)

#: How often a worker waiting for another's claim looks again, in seconds.
POLL_S = 1.0
#: A RUNNING trial a reaper has seen with no worker named on it for this long was left by a worker
#: killed while the sampler proposed it (a proposal takes seconds; the worker names itself at once
#: after): it is failed. Five heartbeat grace periods (200 s by default).
UNNAMED_AFTER_S = 5 * HEARTBEAT_GRACE_S
#: How many times :func:`start_trial` asks for a trial the storage keeps losing as it creates it.
ASK_TRIES = 3

log = logging.getLogger("tuner.engine")


class TakenBeforeSuite(Exception):
    """Raised from the backend's ``phase: benchmark`` event when this worker's trial (or baseline
    trial), read back from the database as its server became ready, is no longer its own
    (:meth:`tuner.engine.trial.TrialRunner._look_before_suite`): the backend stops the server,
    nothing is measured or written, and the worker steps aside (a baseline: it looks for the one the
    other worker measures, :func:`tuner.engine.baseline.ensure_baseline`)."""


class Heartbeat:
    """Records Optuna heartbeats for one running trial from a background thread (ask/tell does not)."""

    def __init__(self, storage, trial_id: int):
        self.storage, self.trial_id = storage, trial_id
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True, name=f"heartbeat-{trial_id}")

    def _record(self) -> bool:
        try:
            self.storage.record_heartbeat(self.trial_id)
            return True
        except Exception:  # noqa: BLE001 - a missed beat is retried; the trial must go on
            return False

    def _beat(self) -> None:
        wait = HEARTBEAT_INTERVAL_S
        with fail_fast():  # this thread never waits out an outage: its next beat is its retry
            while not self._stop.wait(wait):
                # After a missed beat, try again soon: the storage is back, the others must see us alive.
                wait = HEARTBEAT_INTERVAL_S if self._record() else min(1.0, HEARTBEAT_INTERVAL_S)

    def __enter__(self):
        if hasattr(self.storage, "record_heartbeat"):
            self._record()  # the first beat before anything else happens to the trial
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)


def start_trial(study, worker: Worker, stack: ExitStack, distributions=None):
    """Ask ``study`` for a trial (a queued one first) and make it this worker's: its first heartbeat
    (kept up by a :class:`Heartbeat` entered on ``stack``), a retry's inherited attributes blanked
    (:func:`~tuner.engine.requeue.clear_inherited`), and ``worker`` named on it; only then does the
    sampler propose ``distributions`` (:func:`~tuner.engine.asktell.propose`), so a kill -9 during
    the proposal (seconds) leaves a trial the next run of this host fails at once
    (:func:`reap_dead_trials`). A Ctrl-C is held until the trial names its worker; a kill -9 in the
    milliseconds before that leaves an unnamed trial, failed once a reaper has seen it so for
    :data:`UNNAMED_AFTER_S`.

    A trial the storage loses right after creating it (Optuna's ``KeyError: 'Record does not
    exist.'`` from the next write to it) is asked for again, up to :data:`ASK_TRIES` times in all:
    PostgreSQL with asynchronous commits (``synchronous_commit = off``) restarted at once, or a
    failover to a replica behind the primary, forgets the last commits it acknowledged (QA: the
    worker died with a traceback from the sampler). Past that the error goes out, as for a study
    deleted under the worker.

    A trial another worker failed as nobody's before this one named itself (this worker paused, or
    cut off from the database, for :data:`UNNAMED_AFTER_S` while the sampler proposed: Optuna's
    ``UpdateFinishedTrialError`` from the sampler's or the name's write) is the reaper's, which queued
    its setting: it is left as it is and a trial asked for again, within the same tries (QA, qa111:
    such a worker stopped with that traceback)."""
    from optuna.exceptions import UpdateFinishedTrialError

    for attempt in range(1, ASK_TRIES + 1):
        with signals_held(), ExitStack() as this_try:
            try:
                # Asked with no distributions, so the sampler proposes only once the trial names
                # its worker: Optuna's ask(distributions) proposes before it returns (seconds), and a
                # worker killed there left a trial no one named, failed only once a reaper had seen
                # it so for UNNAMED_AFTER_S; a run finding the budget spent ends at once, and such a
                # trial stayed RUNNING for good (QA, qa148: fault_campaign --random 10 --seed 9104,
                # draw 2, a group kill between two launches: "trial 4 left RUNNING", no parameters).
                trial = ask(study)
                this_try.enter_context(Heartbeat(study._storage, trial._trial_id))
                clear_inherited(study._storage, trial._trial_id)
                trial.set_user_attr("worker", worker.as_dict())
                propose(trial, distributions)
            except (KeyError, UpdateFinishedTrialError) as exc:
                if attempt == ASK_TRIES:
                    raise
                log.warning("the storage lost the trial it had just created (a commit it did not keep); "
                            "asking again" if isinstance(exc, KeyError) else
                            "another worker failed the trial this worker had just asked for as nobody's "
                            "(this process paused, or cut off from the database, before it named itself); "
                            "asking again")
                continue
            stack.enter_context(this_try.pop_all())  # the heartbeat lives on with the trial
            return trial
    raise AssertionError("unreachable")  # the last try returns or raises


def lost_commit_causes(storage) -> str:
    """What makes ``storage``'s kind of database forget a commit it acknowledged, for a warning: every
    session of the tuner commits synchronously on PostgreSQL (:mod:`tuner.engine.storage`), so an
    immediate restart or a crash of the server keeps them there; what still loses them is named."""
    url = str(getattr(getattr(storage, "_backend", storage), "url", "") or "")
    if url.startswith("sqlite"):
        return "the SQLite file put back from an older copy"
    return "a failover to a replica behind its primary, a machine crash with fsync off, or a restore"


def trial_lost(storage, trial_id: int, number: int) -> bool:
    """Whether the database no longer holds the trial ``trial_id`` (number ``number``), read from the
    database itself, not this process's cache: a commit it acknowledged and then forgot
    (:func:`lost_commit_causes`). SQLite may have given the id to a trial created since: one of
    another number there is a loss too. False for a trial still there (the error that made the caller
    ask was something else)."""
    backend = getattr(storage, "_backend", storage)
    try:
        return backend.get_trial(trial_id).number != number
    except KeyError:
        return True


def mark_interrupted(storage, trial_id: int, why: str) -> bool:
    """Say on a RUNNING trial about to be failed why it never finished (``status: interrupted``
    and a note: ``status`` and the report show it); False when it finished meanwhile (another
    worker failed it first)."""
    from optuna.exceptions import UpdateFinishedTrialError

    try:
        storage.set_trial_user_attr(trial_id, "status", INTERRUPTED)
        storage.set_trial_user_attr(trial_id, "note", f"{why}; its setting is queued again")
    except UpdateFinishedTrialError:
        return False
    return True


def reap_dead_trials(study) -> list[int]:
    """Fail RUNNING trials whose worker is gone and queue their parameters again.

    Workers on this host are checked by pid and start time at once (a live one is never failed, its
    heartbeat late or not); others by Optuna's heartbeat (after the grace period); a trial no worker
    ever named (:func:`start_trial`) once this process has seen it unnamed for :data:`UNNAMED_AFTER_S`
    (:class:`_UnnamedSince`). None is judged by time right after
    a storage outage this process saw (nobody could write meanwhile), nor right after a step of the
    database's clock, which heartbeats are judged by (:class:`tuner.engine.db_clock.DatabaseClock`).
    Each trial is failed, and its setting queued, by one worker only (:func:`fail_running`); a trial
    another worker failed first is left to it, nothing raised. Returns the numbers of the trials
    failed here, those failed by their heartbeat left out.

    Before a dead worker of this host is judged, the journal of this host is replayed when this
    process has one for the storage (:func:`tuner.engine.dead_journals.journal_first`, the runner's):
    a worker killed during its tell left its measurement there and its trial RUNNING, and the trial is
    told with it instead.
    """
    from optuna.trial import TrialState

    storage = study._storage
    if not hasattr(storage, "get_heartbeat_stale_trial_callback"):
        return []  # a storage without heartbeats (in-memory, for benchmarks): one process, no deaths
    patient = patient_backend(storage)
    steady = DATABASE_CLOCK.steady(storage)  # read at every look: the next one's reference
    # The dead of this host first, by pid, whatever their heartbeat's age: Optuna's staleness would
    # fail them too once the grace is past, as a worker that "stopped answering" (QA: a run killed
    # with kill -9 and run again the next morning; its trial said so, and the run said nothing).
    running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    dead_here = any(Worker.reapable(t.user_attrs.get("worker")) is False for t in running)
    if dead_here and dead_journals.replay(storage):
        # a dead worker's measurement journaled before its tell: told now, not failed and measured again
        running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    reaped = [t.number for t in running if Worker.reapable(t.user_attrs.get("worker")) is False and _reap(study, t)]
    # Asked after the reads, never before: an outage the clock read (the look's first call) or a
    # read since waited out held every worker's beats back too (QA, qa174: asked first, a live
    # trial of another host was failed at once after an outage that began at the clock read).
    by_time = steady and not _recently_away(patient)
    if by_time:
        # A worker of this host whose process lives is alive, whatever its heartbeat says: paused
        # (SIGSTOP, a suspended VM, swap) it could not beat, and failing its trial would launch its
        # setting twice. Beat for it, so Optuna's staleness judges the other hosts' workers only.
        for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            if Worker.reapable(t.user_attrs.get("worker")) is True:
                storage.record_heartbeat(t._trial_id)
        _fail_stale(study)
    running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    unnamed_for = _UNNAMED.seen(storage, [t._trial_id for t in running if not t.user_attrs.get("worker")])
    by_time = by_time and not _recently_away(patient)
    for t in running:
        named = t.user_attrs.get("worker")
        unnamed = not named and by_time and unnamed_for.get(t._trial_id, 0.0) >= UNNAMED_AFTER_S
        if (Worker.reapable(named) is False or unnamed) and _reap(study, t):
            reaped.append(t.number)
    return reaped


def _recently_away(patient) -> bool:
    """Whether ``patient`` (a patient storage backend, or None) met an outage within a grace period
    and an interval: a worker's beats may not have landed since, so no heartbeat is judged."""
    return patient is not None and patient.recently_unreachable(HEARTBEAT_GRACE_S + HEARTBEAT_INTERVAL_S)


class _UnnamedSince:
    """Since when (this process's monotonic clock) each RUNNING trial has been seen with no worker
    named on it, per storage. Not by the trial's ``datetime_start``: that is the clock of the node
    that asked for it, and nodes' clocks differ (NTP not yet synced after a boot, a VM resumed). A
    node whose clock ran ahead of the asker's by more than :data:`UNNAMED_AFTER_S` failed a live
    trial while its sampler proposed it (QA, qa95: three workers on one PostgreSQL study, clocks at
    -10, 0 and +10 min; two of them stopped with ``UpdateFinishedTrialError`` from the sampler);
    one behind it left a dead worker's trial RUNNING for as long. The price: a trial left unnamed
    by a worker killed yesterday is failed :data:`UNNAMED_AFTER_S` into the next run, not at its
    start (it holds no budget slot meanwhile: it never reached its launch)."""

    def __init__(self):
        self._since: dict[tuple[int, int], float] = {}
        self._lock = threading.Lock()

    def seen(self, storage, trial_ids: list[int]) -> dict[int, float]:
        """Record ``trial_ids`` as the unnamed RUNNING trials of ``storage`` now; for each, the
        seconds this process has seen it so (0 the first time). Trials no longer among them are
        forgotten (named since, or finished)."""
        key = id(getattr(storage, "_backend", storage))
        now = time.monotonic()
        with self._lock:
            mine = {k: v for k, v in self._since.items() if k[0] == key}
            for k in mine:
                if k[1] not in trial_ids:
                    del self._since[k]
            return {i: now - self._since.setdefault((key, i), now) for i in trial_ids}


_UNNAMED = _UnnamedSince()


def _reap(study, t) -> bool:
    """Fail the RUNNING trial ``t`` of a dead worker (``interrupted``: "its worker died") and queue its
    setting again; False when another worker reaped it first."""
    return interrupt(study, t._trial_id, "its worker died", MAX_RETRY)


def interrupt(study, trial_id: int, why: str, max_retry: int | None = None) -> bool:
    """Fail the RUNNING trial ``trial_id`` as interrupted (``why`` in its note) and queue its setting
    again (:func:`~tuner.engine.requeue.requeue`, at most ``max_retry`` times); False, nothing
    queued and nothing raised, when another worker failed it first (or it finished).

    Only the worker whose :func:`fail_running` moved the trial queues it: a reaper, and the trial's
    own worker failing it after a Ctrl-C or a stall, may act on one trial at once (a worker paused
    past the heartbeat grace is reaped by another host while it wakes). The own worker used to queue
    the setting and then ``tell`` FAIL: after the reaper's FAIL landed between its check and its
    tell, the setting was queued twice and the tell raised ``UpdateFinishedTrialError``, on SQLite
    and PostgreSQL alike (QA, qa93; tests/engine/test_interrupt_and_reaper_once.py). Two callers may
    both mark the trial (``status: interrupted``, a note); only the one that fails it queues it."""
    storage = study._storage
    if not mark_interrupted(storage, trial_id, why):
        return False
    if not fail_running(storage, trial_id):
        return False
    requeue(study, storage.get_trial(trial_id), max_retry)
    return True


def _fail_stale(study) -> None:
    """Optuna's ``fail_stale_trials`` (optuna/storages/_heartbeat.py) with :func:`fail_running` for
    its FAIL: each trial whose heartbeat is older than the grace period failed, and the storage's
    stale-trial callback (:class:`tuner.engine.requeue.RetryStaleTrial`) run for the ones failed here.
    So is one whose heartbeat lies that far ahead of the database's clock, stepped back since
    (:func:`tuner.engine.db_clock.beats_ahead`)."""
    import copy

    storage = study._storage
    if storage.get_heartbeat_interval() is None:
        return
    callback = storage.get_heartbeat_stale_trial_callback()
    stale = storage._get_stale_trial_ids(study._study_id)
    if DATABASE_CLOCK.settled(storage):  # a live worker's beat may lie ahead of a clock just stepped back
        stale += [t for t in beats_ahead(storage, study._study_id, HEARTBEAT_GRACE_S) if t not in stale]
    if _recently_away(patient_backend(storage)):
        return  # the storage went away during these reads: the beats it held back are no worker's death
    for trial_id in stale:
        if fail_running(storage, trial_id) and callback is not None:
            callback(study, copy.deepcopy(storage.get_trial(trial_id)))


def fail_running(storage, trial_id: int) -> bool:
    """Fail the trial ``trial_id`` (FAIL, its completion time set) when it is still RUNNING; False when
    another worker failed it first (or it finished): :func:`tuner.engine.asktell.move_state`, one
    conditional UPDATE, so of two workers reaping at once exactly one gets True, on every database.
    Optuna's ``set_trial_state_values`` reads the trial ``FOR UPDATE``, then writes
    (optuna/storages/_rdb/storage.py). SQLite has no ``FOR UPDATE`` and Python's sqlite3 begins the
    transaction at the UPDATE only, so two reapers that both read it RUNNING both failed it and both
    queued its setting (QA, qa92, two real reaper processes: 6 of 100 dead workers' trials, 18 of 100
    stale ones), or the later one read it FAIL and raised ``UpdateFinishedTrialError`` out of the
    reaper, which ended its worker (15 of 100; on PostgreSQL 66 of 100). A retry of a patient storage
    after a commit that landed finds the trial failed by this call: it is this worker's to queue."""
    from optuna.trial import TrialState

    return move_state(storage, trial_id, TrialState.RUNNING, TrialState.FAIL, "datetime_complete")


def try_claim(study, trial, key: str) -> bool:
    """Claim ``key`` for the RUNNING ``trial``; True when no other running trial holds it.

    Claim, then look: every claimant writes its claim before reading the others', so of two racing
    workers at least one sees the other. Whoever sees another claim withdraws its own (and retries
    after a random pause): two workers can never both proceed, and at worst both step back once.
    """
    from optuna.trial import TrialState

    trial.set_user_attr("claim", key)
    running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    if any(t.number != trial.number and t.user_attrs.get("claim") == key for t in running):
        trial.set_user_attr("claim", None)
        return False
    return True



def wait_for_claim(study, key: str) -> None:
    """Wait until no running trial holds ``key`` (it finished, or its worker died)."""
    from optuna.trial import TrialState

    while True:
        reap_dead_trials(study)
        running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        if not any(t.user_attrs.get("claim") == key for t in running):
            time.sleep(random.uniform(0, POLL_S))  # racing claimants must not retry in step
            return
        time.sleep(POLL_S)
