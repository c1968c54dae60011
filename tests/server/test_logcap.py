"""The server log's cap (``server.log_max_mb``, :mod:`tuner.server.logcap`) with real child processes:
a flooding server's log stays near its cap while it runs and under it after, keeping its head, a
marker and its last lines; the server is never slowed or blocked by the tuner (it writes the file
itself), even with the tuner SIGSTOPped; a normal log is byte for byte what the server wrote."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from support.processes import STARTED_GROUPS, finish, kill_if_left

from tuner.server.launcher import ServerProcess
from tuner.server.logcap import MIB, capped_copy, trim
from tuner.server.ports import pick_free_port

PY = sys.executable
ROOT = Path(__file__).resolve().parents[2]
LINE = b"flood %09d " + b"x" * 80 + b"\n"  # 97 bytes a line

# A stand-in server that floods its stdout (the log) as fast as it can: N lines, in bursts of
# argv[4] lines (one burst without it), each begun once the file is back under CAP bytes; then its
# last lines (saying whether every burst found the file back under the cap: the cap holds while it
# runs), then it idles or exits. In BURST-line bursts (9.7 MB, many times the cap) the file's largest
# size is the cap and one burst, whatever the machine's load; one unbroken flood overshot by however
# much it wrote while a loaded machine left the watcher thread unscheduled (36-47 MB, 5 of 60 runs).
BURST = 100_000
FLOODER = textwrap.dedent("""\
    import os, sys, time
    n, cap, idle = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    burst = int(sys.argv[4]) if len(sys.argv) > 4 else n
    out = sys.stdout.buffer
    out.write(b"startup: server_args=ServerArgs(model_path='org/model', tp_size=8)\\n")
    out.write(b"startup: model loaded\\n")
    out.flush()
    line = b"flood %09d " + b"x" * 80 + b"\\n"
    deadline = time.monotonic() + 60  # bounded: without a cap it gives up and says so
    under = True
    for start in range(0, n, burst):
        for i in range(start, min(n, start + burst)):
            out.write(line % i)
        out.flush()
        while os.fstat(1).st_size > cap and time.monotonic() < deadline:
            time.sleep(0.01)
        under = under and os.fstat(1).st_size <= cap
    out.write(b"under the cap again: %d\\n" % under)
    out.write(b"last line 1\\nlast line 2: Traceback (most recent call last)\\n")
    out.flush()
    time.sleep(idle)
    """)


def wait_until(cond, timeout_s=30.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return cond()


def launch(tmp_path, argv, max_mb) -> ServerProcess:
    srv = ServerProcess.from_argv(argv, host="127.0.0.1", port=pick_free_port("127.0.0.1"),
                                  log_path=tmp_path / "trials" / "3" / "server.log", workdir=tmp_path,
                                  log_max_mb=max_mb)
    srv.start()
    STARTED_GROUPS.add(srv.pgid)
    return srv


def test_a_flooding_server_s_log_stays_capped_with_its_head_a_marker_and_its_last_lines(tmp_path):
    """QA: a server printing without pause wrote 1.2 GB in 4 s into its uncapped log."""
    script = tmp_path / "flooder.py"
    script.write_text(FLOODER)
    cap = 1 * MIB
    n = 800_000  # 77.6 MB: 74 times the cap
    srv = launch(tmp_path, [PY, str(script), str(n), str(cap), "0", str(BURST)], 1)
    try:
        sizes = []
        while srv.proc.poll() is None and len(sizes) < 200_000:  # bounded: the flooder exits on its own
            sizes.append(os.path.getsize(srv.log_path))
            time.sleep(0.005)
        assert srv.proc.wait(timeout=120) == 0  # never blocked: it wrote all its lines and exited
        tail = srv.log_tail(3)
    finally:
        srv.stop()
    data = srv.log_path.read_bytes()
    # Trimmed while it ran: after each of its 8 bursts it found its own log back under the cap, so
    # the file never held more than the cap and one burst of the 77.6 MB written.
    assert b"under the cap again: 1\n" in data
    assert max(sizes) < cap + BURST * len(LINE % 0) + 64 * 1024, max(sizes)
    assert len(data) <= cap  # after the stop: what the artifact store copies
    lines = data.splitlines()
    assert lines[0].startswith(b"# tuner: ") and b" launch: " in lines[0]
    assert lines[1:4] == [b"startup: server_args=ServerArgs(model_path='org/model', tp_size=8)",
                          b"startup: model loaded", LINE.rstrip(b"\n") % 0]
    marker = [line for line in lines if line.startswith(b"[tuner: ")]
    assert len(marker) == 1 and re.fullmatch(
        rb"\[tuner: \d+ bytes of server output dropped here; server.log_max_mb=1\]", marker[0]), marker
    assert lines[-3:-1] == [b"last line 1", b"last line 2: Traceback (most recent call last)"]
    assert lines[-1].startswith(b"# tuner: stopped, exit code 0")
    assert tail.splitlines()[-2:] == ["last line 1", "last line 2: Traceback (most recent call last)"]
    # The flood's last line survives too (it was written before the file came back under the cap).
    assert LINE % (n - 1) in data
    # Head and tail are whole lines of the flood around the marker.
    i = lines.index(marker[0])
    flood = re.compile(rb"flood \d{9} x{80}")
    assert flood.fullmatch(lines[i - 1]) and flood.fullmatch(lines[i + 1])


# The tuner side, in a process of its own so that the test can SIGSTOP it: it launches a server that
# writes a numbered line every millisecond or so, says the server's pid, and stops it on "stop".
TUNER_SIDE = textwrap.dedent("""\
    import sys
    from pathlib import Path
    from tuner.server.launcher import ServerProcess
    from tuner.server.ports import pick_free_port

    folder, server = Path(sys.argv[1]), sys.argv[2]
    srv = ServerProcess.from_argv([sys.executable, server], host="127.0.0.1",
                                  port=pick_free_port("127.0.0.1"), log_path=folder / "server.log",
                                  workdir=folder, log_max_mb=1)
    srv.start()
    print("server", srv.pid, flush=True)
    sys.stdin.readline()
    srv.stop()
    print("stopped", flush=True)
    """)
STEADY = textwrap.dedent("""\
    import sys, time
    out = sys.stdout.buffer
    out.write(b"startup: ready\\n")
    i = 0
    while True:
        out.write(b"steady %09d " % i + b"y" * 4000 + b"\\n")
        out.flush()
        i += 1
        time.sleep(0.001)
    """)
_STEADY = re.compile(rb"steady (\d{9}) y{4000}\n")


def _last_count(path: Path) -> int:
    with open(path, "rb") as f:
        f.seek(max(0, f.seek(0, os.SEEK_END) - 20_000))
        counts = _STEADY.findall(f.read())
    return int(counts[-1]) if counts else -1


def test_the_server_keeps_writing_while_the_tuner_is_stopped_and_the_cap_resumes_after(tmp_path):
    (tmp_path / "tuner_side.py").write_text(TUNER_SIDE)
    (tmp_path / "steady.py").write_text(STEADY)
    argv = [PY, str(tmp_path / "tuner_side.py"), str(tmp_path), str(tmp_path / "steady.py")]
    tuner = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             cwd=ROOT)
    server = None
    log = tmp_path / "server.log"
    try:
        first = tuner.stdout.readline().decode()
        assert first.startswith("server "), first + tuner.stderr.read().decode()
        server = int(first.split()[1])
        STARTED_GROUPS.add(server)
        assert wait_until(lambda: _last_count(log) >= 0)
        os.kill(tuner.pid, signal.SIGSTOP)
        try:
            at_stop = _last_count(log)
            # The tuner (and its watcher thread) is frozen; the server writes on, far past the cap.
            assert wait_until(lambda: log.stat().st_size > 3 * MIB, 120), log.stat().st_size
            assert _last_count(log) > at_stop
        finally:
            os.kill(tuner.pid, signal.SIGCONT)
        # Resumed, the watcher trims the file back, while the server still writes.
        assert wait_until(lambda: log.stat().st_size <= MIB, 60), log.stat().st_size
        before = _last_count(log)
        assert wait_until(lambda: _last_count(log) > before + 50)
        tuner.stdin.write(b"stop\n")
        tuner.stdin.flush()
        assert tuner.stdout.readline() == b"stopped\n"
        assert tuner.wait(timeout=60) == 0
    finally:
        if tuner.poll() is None:
            os.kill(tuner.pid, signal.SIGCONT)
        tuner.stdin.close()
        finish(tuner)
        kill_if_left(server)
    data = log.read_bytes()
    assert len(data) <= MIB
    assert data.splitlines()[1] == b"startup: ready"
    assert re.search(rb"\n\[tuner: \d+ bytes of server output dropped here; server.log_max_mb=1\]\n", data)
    *_, last, stopped = data.splitlines(keepends=True)
    assert _STEADY.fullmatch(last) and stopped.startswith(b"# tuner: stopped, ")


def test_a_normal_log_is_byte_for_byte_what_the_server_wrote(tmp_path):
    script = tmp_path / "talker.py"
    script.write_text(textwrap.dedent("""\
        import random, sys
        rng = random.Random(7)
        out = sys.stdout.buffer
        for i in range(3000):
            line = bytes(rng.randrange(256) for _ in range(rng.randrange(200)))
            out.write(line.replace(b"\\n", b"") + b"\\n")
        out.flush()
        """))
    srv = launch(tmp_path, [PY, str(script)], 1)
    try:
        assert srv.proc.wait(timeout=60) == 0
        time.sleep(0.3)  # a few rounds of the watcher (nothing to trim: ~300 kB under a 1 MiB cap)
    finally:
        srv.stop()
    expected = subprocess.run([PY, str(script)], capture_output=True, check=True).stdout
    assert len(expected) > 200_000
    launch_line, rest = srv.log_path.read_bytes().split(b"\n", 1)
    assert launch_line.startswith(b"# tuner: ")
    assert rest == expected + b"# tuner: stopped, exit code 0\n"


def test_trim_keeps_head_and_tail_and_counts_every_dropped_byte(tmp_path):
    """Two trims of one part: the head never moves, one marker, the count adds up; what lies before
    the part (an earlier launch) is left as it is."""
    path = tmp_path / "server.log"
    earlier = b"# an earlier launch\n" * 10
    written = b"".join(b"%07d\n" % i for i in range(20_000))  # 160 kB
    path.write_bytes(earlier + written)
    dropped, mark, head = trim(path, len(earlier), 64_000, 0.0625)
    with open(path, "ab") as f:
        more = b"".join(b"%07d\n" % i for i in range(20_000, 40_000))
        f.write(more)
    written += more
    dropped, mark, head = trim(path, len(earlier), 64_000, 0.0625, dropped, mark, head)
    data = path.read_bytes()
    assert data.startswith(earlier) and len(data) - len(earlier) <= 48_000 + mark
    part = data[len(earlier):]
    head, rest = part.split(b"[tuner: ", 1)
    line, tail = rest.split(b"\n", 1)
    assert line == b"%d bytes of server output dropped here; server.log_max_mb=0.0625]" % dropped
    assert written.startswith(head) and written.endswith(tail) and len(head) == 16_000
    assert dropped == len(written) - len(head) - len(tail)
    # under the cap: nothing changes
    assert trim(path, len(earlier), 64_000, 0.0625, dropped, mark, head) == (dropped, mark, head)


def test_capped_copy_holds_at_most_the_cap_and_a_normal_file_whole(tmp_path):
    src, dst = tmp_path / "server.log", tmp_path / "copy.log"
    src.write_bytes(b"".join(b"%07d\n" % i for i in range(200_000)))  # 1.6 MB
    capped_copy(src, dst, MIB, 1)
    out = dst.read_bytes()
    assert len(out) <= 3 * MIB // 4 + 100
    assert out.startswith(b"0000000\n") and out.endswith(b"0199999\n")
    assert re.search(rb"\n\[tuner: \d+ bytes of server output dropped here; server.log_max_mb=1\]\n", out)
    src.write_bytes(b"a\nb")
    capped_copy(src, dst, MIB, 1)
    assert dst.read_bytes() == b"a\nb"


def test_the_study_s_cap_reaches_every_launch_built_from_its_settings(tmp_path):
    """Trials, the baseline and `tuner launch` build their server from the study's settings: the
    cap is server.log_max_mb's (here the baseline's log, with the simulator's command line)."""
    from tuner.config.study import ServerSettings

    script = tmp_path / "flooder.py"
    script.write_text(FLOODER)
    wrapper = tmp_path / "python-flooder"  # takes the simulator's argv, runs the flooder instead
    wrapper.write_text(f'#!/bin/sh\nexec "{PY}" "{script}" 100000 {MIB} 0\n')
    wrapper.chmod(0o755)
    server = ServerSettings.model_validate({"backend": "sim", "python": str(wrapper),
                                            "model_path": "org/model", "log_max_mb": 1})
    srv = ServerProcess(server, None, workdir=tmp_path, trial=None, port=0)
    srv.start()
    STARTED_GROUPS.add(srv.pgid)
    try:
        assert srv.proc.wait(timeout=60) == 0
    finally:
        srv.stop()
    data = (tmp_path / "baseline" / "server.log").read_bytes()
    assert len(data) <= MIB and b"under the cap again: 1\n" in data
    assert b"dropped here; server.log_max_mb=1]\n" in data and LINE % 99_999 in data


def test_a_log_every_launch_appends_to_is_rotated_once_it_holds_the_cap(tmp_path):
    """``tuner launch``'s log takes every invocation's output (QA: each launch's part was capped, the
    file itself grew without bound, launch after launch). A launch that finds the file at the cap
    moves it to ``server.log.1`` (replacing an older one) and starts the file anew."""
    script = tmp_path / "talker.py"
    script.write_text("import sys\nsys.stdout.write(('launch output ' + 'y' * 80 + '\\n') * 6500)\n")  # ~620 kB
    sizes = []
    for _ in range(7):
        srv = launch(tmp_path, [PY, str(script)], 1)
        try:
            assert srv.proc.wait(timeout=60) == 0
        finally:
            srv.stop()
        sizes.append(srv.log_path.stat().st_size)
    log = srv.log_path
    older = log.with_name("server.log.1")
    assert max(sizes) < 2 * MIB  # under the cap before this launch's part, which holds at most the cap
    assert older.is_file() and older.stat().st_size < 2 * MIB
    assert sorted(p.name for p in log.parent.iterdir()) == ["server.log", "server.log.1"]
    text = log.read_bytes()
    assert text.startswith(b"# tuner: ") and text.endswith(b"# tuner: stopped, exit code 0\n")
    assert text.count(b"# tuner: stopped") < 7  # the earliest launches are gone


def test_a_rotation_the_disk_refuses_costs_no_launch(tmp_path):
    """``server.log.1`` that cannot be replaced (here a folder with a file in it): the launch appends
    to the full log, as before rotation existed, rather than failing."""
    log = tmp_path / "trials" / "3" / "server.log"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"earlier launches\n" * 70000)  # ~1.2 MB: past a 1 MiB cap
    (tmp_path / "trials" / "3" / "server.log.1").mkdir()
    (tmp_path / "trials" / "3" / "server.log.1" / "keep").write_text("x")
    srv = launch(tmp_path, [PY, "-c", "print('this launch')"], 1)
    try:
        assert srv.proc.wait(timeout=60) == 0
    finally:
        srv.stop()
    text = log.read_bytes()
    assert text.startswith(b"earlier launches\n") and b"this launch\n" in text


def test_no_cap_leaves_an_earlier_launch_s_log_in_place(tmp_path):
    """``server.log_max_mb: 0`` (no cap): the file is left to grow; a launch appends to it and
    moves nothing to ``server.log.1``."""
    script = tmp_path / "talker.py"
    script.write_text("print('second launch')\n")
    log = tmp_path / "trials" / "3" / "server.log"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"first launch\n")
    srv = launch(tmp_path, [PY, str(script)], 0)
    try:
        assert srv.proc.wait(timeout=60) == 0
    finally:
        srv.stop()
    assert not log.with_name("server.log.1").exists()
    data = log.read_bytes()
    assert data.startswith(b"first launch\n") and b"second launch" in data, data
