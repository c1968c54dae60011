"""Two workers forced to the same moment: each held right before a statement until the other is there
too (an SQLAlchemy ``before_cursor_execute`` hook as a barrier), then let go together; each worker has
a storage (an engine) of its own, as a process does.

    barrier = threading.Barrier(2)
    for study in workers:
        hold_before(study._storage._backend.engine, barrier, lambda sql: sql.startswith("UPDATE TRIALS"))
    results, errors = run_together([lambda: ask(workers[0]), lambda: ask(workers[1])])

or one worker held right before a statement until another has done a whole step (:func:`hold_until`).
"""

from __future__ import annotations

import threading
from typing import Callable


def hold_before(engine, barrier: threading.Barrier, matches: Callable[[str], bool]) -> None:
    """Hold this engine's first statement that ``matches`` (its text upper-cased, spaces collapsed)
    until every party of ``barrier`` has reached one (120 s at most: a worker that never gets there
    breaks the barrier, which the test asserts against)."""
    held = []

    def before(conn, cursor, statement, parameters, context, executemany):
        if not held and not barrier.broken and matches(" ".join(statement.split()).upper()):
            held.append(statement)
            try:
                barrier.wait(timeout=120)
            except threading.BrokenBarrierError:
                pass  # the other worker never got there: surfaced by the test (barrier.broken)

    import sqlalchemy as sa

    sa.event.listen(engine, "before_cursor_execute", before)


def hold_until(engine, done: threading.Event, matches: Callable[[str], bool],
               here: threading.Event | None = None) -> list[str]:
    """Hold this engine's first statement that ``matches`` until ``done`` is set (120 s at most),
    setting ``here`` as it stops: another worker's whole step lands between this one's check and
    its write. Returns the list that gets the statement held (empty: this worker never got there)."""
    held: list[str] = []

    def before(conn, cursor, statement, parameters, context, executemany):
        if not held and matches(" ".join(statement.split()).upper()):
            held.append(statement)
            if here is not None:
                here.set()
            done.wait(timeout=120)

    import sqlalchemy as sa

    sa.event.listen(engine, "before_cursor_execute", before)
    return held


def run_together(calls: list[Callable[[], object]]) -> tuple[list, list[BaseException]]:
    """Run each of ``calls`` in a thread of its own, all at once; returns what each returned (None
    for one that raised) and the exceptions raised."""
    results: list = [None] * len(calls)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            results[i] = calls[i]()
        except BaseException as exc:  # noqa: BLE001 - returned to the test
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    return results, errors


def beat_an_hour_ago(storage) -> None:
    """Set every trial's last heartbeat in ``storage`` (an RDB storage) an hour back: stale to every
    other worker, whatever the grace (a worker paused, or cut off, that long)."""
    import sqlalchemy as sa

    engine = getattr(storage, "_backend", storage).engine
    ago = ("datetime('now', '-1 hour')" if engine.dialect.name == "sqlite"
           else "CAST(now() AS TIMESTAMP) - INTERVAL '1 hour'")
    with engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE trial_heartbeats SET heartbeat = {ago}"))


def another_hosts_stale_trial(study, params: dict, distributions: dict):
    """Queue ``params``, start the trial (``ask``) and make it another host's worker's whose last
    heartbeat was an hour ago (:func:`beat_an_hour_ago`); returns the trial."""
    from tuner.engine.asktell import ask

    study.enqueue_trial(params)
    trial = ask(study, distributions)
    trial.set_user_attr("worker", {"host": "another-node", "pid": 1, "start": 1})
    study._storage.record_heartbeat(trial._trial_id)
    beat_an_hour_ago(study._storage)
    return trial
