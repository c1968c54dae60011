"""Edges of a server's record and log (tuner/server/launcher.py, tuner/server/orphans.py): a group that
would not die keeps its record, for a later cleanup to retry, whether a stop or an orphan cleanup
found it so; and a log of exactly ``server.log_max_mb`` is rotated at the next launch.

"Would not die" (a process in uninterruptible sleep, which SIGKILL cannot end) cannot be made by an
unprivileged test: ``terminate_group`` is wrapped to stop the group for real and then report it alive,
which is all the launcher and the cleanup see of such a group."""

from __future__ import annotations

import sys

from support.processes import STARTED_GROUPS

from tuner.server import launcher, orphans
from tuner.server.launcher import ServerProcess
from tuner.server.logcap import MIB
from tuner.server.orphans import cleanup_orphans, list_records, records_dir
from tuner.server.ports import pick_free_port
from tuner.server.procs import terminate_group

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]


def reported_alive(*args, **kwargs) -> bool:
    terminate_group(*args, **kwargs)
    return False


def sleeper(tmp_path, **kw) -> ServerProcess:
    return ServerProcess.from_argv(SLEEPER, host="127.0.0.1", port=pick_free_port("127.0.0.1"),
                                   log_path=tmp_path / "s.log", workdir=tmp_path, stop_grace_s=2, **kw)


def test_a_stop_that_leaves_the_group_alive_keeps_its_record(tmp_path, monkeypatch):
    srv = sleeper(tmp_path).start()
    STARTED_GROUPS.add(srv.pgid)
    assert srv.record is not None and srv.record.path.exists()
    monkeypatch.setattr(launcher, "terminate_group", reported_alive)
    srv.stop()
    assert srv.record.path.exists() and [r.pid for r in list_records(tmp_path)] == [srv.pid]


def test_an_orphan_group_that_would_not_die_keeps_its_record_and_is_not_reported_stopped(tmp_path, monkeypatch):
    srv = sleeper(tmp_path).start()
    STARTED_GROUPS.add(srv.pgid)
    record = srv.record
    # its tuner is gone: the record names an owner that is not running
    record.owner_pid, record.owner_start_ticks = 0, 0
    record.save(records_dir(tmp_path))
    try:
        monkeypatch.setattr(orphans, "terminate_group", reported_alive)
        assert cleanup_orphans(tmp_path, port_wait_s=1) == []
        assert record.path.exists()
    finally:
        srv.stop()


def test_a_log_of_exactly_the_cap_is_moved_aside_at_the_next_launch(tmp_path):
    log = tmp_path / "s.log"
    log.write_bytes(b"x" * MIB)  # exactly server.log_max_mb = 1
    srv = sleeper(tmp_path, log_max_mb=1).start()
    STARTED_GROUPS.add(srv.pgid)
    srv.stop()
    assert log.with_name("s.log.1").read_bytes() == b"x" * MIB
    assert log.read_bytes().startswith(b"# tuner: ")
