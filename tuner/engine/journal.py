"""The local journal: a finished measurement is written here before anything else, so neither a
storage outage nor ``kill -9`` can lose it.

One JSON file per measurement in ``<workdir>/journal/``, written whole or not at all (a temporary
file, ``fsync``, then renamed; the folder is synced too), holding everything that finishes the
trial in storage (:class:`tuner.engine.finish.Finish`), the suite's JSON and the files to attach.
The entry is removed once the trial is finished in storage and its files are written. An entry
still there when a worker of the same study starts is replayed into storage first
(:func:`tuner.engine.finish.replay_journal`), or set aside in ``journal/set-aside/`` when it was
written for an earlier study of the same name (deleted since); a worker that gives up on an
unreachable storage names the entries it leaves.

An entry the workdir's folder refuses (a full or read-only disk) is written to this user's fallback
folder instead (:func:`fallback_folder`: on the temporary filesystem, usually another disk), and
read from there as from the workdir's: with SQLite the storage file sits on the workdir's disk by
default, and a disk that filled refused the journal and the storage at once, and the measurement
was lost when the worker gave up (QA, qa96; tests/engine/test_journal_fallback.py).

Contract: :meth:`Journal.write` raises ``OSError`` when neither folder takes the entry; the caller
then goes straight to storage and records a warning (:attr:`Journal.refused`: why the workdir's
folder refused one it wrote to the fallback). Nothing here talks to Optuna or the database. An entry
holds no password (the storage URL is redacted).
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import stat
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .whole_file import sync_folder, write_whole

JOURNAL_DIR = "journal"
#: Where entries of an earlier study of the same name go (:meth:`Journal.set_aside`).
SET_ASIDE_DIR = "set-aside"
#: The entry format; a later tuner reading an older entry knows what it has.
FORMAT = 1
#: The environment variable naming the fallback folder (:func:`fallback_folder`).
FALLBACK_ENV = "TUNER_JOURNAL_FALLBACK"


def fallback_folder() -> Path:
    """Where entries go that the workdir's journal refuses: ``$TUNER_JOURNAL_FALLBACK``, else
    ``tuner-journal-UID`` in the temporary folder (``/tmp``: usually not the workdir's disk)."""
    named = os.environ.get(FALLBACK_ENV)
    return Path(named) if named else Path(tempfile.gettempdir()) / f"tuner-journal-{os.getuid()}"


class Journal:
    """The journal folder of one workdir, and this user's fallback folder."""

    def __init__(self, workdir: str | Path):
        self.folder = Path(workdir) / JOURNAL_DIR
        self.fallback = fallback_folder()
        #: why the workdir's folder refused the last entry :meth:`write` put in the fallback
        self.refused: OSError | None = None

    def write(self, entry: dict, stem: str) -> Path:
        """Write ``entry`` as ``<stem>-<random>.json``, durably, in the workdir's folder, else in the
        fallback (:attr:`refused` then says why); returns its path (``OSError``: neither took it)."""
        self.refused = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            return _write_in(self.folder, entry, stem)
        except OSError as exc:
            if self.fallback == self.folder:
                raise
            self.refused = exc
        try:
            _own_folder(self.fallback)
            return _write_in(self.fallback, entry, stem)
        except OSError:
            raise self.refused from None

    def entries(self, study: str | None = None) -> list[tuple[Path, dict]]:
        """Every entry waiting to be replayed (of ``study`` and its companions when given), oldest
        first, from the workdir's folder and the fallback. A file that cannot be read as an entry is
        left where it is and skipped."""
        found = []
        for folder in dict.fromkeys([self.folder, self.fallback]):
            found += _entries_in(folder, study)
        return [(path, entry) for path, entry, _ in sorted(found, key=lambda found: found[2])]

    def unreadable(self, study: str) -> list[tuple[Path, str, int]]:
        """Entries of ``study`` and its companions (by their names, ``<study>-<number>-<random>.json``)
        that cannot be read as entries: ``(path, study, trial number)``. An entry is written whole
        (renamed into place), so such a file was damaged afterwards (truncated by a crash of the
        disk, edited by hand): its measurement is lost, and skipping it in silence left it there,
        unsaid, for every later run (QA)."""
        named = re.compile(rf"^({re.escape(study)}(?:\.[a-z]+)?)-(\d+)-[0-9a-f]{{8}}\.json$")
        found = []
        for folder in dict.fromkeys([self.folder, self.fallback]):
            if not folder.is_dir():
                continue
            for path in sorted(folder.glob("*.json")):
                match = named.match(path.name)
                if match is None:
                    continue
                try:
                    entry = json.loads(path.read_text(encoding="utf-8"))
                except OSError:
                    continue  # replayed and removed meanwhile, or not ours to read
                except ValueError:
                    entry = None
                if not isinstance(entry, dict) or not isinstance(entry.get("finish"), dict):
                    found.append((path, match.group(1), int(match.group(2))))
        return found

    def set_aside(self, path: Path) -> Path | None:
        """Move an entry that must not be replayed (its study was deleted and made anew) to
        ``set-aside/`` beside the entry: kept for whoever wants its figures, never replayed.
        Returns where it went (None: it was gone already, or the folder refuses)."""
        aside = path.parent / SET_ASIDE_DIR
        try:
            aside.mkdir(exist_ok=True)
            os.replace(path, aside / path.name)
        except OSError:
            return None
        sync_folder(path.parent)
        return aside / path.name

    @contextmanager
    def taken(self, path: Path) -> Iterator[bool]:
        """Hold the entry at ``path`` for this caller alone while it replays it: True when it is
        this caller's, False when another process (or thread) holds it, or it is gone (replayed
        meanwhile). An ``flock`` on the file, released when the holder ends, dead or not; a
        filesystem that has no locks leaves every caller its entry, as before locks.

        Two workers of a study started at once on one host both replayed a dead worker's entry,
        and a measurement whose trial another worker had failed meanwhile was re-homed twice: one
        measurement counted as two launches and averaged in twice (QA, qa93;
        tests/engine/test_journal_replayed_once.py)."""
        import fcntl

        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            yield False  # replayed and removed by another meanwhile
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    yield False  # another replays it now
                    return
            try:  # still the entry listed: one removed after this open is another's, done
                mine = os.stat(path).st_ino == os.fstat(fd).st_ino
            except OSError:
                mine = False
            yield mine
        finally:
            os.close(fd)

    def remove(self, path: Path) -> None:
        """Drop a replayed entry. A file already gone is fine (another process replayed it), and so
        is one that cannot be removed (a read-only folder): replaying it again changes nothing."""
        try:
            path.unlink()
        except OSError:
            return
        sync_folder(path.parent)


def _write_in(folder: Path, entry: dict, stem: str) -> Path:
    """Write ``entry`` as ``folder/<stem>-<random>.json``, durably (:func:`write_whole`)."""
    path = folder / f"{stem}-{uuid.uuid4().hex[:8]}.json"
    text = json.dumps({"format": FORMAT, **entry}, default=str)
    write_whole(path, io.BytesIO(text.encode("utf-8")), durable=True)
    return path


def _own_folder(folder: Path) -> None:
    """Make ``folder`` (mode 0700) unless it is there; ``OSError`` unless it is a real folder of
    this user's (the temporary folder is everyone's: another user's folder or link is never used)."""
    try:
        folder.mkdir(mode=0o700, parents=True)
    except FileExistsError:
        pass
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise OSError(errno.EPERM, f"{folder} is not a folder of this user's")


def _entries_in(folder: Path, study: str | None) -> list[tuple[Path, dict, tuple]]:
    if not folder.is_dir():
        return []
    found = []
    for path in folder.glob("*.json"):
        try:
            key = (path.stat().st_mtime, path.name)
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(entry, dict) or "finish" not in entry:
            continue
        name = entry["finish"].get("study", "")
        if study is None or name == study or name.startswith(study + "."):
            found.append((path, entry, key))
    return found
