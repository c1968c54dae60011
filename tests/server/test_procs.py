"""Process identity as ``tuner.server.procs`` reads it through psutil: the start time is the kernel's
own tick count (``/proc/PID/stat`` field 22), so records written by earlier runs still match, and a
zombie or reaped child is not alive."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from tuner.server.procs import all_stats, group_members, process_alive, read_stat


def _kernel_start_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        raw = f.read()
    return int(raw[raw.rindex(")") + 2:].split()[19])


def test_start_ticks_are_the_kernels_and_identify_a_process():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
    try:
        st = read_stat(child.pid)
        assert st is not None and st.alive
        assert (st.ppid, st.pgid, st.sid) == (os.getpid(), child.pid, child.pid)
        assert st.start_ticks == _kernel_start_ticks(child.pid)
        assert read_stat(os.getpid()).start_ticks == _kernel_start_ticks(os.getpid())
        assert process_alive(child.pid, st.start_ticks)
        assert not process_alive(child.pid, st.start_ticks + 1)  # another process that reused the pid
        assert not process_alive(child.pid, None)
        assert child.pid in {s.pid for s in all_stats()}
    finally:
        child.kill()
    deadline = time.monotonic() + 10
    while read_stat(child.pid).alive and time.monotonic() < deadline:  # unreaped: a zombie
        time.sleep(0.05)
    zombie = read_stat(child.pid)
    assert zombie is not None and not zombie.alive and not process_alive(child.pid, st.start_ticks)
    child.wait()
    assert read_stat(child.pid) is None


def test_group_members_are_the_whole_tables_live_members_of_the_group():
    """group_members reads only the group's processes (one getpgid(2) tells the others apart): the
    same live members, with the same identities, as the whole table read by all_stats; a zombie
    member, another group's process and a member not listed in ``only`` are not among them."""
    leader = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time\n"
                               "kids = [subprocess.Popen(['sleep', '30']) for _ in range(2)]\n"
                               "kids[1].kill(); print(kids[0].pid, kids[1].pid, flush=True); time.sleep(30)"],
                              start_new_session=True, stdout=subprocess.PIPE, text=True)
    other = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        live, zombie = map(int, leader.stdout.readline().split())
        pgid = leader.pid
        deadline = time.monotonic() + 10
        while read_stat(zombie).alive and time.monotonic() < deadline:  # the leader never reaps it
            time.sleep(0.05)
        members = group_members(pgid)
        assert sorted(st.pid for st in members) == sorted([leader.pid, live])
        # identities, not the run state, which moves between two reads (a flake: 'running' in one,
        # 'sleeping' in the other, the same process)
        ident = lambda st: (st.pid, st.ppid, st.pgid, st.sid, st.start_ticks)  # noqa: E731
        whole = [ident(st) for st in all_stats() if st.pgid == pgid and st.alive]
        assert [ident(st) for st in members] == whole
        assert other.pid not in {st.pid for st in members}
        only = {(st.pid, st.start_ticks) for st in members if st.pid == live}
        assert [st.pid for st in group_members(pgid, only)] == [live]
        assert group_members(pgid, {(live, read_stat(live).start_ticks + 1)}) == []  # a reused pid
    finally:
        os.killpg(leader.pid, 9)
        other.kill()
        leader.wait()
        other.wait()
        leader.stdout.close()
