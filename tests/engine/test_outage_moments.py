"""Storage calls at particular moments of a real PostgreSQL outage (the session's own server,
support.pg.PgCluster, stopped with pg_ctl and started again), each a moment where a worker's
patience (tuner/engine/patience.py) let an error out:

* the reaper's beat on behalf of another live worker of this host, made right after it read the
  running trials, and a tell whose retry found the trial finished and read it back while the server
  was down again: both exited "failed during the command";
* a worker that starts while the server is down: its first checks failed it (exit 1), and opening
  that waited said "does not answer" but never "answers again";
* `tuner launch` whose storage goes down between opening and reading: refused, exit 2 (and on an
  empty database, launch created Optuna's tables, though it writes nothing);
* a connection cut between the two queries of a trial read: the outage line said
  "PendingRollbackError: Can't reconnect until invalid transaction is rolled back", not why;
* and the heartbeat thread, which must never wait.

The server is stopped from a hook on a real call, so the outage begins at that exact moment, and
started again from a thread a couple of seconds later; the storage call under test must wait for it.
"""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import optuna
import pytest
from optuna.storages import RDBStorage
from optuna.trial import TrialState

from tuner.engine.asktell import ask, tell
from tuner.engine.patience import patient_backend
from tuner.engine.storage import open_storage
from tuner.engine import workers
from tuner.engine.workers import Heartbeat, Worker, reap_dead_trials

ROOT = Path(__file__).resolve().parents[2]
DIST = {"x": optuna.distributions.IntDistribution(0, 9)}
#: How long the server stays down: a patient call retries after 0.5, 1, 2 s, so it finds it back.
OUTAGE_S = 2.0


class Outage:
    """Stops the server now and starts it again from a thread ``OUTAGE_S`` later; :meth:`end` waits
    for that."""

    def __init__(self, cluster):
        self.cluster, self.thread, self.error = cluster, None, None

    def begin(self, stopped: bool = False) -> None:
        """Stop the server (unless the test has ``stopped`` it), and start it again soon."""
        if not stopped:
            self.cluster.stop()
        self.thread = threading.Thread(target=self._back, daemon=True)
        self.thread.start()

    def _back(self) -> None:
        time.sleep(OUTAGE_S)
        try:
            self.cluster.start()
        except BaseException as exc:  # noqa: BLE001 - reported by end() in the test's thread
            self.error = exc

    def end(self) -> None:
        assert self.thread is not None, "the outage never began"
        self.thread.join(timeout=120)
        assert self.error is None, self.error


@pytest.fixture
def study(pg_cluster, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "60")
    storage = open_storage(pg_cluster.database(), patient=True)
    yield optuna.create_study(study_name="moments", storage=storage, directions=["maximize"])
    storage.engine.dispose()


def test_the_reapers_beat_for_a_live_worker_waits_out_an_outage(study, pg_cluster, monkeypatch):
    # Another worker of this host (this very process stands in for it: alive) runs a trial. The
    # reaper reads the running trials and beats for that worker; the server goes down in between.
    trial = ask(study, DIST)
    trial.set_user_attr("worker", Worker().as_dict())
    outage = Outage(pg_cluster)
    read = study.get_trials

    def read_then_down(*args, **kwargs):
        trials = read(*args, **kwargs)
        if outage.thread is None:
            outage.begin()
        return trials

    monkeypatch.setattr(study, "get_trials", read_then_down)
    assert reap_dead_trials(study) == []  # before the fix: StorageInternalError from record_heartbeat
    outage.end()
    assert study._storage.get_trial(trial._trial_id).state == TrialState.RUNNING


def test_the_heartbeat_thread_never_waits_out_an_outage(study, pg_cluster, monkeypatch):
    # The beats of the thread fail at once and are tried again; the thread stops when asked, not
    # after the patience (60 s here).
    monkeypatch.setattr(workers, "HEARTBEAT_INTERVAL_S", 1)
    trial = ask(study, DIST)
    with Heartbeat(study._storage, trial._trial_id) as beat:
        pg_cluster.stop()
        time.sleep(3)  # it beats (and fails) meanwhile
    assert not beat._thread.is_alive()
    assert patient_backend(study._storage).recently_unreachable(60)
    pg_cluster.start()


def test_a_tell_found_done_is_checked_patiently(study, pg_cluster, monkeypatch):
    # A tell whose commit landed but whose reply was lost (the driver's error after the commit, as
    # in test_patience.py) is retried; the retry finds the trial finished, and the storage checks it
    # is finished with our values -- while the server has gone down again.
    from sqlalchemy.exc import OperationalError

    original = RDBStorage.set_trial_state_values
    outage = Outage(pg_cluster)
    calls = []

    def commit_then_break(self, trial_id, state, values=None):
        calls.append(state)
        if not state.is_finished():
            return original(self, trial_id, state, values)
        if len([s for s in calls if s.is_finished()]) == 1:
            original(self, trial_id, state, values)
            raise OperationalError("COMMIT", {}, Exception("server closed the connection unexpectedly"))
        try:
            return original(self, trial_id, state, values)
        except optuna.exceptions.UpdateFinishedTrialError:
            outage.begin()  # down again before the finished trial is read back
            raise

    trial = ask(study, DIST)
    monkeypatch.setattr(RDBStorage, "set_trial_state_values", commit_then_break)
    tell(study, trial, [1.5])  # before the fix: StorageInternalError from the check's get_trial
    outage.end()
    stored = study._storage.get_trial(trial._trial_id)
    assert stored.state == TrialState.COMPLETE and stored.values == [1.5]


MODEL_STUDY = """name: starting
search_space: {space}
storage: ${{TUNER_STORAGE}}
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  model: {{profile: dense-27b-tp1, seed: 4, noise: 0.01}}
bench: {{suite: quick}}
sampler: {{seed: 1}}
budget: {{n_trials: 2}}
"""


def test_a_worker_started_during_an_outage_waits_for_the_server(pg_cluster, tmp_path):
    # The checks `study run` makes first (tuner doctor's cheap ones) must not stop a worker that
    # starts while PostgreSQL restarts (a batch job of many nodes): it waits, as its storage calls do.
    url = pg_cluster.database()
    path = tmp_path / "starting.yaml"
    path.write_text(MODEL_STUDY.format(space=ROOT / "search_spaces" / "eagle3.yaml"))
    env = {**os.environ, "TUNER_STORAGE": url, "TUNER_STORAGE_PATIENCE_S": "60", "PYTHONUNBUFFERED": "1"}
    pg_cluster.stop()
    log = tmp_path / "run.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "tuner", "study", "run", str(path), "--workdir",
                                 str(tmp_path / "wd")], stdout=out, stderr=subprocess.STDOUT, env=env,
                                cwd=tmp_path, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while ("does not answer" not in log.read_text() and proc.poll() is None) \
                and time.monotonic() < deadline:
            time.sleep(0.2)
        pg_cluster.start()
        code = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    text = log.read_text()
    assert code == 0, text[-3000:]  # before the fix: exit 1, "error: fail  storage: ... Connection refused"
    assert "does not answer" in text and "Traceback" not in text, text[-3000:]
    assert "done: " in text


def test_a_storage_that_answers_after_the_wait_at_opening_says_so(pg_cluster, monkeypatch):
    # Opening waits for a server that does not answer, and says so (storage_down); once it answers,
    # that is said too, as a running worker's calls say it: not a "does not answer" left standing.
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "60")
    url = pg_cluster.database()
    heard = []
    pg_cluster.stop()
    outage = Outage(pg_cluster)
    outage.begin(stopped=True)
    storage = open_storage(url, patient=True, on_outage=lambda kind, info: heard.append((kind, info)))
    outage.end()
    storage.engine.dispose()
    assert [kind for kind, _ in heard] == ["storage_down", "storage_back"], heard
    assert heard[1][1]["after_s"] > 0 and "***" in heard[1][1]["storage"]


def test_a_launch_whose_storage_fails_mid_read_launches_all_the_same(pg_cluster, tmp_path, monkeypatch):
    # `tuner launch` compares the file with the stored study; a storage it cannot read is no reason
    # to refuse a launch by hand (a warning, and the file is used), whether it is down from the start
    # or goes down between opening and reading.
    from click.testing import CliRunner
    from support.faults import study_file

    from tuner.cli import cli
    from tuner.engine import study as study_module

    url = pg_cluster.database()
    monkeypatch.setenv("TUNER_STORAGE", url)
    path = study_file(tmp_path, "launching", 2)
    created = CliRunner().invoke(cli, ["study", "create", str(path)])
    assert created.exit_code == 0, created.output
    opened = study_module.open_storage

    def open_then_down(*args, **kwargs):
        storage = opened(*args, **kwargs)
        pg_cluster.stop()
        return storage

    monkeypatch.setattr(study_module, "open_storage", open_then_down)
    r = CliRunner().invoke(cli, ["launch", str(path), "--print", "--num-steps", "3", "--topk", "1",
                                 "--draft-tokens", "4"])
    # before the fix: exit 2, "storage ... failed during the command"
    assert r.exit_code == 0, r.output
    assert "warning: cannot read the study's storage" in r.output and "launching from the file" in r.output
    assert "--speculative-num-steps 3" in r.output
    password = url.split(":")[2].split("@")[0]
    assert password not in r.output and "Traceback" not in r.output


def test_a_connection_cut_mid_read_is_said_as_the_driver_said_it(study, pg_cluster, monkeypatch):
    # The server cuts this worker's connection between the two queries of a trial read (an
    # administrator's pg_terminate_backend, as a fast shutdown does to every session): Optuna reads
    # the failure as "too many SQL variables" and queries again on the dead transaction, which
    # SQLAlchemy refuses with PendingRollbackError. The outage line must carry the driver's error,
    # not "Can't reconnect until invalid transaction is rolled back".
    import sqlalchemy as sa
    from optuna.storages._rdb import models

    from tuner.engine.storage import driver_url

    heard = []
    patient_backend(study._storage).on_outage = lambda kind, info: heard.append((kind, info))
    ask(study, DIST)
    find = models.StudyModel.find_or_raise_by_id.__func__
    cut = []

    def find_then_cut(cls, study_id, session, *args, **kwargs):
        found = find(cls, study_id, session, *args, **kwargs)
        if not cut:
            pid = session.connection().connection.driver_connection.get_backend_pid()
            admin = sa.create_engine(driver_url(pg_cluster.url), poolclass=sa.pool.NullPool)
            with admin.connect() as conn:
                cut.append(conn.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": pid}).scalar())
            admin.dispose()
        return found

    monkeypatch.setattr(models.StudyModel, "find_or_raise_by_id", classmethod(find_then_cut))
    assert len(study.get_trials(deepcopy=False)) == 1  # waited out, read again
    assert cut == [True]
    down = [info["error"] for kind, info in heard if kind == "storage_down"]
    # the driver's error (psycopg2: "server closed the connection unexpectedly"), as for any cut
    assert down and down[0].startswith("OperationalError: ") and "PendingRollbackError" not in down[0], down


def test_a_launch_on_an_empty_database_writes_nothing(pg_cluster, tmp_path, monkeypatch):
    # Launch reads the storage only (README): a PostgreSQL database no study was created in holds no
    # study to compare with, and opening it as a storage would create Optuna's tables in it.
    import sqlalchemy as sa
    from click.testing import CliRunner
    from support.faults import study_file

    from tuner.cli import cli
    from tuner.engine.storage import driver_url

    url = pg_cluster.database()
    monkeypatch.setenv("TUNER_STORAGE", url)
    path = study_file(tmp_path, "empty", 2)
    r = CliRunner().invoke(cli, ["launch", str(path), "--print", "--baseline"])
    assert r.exit_code == 0 and "--sim-profile" in r.output and "warning" not in r.output, r.output
    engine = sa.create_engine(driver_url(url), poolclass=sa.pool.NullPool)
    try:
        assert sa.inspect(engine).get_table_names() == []  # before the fix: Optuna's 13 tables
    finally:
        engine.dispose()


@pytest.mark.parametrize("command", [["study", "list"], ["study", "status", "empty"],
                                     ["study", "export", "empty", "--pick", "knee"]])
def test_a_read_command_on_an_empty_database_writes_nothing(pg_cluster, tmp_path, monkeypatch, command):
    # Read commands open the storage with create=False: "no such storage", as for a missing SQLite
    # file, and no Optuna tables made in a database no study was created in (QA: launch made 13).
    import sqlalchemy as sa
    from click.testing import CliRunner

    from tuner.cli import cli
    from tuner.engine.storage import driver_url

    url = pg_cluster.database()
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, [*command, "--storage", url])
    engine = sa.create_engine(driver_url(url), poolclass=sa.pool.NullPool)
    try:
        assert sa.inspect(engine).get_table_names() == [], r.output  # before the fix: Optuna's 13
    finally:
        engine.dispose()
    assert r.exit_code == 2 and "no such storage" in r.output and "Traceback" not in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1, r.output
