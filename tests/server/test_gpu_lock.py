"""The host-wide GPU lock (tuner.server.gpu_lock) with real processes: holders are child processes
that take a lock, say ``HOLD``, and let it go when told (a line on stdin); one launch test goes
through the real launcher with ``server.backend: sglang`` and the stand-in server.

Nothing here measures speed: every wait polls with a generous timeout, and "still waiting" is
shown by the waiter's own line on stderr, written when it found the lock taken."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from support.processes import STARTED_GROUPS
from support.standin import standin_python

from tuner.config.study import ServerSettings
from tuner.server.gpu_lock import GpuLock, lock_names, visible_gpus
from tuner.server.launcher import ServerProcess
from tuner.server.ports import pick_free_port

PY = sys.executable
ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 90.0  # a loaded 2-core machine: generous, never a measure of speed

HOLDER = textwrap.dedent("""\
    import json, signal, sys
    from tuner.server.gpu_lock import GpuLock
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C, even if the test run ignores it
    lock = GpuLock(json.loads(sys.argv[1]), directory=sys.argv[2], study="demo", poll_s=0.05)
    try:
        lock.acquire()
    except KeyboardInterrupt:
        print("INTERRUPTED held=%s" % lock.held, flush=True)
        sys.stdin.readline()  # alive, so that what it still held would show
        sys.exit(3)
    print("HOLD", flush=True)
    sys.stdin.readline()
    lock.release()
    print("RELEASED", flush=True)
""")


class Child:
    """A child process whose stdout and stderr lines are collected as they come."""

    def __init__(self, argv: list[str], env: dict | None = None):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                     env={**os.environ, **(env or {})})
        self.out: list[str] = []
        self.err: list[str] = []
        self._threads = [threading.Thread(target=self._read, args=(s, into), daemon=True)
                         for s, into in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]
        for t in self._threads:
            t.start()

    @staticmethod
    def _read(stream, into: list[str]) -> None:
        for line in stream:
            into.append(line.rstrip("\n"))

    @property
    def pid(self) -> int:
        return self.proc.pid

    def said(self, word: str, where: str = "out") -> bool:
        return any(word in line for line in (self.out if where == "out" else self.err))

    def wait_for(self, word: str, where: str = "out", timeout_s: float = TIMEOUT) -> None:
        deadline = time.monotonic() + timeout_s
        while not self.said(word, where):
            if self.proc.poll() is not None and not self.said(word, where):
                for t in self._threads:
                    t.join(5)
                if self.said(word, where):
                    return
                raise AssertionError(f"exited {self.proc.returncode} without {word!r}: {self.out} {self.err}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no {word!r} after {timeout_s} s: {self.out} {self.err}")
            time.sleep(0.05)

    def tell(self, line: str = "go") -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def finish(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        for t in self._threads:
            t.join(5)
        for s in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            s.close()


@pytest.fixture
def children():
    made: list[Child] = []
    yield made
    for c in made:
        c.finish()


@pytest.fixture
def locks(tmp_path) -> Path:
    return tmp_path / "locks"


def holder(children, tmp_path, locks, gpus, env: dict | None = None, extra: tuple[str, ...] = ()) -> Child:
    script = tmp_path / "holder.py"
    script.write_text(HOLDER)
    c = Child([PY, str(script), json.dumps(gpus), str(locks), *extra], env)
    children.append(c)
    return c


#: GPU UUIDs of the fake node nvidia_smi_on_path describes (index: UUID)
UUIDS = {"0": "GPU-8f3c2a10-1111-2222-3333-444455556666", "1": "GPU-0b7d9e21-aaaa-bbbb-cccc-ddddeeeeffff",
         "2": "GPU-5e6f7a8b-1234-5678-9abc-def012345678", "3": "GPU-3f1c0d2e-9999-8888-7777-666655554444"}


def nvidia_smi_on_path(tmp_path: Path, answer: bool = True) -> dict:
    """The seam for GPU UUIDs: a fake ``nvidia-smi`` first on PATH (``answer=False``: one that fails,
    as on a node whose driver does not answer); the environment for a child process."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir(exist_ok=True)
    rows = "".join(f"{i}, {u}\\n" for i, u in UUIDS.items())
    body = f"printf '{rows}'" if answer else "echo 'NVIDIA-SMI has failed' >&2; exit 9"
    (bin_dir / "nvidia-smi").write_text(f"#!/bin/sh\n{body}\n")
    (bin_dir / "nvidia-smi").chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_disjoint_sets_are_held_at_once(children, tmp_path, locks):
    env = nvidia_smi_on_path(tmp_path)
    a = holder(children, tmp_path, locks, ["0", "1"], env)
    a.wait_for("HOLD")
    b = holder(children, tmp_path, locks, ["2", UUIDS["3"]], env)
    b.wait_for("HOLD")  # while a still holds 0 and 1
    assert not a.said("RELEASED") and not b.said("waiting", "err")


@pytest.mark.parametrize("by_uuid", [UUIDS["1"], "GPU-0b7d9e21"], ids=["uuid", "uuid-prefix"])
def test_one_gpu_named_by_index_and_by_uuid_is_one_lock(children, tmp_path, locks, by_uuid):
    # QA: CUDA_VISIBLE_DEVICES=1 and CUDA_VISIBLE_DEVICES=<GPU 1's UUID> (or a unique prefix of it,
    # which CUDA accepts) took gpu-1.lock and gpu-GPU-....lock: both tuners held GPU 1 at once.
    env = nvidia_smi_on_path(tmp_path)
    a = holder(children, tmp_path, locks, ["1"], env)
    a.wait_for("HOLD")
    b = holder(children, tmp_path, locks, [by_uuid], env)
    b.wait_for(f"waiting for GPUs {by_uuid}: another tuner holds them (pid {a.pid}:", "err")
    assert not b.said("HOLD")
    a.tell()
    b.wait_for("HOLD")
    c = holder(children, tmp_path, locks, ["1"], env)  # and the other way round
    c.wait_for(f"waiting for GPUs 1: another tuner holds them (pid {b.pid}:", "err")


def test_a_uuid_without_nvidia_smi_locks_every_gpu_and_says_so(children, tmp_path, locks):
    # Which index a UUID is cannot be told: the lock is taken on every GPU of the node (safe: never
    # two servers on one GPU), with one line saying why and how to lock fewer.
    for answer in (False, None):  # nvidia-smi failing; nvidia-smi absent (PATH without it)
        env = nvidia_smi_on_path(tmp_path, answer=False) if answer is False else {"PATH": str(tmp_path / "empty")}
        a = holder(children, tmp_path, locks, ["3"], env)
        a.wait_for("HOLD")
        b = holder(children, tmp_path, locks, [UUIDS["0"]], env)
        b.wait_for(f"GPU lock: cannot tell which GPU index {UUIDS['0']} is (nvidia-smi", "err")
        b.wait_for(f"waiting for GPUs {UUIDS['0']}: another tuner holds them (pid {a.pid}:", "err")
        note = next(x for x in b.err if x.startswith("GPU lock:"))
        assert note.endswith("taking the lock on every GPU of the node; name GPUs by index in "
                             "CUDA_VISIBLE_DEVICES to lock only those"), note
        a.tell()
        b.wait_for("HOLD")
        b.tell()
        b.wait_for("RELEASED")


def test_an_overlapping_set_waits_for_the_holder_named_in_its_line(children, tmp_path, locks):
    a = holder(children, tmp_path, locks, ["0", "1"])
    a.wait_for("HOLD")
    b = holder(children, tmp_path, locks, ["2", "1"])
    b.wait_for("waiting for GPUs 2,1: another tuner holds them", "err")
    line = next(x for x in b.err if "waiting" in x)
    assert f"(pid {a.pid}: holder.py " in line and "study demo" in line
    assert not b.said("HOLD")  # it said it waits, so it had found the lock taken
    a.tell()
    a.wait_for("RELEASED")
    b.wait_for("HOLD")
    assert sum("waiting" in x for x in b.err) == 1  # said once, however long it waited


def test_the_waiting_line_shows_the_holder_s_command_quoted_and_without_a_password(children, tmp_path, locks):
    # QA: the line printed the holder's argv joined raw: "tuner study run my study.yaml --storage
    # postgresql://tuner:s3cret@db/optuna" -- the storage password on the waiter's screen and in its
    # log (and in the lock file, readable by every user), and an argument with a space unreadable.
    extra = ("study", "run", "my study.yaml", "--storage", "postgresql://tuner:s3cret@db.example/optuna",
             "--storage=postgresql://u:p@ss@db/x?sslpassword=k3y&sslmode=require")
    a = holder(children, tmp_path, locks, ["0"], extra=extra)
    a.wait_for("HOLD")
    assert "s3cret" not in (locks / "gpu-0.lock").read_text()
    b = holder(children, tmp_path, locks, ["0"])
    b.wait_for("waiting for GPUs 0", "err")
    line = next(x for x in b.err if "waiting" in x)
    assert "s3cret" not in line and "p@ss" not in line and "k3y" not in line, line
    assert (" study run 'my study.yaml' --storage 'postgresql://tuner:***@db.example/optuna' "
            "'--storage=postgresql://u:***@db/x?sslpassword=***&sslmode=require'; study demo)") in line, line


def test_all_excludes_an_explicit_set(children, tmp_path, locks):
    a = holder(children, tmp_path, locks, None)
    a.wait_for("HOLD")
    b = holder(children, tmp_path, locks, ["5"])
    b.wait_for(f"waiting for GPUs 5: another tuner holds them (pid {a.pid}:", "err")
    a.tell()
    b.wait_for("HOLD")


def test_an_explicit_set_excludes_all(children, tmp_path, locks):
    a = holder(children, tmp_path, locks, ["3"])
    a.wait_for("HOLD")
    b = holder(children, tmp_path, locks, None)
    b.wait_for(f"waiting for GPUs all (CUDA_VISIBLE_DEVICES unset): another tuner holds them (pid {a.pid}:",
               "err")
    a.tell()
    b.wait_for("HOLD")
    c = holder(children, tmp_path, locks, ["4"])  # and now `all` excludes every explicit set
    c.wait_for("waiting for GPUs 4", "err")
    b.tell()
    c.wait_for("HOLD")


def test_a_holder_killed_with_sigkill_lets_go_at_once(children, tmp_path, locks):
    a = holder(children, tmp_path, locks, ["0"])
    a.wait_for("HOLD")
    b = holder(children, tmp_path, locks, ["0"])
    b.wait_for("waiting for GPUs 0", "err")
    os.kill(a.pid, signal.SIGKILL)
    a.proc.wait(timeout=30)
    b.wait_for("HOLD")  # no stale lock: the kernel let it go with the process


def test_ctrl_c_stops_the_wait_and_lets_go_of_what_was_taken(children, tmp_path, locks):
    a = holder(children, tmp_path, locks, ["0"])
    a.wait_for("HOLD")
    b = holder(children, tmp_path, locks, ["0"])  # holds `all` shared while it waits for 0
    b.wait_for("waiting for GPUs 0", "err")
    b.proc.send_signal(signal.SIGINT)
    b.wait_for("INTERRUPTED held=False")
    a.tell()
    a.wait_for("RELEASED")
    c = holder(children, tmp_path, locks, None)  # b, still alive, kept nothing: not `all` shared
    c.wait_for("HOLD")
    b.tell()
    assert b.proc.wait(timeout=30) == 3


def test_folder_and_files_are_open_to_every_user(locks):
    with GpuLock(["0"], directory=locks) as lock:
        assert lock.held
        assert stat.S_IMODE(locks.stat().st_mode) == 0o1777
        for name in ("all.lock", "gpu-0.lock"):
            assert stat.S_IMODE((locks / name).stat().st_mode) == 0o666
        assert json.loads((locks / "gpu-0.lock").read_text())["pid"] == os.getpid()
    assert not lock.held and (locks / "gpu-0.lock").read_text() == ""  # no name left behind


def test_which_gpus(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert visible_gpus({}) is None
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "GPU-ab12, 1"}) == ("GPU-ab12", "1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert visible_gpus(None) == ("2", "3")
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": "0"}) == ("0",)  # server.env over the tuner's own
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": ""}) == ()  # no GPU shown to the server: no lock
    assert GpuLock((), directory="/nonexistent").plan() == []


def test_lock_names_read_uuids_as_indices_and_nothing_else():
    table = {u: i for i, u in UUIDS.items()}

    def never():
        raise AssertionError("nvidia-smi asked with no UUID given")

    assert lock_names(["1", "0"], never) == (("1", "0"), None)  # indices only: nvidia-smi not run
    assert lock_names(["00", "01"], never) == (("0", "1"), None)  # CUDA reads a number: GPU 0 is "00" too
    assert lock_names(["MIG-5c1d2e3f"], never) == (("MIG-5c1d2e3f",), None)  # MIG ids as written
    assert lock_names([UUIDS["2"], "GPU-3f1c", "0"], lambda: table) == (("2", "3", "0"), None)
    # a UUID no GPU of the node has, or a prefix several share ("GPU-" is every one's): as written
    assert lock_names(["GPU-ffff", "GPU-"], lambda: table) == (("GPU-ffff", "GPU-"), None)
    names, note = lock_names(["0", UUIDS["1"]], lambda: None)
    assert names is None and note.startswith(f"GPU lock: cannot tell which GPU index {UUIDS['1']} is")


# --------------------------------------------------------------------------------------------------
# Through the launcher: backend sglang, with the stand-in for SGLang

SECOND = textwrap.dedent("""\
    import json, sys
    from tuner.config.study import ServerSettings
    from tuner.server.launcher import ServerProcess
    server = ServerSettings.model_validate(json.loads(sys.argv[1]))
    srv = ServerProcess(server, None, workdir=sys.argv[2], port=0, study="second")
    try:
        srv.start()
        print("LAUNCHED %d %f" % (srv.pid, srv.gpu_wait_s), flush=True)
        srv.wait_ready()
        print("READY", flush=True)
        sys.stdin.readline()
    finally:
        srv.stop()
    print("STOPPED", flush=True)
""")


def sglang_settings(tmp_path) -> dict:
    return {"backend": "sglang", "python": str(standin_python(tmp_path)), "model_path": "org/model",
            "tp_size": 1, "host": "127.0.0.1", "startup_timeout_s": 120, "stop_grace_s": 10,
            "env": {"CUDA_VISIBLE_DEVICES": "0,1"}}


def test_a_second_launcher_waits_until_the_first_server_has_stopped(children, tmp_path):
    data = sglang_settings(tmp_path)
    first = ServerProcess(ServerSettings.model_validate(data), None, workdir=tmp_path / "w1",
                          port=pick_free_port("127.0.0.1"), study="first")
    try:
        first.start()
        STARTED_GROUPS.add(first.pgid)
        first.wait_ready()
        assert first.gpu_lock is not None and first.gpu_lock.held and first.gpu_wait_s == 0
        script = tmp_path / "second.py"
        script.write_text(SECOND)
        second = Child([PY, str(script), json.dumps(data), str(tmp_path / "w2")])
        children.append(second)
        second.wait_for("waiting for GPUs 0,1: another tuner holds them", "err")
        line = next(x for x in second.err if "waiting for GPUs" in x)
        assert f"(pid {os.getpid()}:" in line and "study first" in line
        assert not second.said("LAUNCHED")  # nothing launched while the first server runs
        first_pid = first.pid
        first.stop()
        assert first.returncode is not None and not first.gpu_lock.held
        second.wait_for("READY")
        launched = next(x for x in second.out if x.startswith("LAUNCHED")).split()
        STARTED_GROUPS.add(int(launched[1]))
        assert int(launched[1]) != first_pid and float(launched[2]) > 0  # it waited, then launched
        second.tell()
        second.wait_for("STOPPED")
        assert second.proc.wait(timeout=60) == 0
    finally:
        first.stop()


def test_sim_backend_takes_no_lock(tmp_path):
    data = {**sglang_settings(tmp_path), "backend": "sim"}
    srv = ServerProcess(ServerSettings.model_validate(data), None, workdir=tmp_path / "w",
                        port=pick_free_port("127.0.0.1"))
    with GpuLock(["0", "1"], directory=os.environ["TUNER_GPU_LOCK_DIR"]):  # would block an sglang launch
        try:
            srv.start()
            STARTED_GROUPS.add(srv.pgid)
            assert srv.gpu_lock is None
        finally:
            srv.stop()
