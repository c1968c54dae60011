"""A study made anew under its name while the worker's storage was away (its SQLite file moved away
during a trial's suite, a new study created in its place): the worker stores nothing into the new
study; it stops with one line, its measurement kept in the journal (tuner.engine.trial, the check
of the study before the finish's first write).

QA, qa205: the check of the study before the journal entry is skipped while the storage is away (it
must not hold the measurement up), and the finish, retried until the file was back, then wrote into
the new study: the old study's measurement, judged against the deleted study's baseline, became a
measured trial of the new study (re-homed, its own trial id a queued seed's there), exit 1 only at
the next trial. On PostgreSQL (a worker cut off from the server while the study was deleted and made
anew), whose new study takes new ids, it ended in a traceback (KeyError 'Record does not exist.')."""

import socket
import threading

import optuna
import pytest
import sqlalchemy as sa
from optuna.trial import TrialState
from support.cli_in_process import tuner_here
from support.faults import fault_env, fault_zygote, slow_start, study_file, trial_server_up, wait_for
from support.forked_tuner import start_forked
from support.processes import finish

from tuner.engine.storage import driver_url

REPLACED = ("error: study again was deleted while this worker ran (tuner study delete); the server is stopped, "
            "and a measurement it journaled is never stored into another study of that name")


@pytest.fixture(scope="module")
def zygote(tmp_path_factory):
    z = fault_zygote(tmp_path_factory)  # this file's workers forked from it, a second of imports saved each
    yield z
    z.close()


def test_a_study_made_anew_while_the_storage_was_away_gets_nothing_of_the_worker(tmp_path, zygote):
    db = tmp_path / "again.db"
    path = study_file(tmp_path, "again", 3, storage=f"sqlite:///{db}")
    # Servers start 3 s late: the file is moved away while trial 0's server starts, long before its suite
    # ends, however loaded the machine
    slow_start(path, 3).touch()
    workdir = tmp_path / "wd"
    created = tuner_here("study", "create", str(path), cwd=tmp_path, env=fault_env())
    assert created.exit_code == 0, created.stdout + created.stderr
    log = tmp_path / "run.log"
    proc = start_forked(zygote, ["study", "run", str(path), "--workdir", str(workdir)], fault_env(), tmp_path,
                        log)
    journal = workdir / "journal"
    try:
        number = wait_for(lambda: trial_server_up(workdir), 180, "a trial's server", [proc])
        db.rename(tmp_path / "away.db")  # the storage is away: the worker measures on
        entries = wait_for(lambda: sorted(journal.glob("*.json")) or None, 120, "the journal entry", [proc])
        # the create is the fault, not under test: in this process, with the worker's environment
        again = tuner_here("study", "create", str(path), cwd=tmp_path, env=fault_env())
        assert again.exit_code == 0, again.stdout + again.stderr
        code = proc.wait(timeout=200)
    finally:
        finish(proc)
    out = log.read_text()
    assert code == 1 and "Traceback" not in out, out[-3000:]
    assert [line for line in out.splitlines() if line.startswith("error:")] == [REPLACED], out[-3000:]
    # The new study holds its queued seeds as `create` left them, and nothing of the old worker's.
    study = optuna.load_study(study_name="again", storage=f"sqlite:///{db}")
    assert [t.state for t in study.trials] == [TrialState.WAITING] * len(study.trials), \
        [(t.number, t.state.name, t.user_attrs) for t in study.trials]
    assert all(set(t.user_attrs) <= {"seed"} for t in study.trials), [t.user_attrs for t in study.trials]
    # Nothing measured is lost: the measurement waits in the journal (the new study's next run sets
    # it aside, as an earlier study's).
    assert [e.name for e in entries] == [e.name for e in sorted(journal.glob("*.json"))], out[-3000:]
    assert entries[0].name.startswith(f"again-{number}-"), entries


class Severable:
    """A TCP relay to ``127.0.0.1:target`` on a port of its own: :meth:`sever` cuts every connection
    through it and refuses new ones (a node cut off from the database server), :meth:`restore` lets
    them through again."""

    def __init__(self, target: int):
        self.target, self.cut, self.lock, self.pairs = target, threading.Event(), threading.Lock(), []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return  # closed
            if self.cut.is_set():
                client.close()
                continue
            try:
                server = socket.create_connection(("127.0.0.1", self.target))
            except OSError:
                client.close()
                continue
            with self.lock:
                self.pairs.append((client, server))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()  # the other direction's recv then ends too

    def sever(self) -> None:
        self.cut.set()
        with self.lock:
            pairs, self.pairs = self.pairs, []
        for pair in pairs:
            for s in pair:
                try:
                    s.shutdown(socket.SHUT_RDWR)  # its pipes end, and close it
                except OSError:
                    pass

    def restore(self) -> None:
        self.cut.clear()

    def close(self) -> None:
        self.sever()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept
        except OSError:
            pass
        self.sock.close()


def test_a_study_made_anew_while_the_worker_was_cut_off_from_postgresql_is_one_line(tmp_path, pg_url, zygote):
    direct = sa.engine.make_url(pg_url)
    relay = Severable(direct.port)
    try:
        through = direct.set(host="127.0.0.1", port=relay.port).render_as_string(hide_password=False)
        path = study_file(tmp_path, "again", 3, storage=through)
        slow_start(path, 3).touch()
        (tmp_path / "direct").mkdir()
        anew = study_file(tmp_path / "direct", "again", 3, storage=pg_url)  # the other nodes' view
        workdir = tmp_path / "wd"
        created = tuner_here("study", "create", str(path), cwd=tmp_path, env=fault_env())
        assert created.exit_code == 0, created.stdout + created.stderr
        log = tmp_path / "run.log"
        proc = start_forked(zygote, ["study", "run", str(path), "--workdir", str(workdir)], fault_env(), tmp_path,
                            log)
        journal = workdir / "journal"
        try:
            number = wait_for(lambda: trial_server_up(workdir), 180, "a trial's server", [proc])
            relay.sever()  # this worker is cut off; the database answers the others
            entries = wait_for(lambda: sorted(journal.glob("*.json")) or None, 120, "the journal entry", [proc])
            for argv in (["study", "delete", str(anew), "--yes", "--force"], ["study", "create", str(anew)]):
                done = tuner_here(*argv, cwd=tmp_path, env=fault_env())
                assert done.exit_code == 0, done.stdout + done.stderr
            relay.restore()
            code = proc.wait(timeout=200)
        finally:
            finish(proc)
    finally:
        relay.close()
    out = log.read_text()
    assert code == 1 and "Traceback" not in out, out[-3000:]
    assert [line for line in out.splitlines() if line.startswith("error:")] == [REPLACED], out[-3000:]
    study = optuna.load_study(study_name="again", storage=driver_url(pg_url))
    assert [t.state for t in study.trials] == [TrialState.WAITING] * len(study.trials), \
        [(t.number, t.state.name, t.user_attrs) for t in study.trials]
    assert all(set(t.user_attrs) <= {"seed"} for t in study.trials), [t.user_attrs for t in study.trials]
    assert [e.name for e in entries] == [e.name for e in sorted(journal.glob("*.json"))], out[-3000:]
    assert entries[0].name.startswith(f"again-{number}-"), entries
