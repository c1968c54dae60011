"""The log cap (:mod:`tuner.server.logcap`) keeps one marker, where the head ends, however many times
it trims: the head end was looked for again at every trim, as the last newline within the part's
first quarter, and that newline was the last marker's own whenever the head's last line ended short
of the quarter by more than a marker's length (lines of 1,000 bytes) or the output had no newline at
all (a ``\\r`` progress bar): each trim put its marker below the last one, with a count of its own,
and the counts were off by the markers' bytes (QA qa110: six markers after six trims of a stand-in's
1,000-byte lines, the same with a 300 MB line of no newline under ``tuner study run``)."""

from __future__ import annotations

import re

import pytest

from tuner.server.logcap import LogCap

MARKER = re.compile(rb"\[tuner: (\d+) bytes of server output dropped here; server\.log_max_mb=0\.0625\]\n")
CHUNKS = {"long_lines": b"x" * 999 + b"\n", "no_newline": b"y" * 1000,
          "progress_bar": b"Loading shards:  50%|#####     | 5/10\r" * 25}


@pytest.mark.parametrize("kind", sorted(CHUNKS))
def test_trims_keep_one_marker_and_count_every_dropped_byte(tmp_path, kind):
    path = tmp_path / "server.log"
    launch = b"# tuner: 2026-12-06 08:00:00 launch: python3 -m sglang.launch_server ...\n"
    first = b"server_args=ServerArgs(...)\n"
    path.write_bytes(launch + first)
    cap = LogCap(path, len(launch), 0.0625)  # 64 kB; the watcher thread is not started: trims by hand
    written = len(first)
    for _ in range(6):
        with open(path, "ab") as f:
            for _ in range(100):
                f.write(CHUNKS[kind])
        written += 100 * len(CHUNKS[kind])
        cap.check()
    data = path.read_bytes()
    assert data.startswith(launch + first)
    markers = MARKER.findall(data)
    assert markers == [str(cap.dropped).encode()], markers  # one marker, the count so far
    kept = len(data) - len(launch) - len(MARKER.search(data).group(0))
    assert kept + cap.dropped == written  # every byte is kept or counted as dropped
    assert len(data) - len(launch) <= cap.max_bytes
