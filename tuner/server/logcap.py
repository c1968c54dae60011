"""Cap a launched server's log (``server.log_max_mb``) without ever slowing the server down.

The server writes its output straight into its log file (no pipe through the tuner): a server that
floods its output is never slowed by the tuner, and a tuner that is paused (SIGSTOP) or busy never
blocks the server. The file is opened for the server with ``O_APPEND`` (Python's ``"ab"``), so every
write of the server lands at the file's end as it is at that moment, also after the tuner shortened
the file. A :class:`LogCap` keeps the file small from the tuner's side instead:

* a daemon thread (:meth:`LogCap.start`, stopped by :meth:`LogCap.stop`) looks at the file's size
  every :data:`CHECK_INTERVAL_S`; a launch's part of the file (from ``base``, past the tuner's
  ``# tuner: ... launch:`` line) that grew past the cap is trimmed (:func:`trim`): its head (the
  first quarter of the cap: the server's startup lines, the arguments SGLang printed, the model
  load) and its most recent output (half the cap) are kept, the middle is replaced by one line
  ``[tuner: N bytes of server output dropped here; server.log_max_mb=X]`` (N: all bytes dropped so
  far in this launch). After a trim the part holds at most three quarters of the cap and the marker,
  so the next trim is a quarter of the cap away;
* once the server is stopped, the launcher trims once more (:meth:`LogCap.check`), so the file the
  artifact store copies holds at most the cap (:func:`capped_copy` bounds a copy taken while the
  server still writes the same way).

Between two checks the file may exceed the cap by what the server writes in
:data:`CHECK_INTERVAL_S` (or for as long as the tuner is paused): the cap bounds the disk used, not
each instant. A trim copies the tail down over the middle and then truncates the file; bytes the
server appends after the last size check of the copy and before the truncation (a window of
microseconds, and only while the server writes) are lost. A server writing faster than the copy runs
is chased for at most :data:`CHASE_ROUNDS` rounds, the kept tail never past half the cap: then what
it wrote during the last round (at most what it writes while half the cap is copied) is lost too,
and counted in the marker's N of the next trim. That is accepted for a log (Linux's
``FALLOC_FL_COLLAPSE_RANGE`` would lose nothing, but only on ext4 and XFS, in whole blocks, and
Python does not expose it). What a reader sees through :meth:`LogCap.lock` (the launcher's
``log_text``, from which failures are classified and ``log_tail`` is cut) is never a half-done
trim: its last lines are the last the server wrote, bar that window.

Nothing is capped once the tuner is gone: a server left running by a tuner that was killed
(``kill -9``; ``tuner launch`` stops its server on Ctrl-C and SIGTERM) writes on uncapped until the
next run's orphan cleanup stops it. A file that holds several launches (``tuner launch``'s log,
appended to by every invocation; a relaunch on another port) holds each launch's part capped, and
a launch that finds the file at the cap moves it to ``NAME.1`` first (the launcher's ``_rotate_log``):
a file every launch appends to stays bounded too.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

log = logging.getLogger("tuner.server")

#: How often the watcher looks at the log's size (one ``fstat``; a trim only past the cap).
CHECK_INTERVAL_S = 0.1
#: How many times a trim copies down what the server appended during its last copy before it cuts the
#: file anyway (a server writing faster than the copy is never caught up with).
CHASE_ROUNDS = 4
_CHUNK = 1 << 20
MIB = 1 << 20


def marker_line(dropped: int, max_mb: float) -> bytes:
    """The line that stands where ``dropped`` bytes of server output were removed."""
    return f"[tuner: {dropped} bytes of server output dropped here; server.log_max_mb={max_mb:g}]\n".encode()


def _head_end(f, base: int, head: int) -> int:
    """Where the kept head ends: after the last newline within ``head`` bytes from ``base``
    (``base + head`` when that span holds none: one huge line is cut)."""
    f.seek(base)
    data = f.read(head)
    cut = data.rfind(b"\n")
    return base + (cut + 1 if cut >= 0 else len(data))


def _tail_start(f, start: int, end: int) -> int:
    """Where the kept tail starts: after the first newline at or after ``start`` (``start`` when
    there is none in reach), so the tail begins with a whole line."""
    f.seek(start)
    cut = f.read(min(end - start, 64 * 1024)).find(b"\n")
    return start + cut + 1 if cut >= 0 and start + cut + 1 < end else start


def _copy_down(fd: int, src: int, dst: int, length: int) -> None:
    """Copy ``length`` bytes at ``src`` to ``dst < src`` in the same file, front to back (each chunk is
    read before anything at or above it is overwritten)."""
    done = 0
    while done < length:
        chunk = os.pread(fd, min(_CHUNK, length - done), src + done)
        if not chunk:
            break
        os.pwrite(fd, chunk, dst + done)
        done += len(chunk)


def trim(path: str | Path, base: int, max_bytes: int, max_mb: float, dropped: int = 0,
         marker_len: int = 0, head_end: int | None = None) -> tuple[int, int, int | None]:
    """Trim the part of ``path`` from ``base`` to its end, when it is longer than ``max_bytes``, to its
    first quarter (cut after a newline), a marker line and its last half (from a line start): at
    most three quarters of ``max_bytes`` and the marker. Everything before ``base`` is left as it is.
    The server may write on meanwhile (see the module's docstring for the bytes that may be lost).

    ``dropped``: the bytes of server output this part already lost; ``marker_len`` and ``head_end``:
    the length of the marker an earlier trim wrote and where it sits, the end of the kept head,
    which never moves (None: no trim yet; the first finds it). Returns the new ``(dropped,
    marker_len, head_end)``, unchanged when nothing was trimmed.

    The head end is found once and then kept: looked for again, the last newline within the first
    quarter may be the marker's own (the head's last line ended short of the quarter by more than
    the marker's length, or the output has no newline at all: a ``\r`` progress bar), and each
    trim put its marker below the last one. QA (qa110): a stand-in printing 1,000-byte lines had
    six markers after six trims, each a count of its own, and the last count off by their bytes."""
    fd = os.open(path, os.O_RDWR)
    try:
        with os.fdopen(os.dup(fd), "rb") as f:
            size = os.fstat(fd).st_size
            if size - base <= max_bytes:
                return dropped, marker_len, head_end
            if head_end is None:
                head_end = _head_end(f, base, max_bytes // 4)
            tail_start = _tail_start(f, max(head_end + marker_len, size - max_bytes // 2), size)
            dropped += tail_start - head_end - marker_len
            f.seek(max(base, head_end - 1))
            whole_line = head_end == base or f.read(1) == b"\n"
            lead = b"" if whole_line else b"\n"
            mark = lead + marker_line(dropped, max_mb)
            os.pwrite(fd, mark, head_end)
            end = head_end + len(mark)
            src = tail_start
            # The server may append while the tail is copied down: copy what it added until nothing
            # new came, then cut the file where the copy ends (the window where bytes can be lost).
            # A server that writes faster than the copy runs is never caught up with: chasing all
            # it wrote grew the file without bound until it stopped (QA qa193: 1 MB writes in a
            # loop, log_max_mb 5, 1.13 GB within 15 s). So the kept tail is never let past half the
            # cap: what is past it starts the tail again from the newest half-cap, the older copied
            # part counted as dropped; and after CHASE_ROUNDS rounds the file is cut where the copy
            # ends, what the server wrote during the last round counted as dropped (lost).
            for rounds in range(CHASE_ROUNDS + 1):
                _copy_down(fd, src, end, size - src)
                end += size - src
                src = size
                now = os.fstat(fd).st_size
                if now == size:
                    break
                if rounds == CHASE_ROUNDS:
                    dropped += now - size
                    break
                if end - head_end - len(mark) + now - src > max_bytes // 2:
                    tail_start = _tail_start(f, max(src, now - max_bytes // 2), now)
                    dropped += end - head_end - len(mark) + tail_start - src
                    mark = lead + marker_line(dropped, max_mb)
                    os.pwrite(fd, mark, head_end)
                    end = head_end + len(mark)
                    src = tail_start
                size = now
            os.ftruncate(fd, end)
            return dropped, len(mark), head_end
    finally:
        os.close(fd)


def capped_copy(src: str | Path, dst: str | Path, max_bytes: int, max_mb: float) -> None:
    """Copy ``src`` (a log a server may still be writing) to ``dst``: the bytes it holds when the copy
    starts, never more; past ``max_bytes`` (> 0) only its first quarter, a marker line and its last
    half, as :func:`trim` keeps them. ``max_bytes <= 0``: the whole snapshot."""
    with open(src, "rb") as f, open(dst, "wb") as out:
        size = f.seek(0, os.SEEK_END)
        if max_bytes <= 0 or size <= max_bytes:
            spans = [(0, size)]
        else:
            head_end = _head_end(f, 0, max_bytes // 4)
            tail_start = _tail_start(f, max(head_end, size - max_bytes // 2), size)
            spans = [(0, head_end), (tail_start, size)]
        for i, (lo, hi) in enumerate(spans):
            if i:
                head_end = spans[0][1]
                f.seek(max(0, head_end - 1))
                whole_line = head_end == 0 or f.read(1) == b"\n"
                out.write((b"" if whole_line else b"\n") + marker_line(lo - head_end, max_mb))
            f.seek(lo)
            left = hi - lo
            while left > 0:
                chunk = f.read(min(_CHUNK, left))
                if not chunk:
                    break
                out.write(chunk)
                left -= len(chunk)


class LogCap:
    """The watcher that keeps one launch's part of a server log under ``max_mb`` MiB while the
    server runs. ``base``: where the launch's part starts. ``max_mb`` 0: no cap (:meth:`start` and
    :meth:`stop` do nothing). Reading the log while a trim may run: hold :meth:`lock`."""

    def __init__(self, path: str | Path, base: int, max_mb: float):
        self.path = Path(path)
        self.base = base
        self.max_mb = max_mb
        self.max_bytes = int(max_mb * MIB)
        self.dropped = 0  #: bytes of server output this launch's part lost so far
        self._marker_len = 0
        self._head_end: int | None = None  #: where the kept head ends and the marker sits, once trimmed
        self.lock = threading.RLock()
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> "LogCap":
        if self.max_bytes > 0:
            self._thread = threading.Thread(target=self._watch, name=f"log-cap {self.path}", daemon=True)
            self._thread.start()
        return self

    def check(self, blocking: bool = True) -> None:
        """Trim now if the part is past the cap (a missing or unwritable file is left alone).
        ``blocking=False``: skip this round while a reader holds :attr:`lock`."""
        if self.max_bytes <= 0 or not self.lock.acquire(blocking=blocking):
            return
        try:
            self.dropped, self._marker_len, self._head_end = trim(
                self.path, self.base, self.max_bytes, self.max_mb, self.dropped, self._marker_len,
                self._head_end)
        except OSError as exc:
            log.debug("cannot trim %s: %s", self.path, exc)
        finally:
            self.lock.release()

    def _watch(self) -> None:
        wait = CHECK_INTERVAL_S
        while not self._halt.wait(wait):
            before = self.dropped
            # Never waits for the lock: a signal handler that stops the server may interrupt a reader
            # holding it in the same thread, and then joins this thread.
            self.check(blocking=False)
            # A server that just needed a trim is flooding: look again soon, to keep the overshoot small.
            wait = CHECK_INTERVAL_S / 5 if self.dropped != before else CHECK_INTERVAL_S

    def stop(self) -> None:
        """Stop the watcher, waiting for a trim under way to end. Idempotent. The launcher then
        appends its last line and calls :meth:`check` once more, the server gone."""
        self._halt.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=30)
