"""A trim (:func:`tuner.server.logcap.trim`) ends while the server still writes, however fast it
writes: it chased everything the server appended during its copy until the server paused, so a server
writing faster than the copy ran was never caught up with and its log grew without bound until it
stopped (QA qa193: a server writing 1 MB at a time in a loop under ``server.log_max_mb: 5`` had a
``server.log`` of 1.13 GB within 15 s, trimmed only after the stop).

The server here writes from inside the copy (the seam: ``logcap._copy_down``, the trim's one
copying step), through its own ``O_APPEND`` handle as a real server's stdout does: every copy round
sees new output, as it does when the server outruns the copy. It stops after ``LIMIT`` writes."""

from __future__ import annotations

import re

import pytest

from tuner.server import logcap
from tuner.server.logcap import MIB, trim

LINE = b"flood %09d " + b"x" * 80 + b"\n"  # 97 bytes
LIMIT = 64
MARKER = re.compile(rb"\[tuner: (\d+) bytes of server output dropped here; server\.log_max_mb=1\]\n")


# Bytes per write: little (the tail is chased), a tenth of the cap, more than half (the tail starts again).
@pytest.mark.parametrize("per_write", [8 * 1024, 96 * 1024, 768 * 1024])
def test_a_trim_ends_while_the_server_outruns_its_copy(tmp_path, monkeypatch, per_write):
    path = tmp_path / "server.log"
    launch = b"# tuner: 2026-12-07 11:00:00 launch: python3 -m sglang.launch_server ...\n"
    path.write_bytes(launch)
    server = open(path, "ab")  # the server's stdout: O_APPEND, as the launcher opens it
    count = 0
    written = 0

    def write(lines: int) -> None:
        nonlocal count, written
        data = b"".join(LINE % (count + i) for i in range(lines))
        server.write(data)
        server.flush()
        count += lines
        written += len(data)

    write(2 * MIB // len(LINE))  # past the cap of 1 MiB: the next check trims
    writes = 0
    copy_down = logcap._copy_down

    def copy_while_the_server_writes(fd, src, dst, length):
        nonlocal writes
        copy_down(fd, src, dst, length)
        if writes < LIMIT:
            writes += 1
            write(per_write // len(LINE))

    monkeypatch.setattr(logcap, "_copy_down", copy_while_the_server_writes)
    try:
        dropped, _, _ = trim(path, len(launch), MIB, 1)
    finally:
        server.close()
    assert writes < LIMIT, "the trim only ended once the server stopped writing"
    data = path.read_bytes()
    part = data[len(launch):]
    assert data.startswith(launch) and len(part) <= MIB
    markers = MARKER.findall(part)
    assert len(markers) == 1
    kept = part.replace(MARKER.search(part).group(0), b"")
    # Every byte the server wrote is kept or counted as dropped; the kept ones are whole lines.
    assert len(kept) + dropped == written
    assert re.fullmatch(rb"(flood \d{9} x{80}\n)+", kept)
    assert kept.startswith(LINE % 0)
