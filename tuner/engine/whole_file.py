"""Writing a file of the engine's whole or not at all: a journal entry, a trial's artifact.

Contract: :func:`write_whole` leaves either the new file in place or no trace of the attempt (its
temporary file removed) and raises the ``OSError`` of a full or read-only disk; nothing is retried.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import BinaryIO


def write_whole(target: Path, body: BinaryIO, durable: bool = False) -> None:
    """Copy ``body`` to a temporary file beside ``target`` (``.NAME.*.tmp``), then rename it into
    place; on any error the temporary file is removed and the error raised. ``durable``: the file
    is flushed to disk before the rename, and the rename after (:func:`sync_folder`)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(body, out)
            if durable:
                out.flush()
                os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        sync_folder(target.parent)


def sync_folder(folder: Path) -> None:
    """Make a rename or unlink in ``folder`` durable (best effort: not every filesystem allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
