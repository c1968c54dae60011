"""Writing files whole or not at all: every file a user or another process reads (exported configs,
reports, suite results, server records) is written to a temporary file beside it and renamed over it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Sequence


def write_atomic(files: Sequence[tuple[Path, str]]) -> None:
    """Write every ``(path, text)``: all to temporary files first, then rename each into place.

    A failure before the renames leaves no target touched and no temporary file behind. Files get
    the usual permissions (umask), not ``mkstemp``'s private 0600: they are for sharing.
    """
    staged: list[tuple[str, Path]] = []
    umask = os.umask(0)
    os.umask(umask)
    try:
        for path, text in files:
            path = Path(path)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            staged.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, 0o666 & ~umask)
        for tmp, path in staged:
            os.replace(tmp, path)
    finally:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)


def write_text_atomic(path: str | Path, text: str) -> Path:
    """One file, whole or not at all (see :func:`write_atomic`)."""
    path = Path(path)
    write_atomic([(path, text)])
    return path


def check_writable(path: str | Path, flag: str, *, folder: bool = False) -> None:
    """Raise :class:`~tuner.config.yamlfile.ConfigError` naming ``flag`` unless ``path`` can be
    written: a file (``folder=False``) or a folder, which may not exist yet (its missing parents
    would be created). Checked by creating and removing a temporary file in the nearest existing
    folder, which works for root too (``os.access`` says yes to root on any mode bits); nothing is
    left behind."""
    from .yamlfile import ConfigError

    path = Path(path)
    if path.exists() and path.is_dir() != folder:
        raise ConfigError(flag, str(path), "is a folder; give a file name" if path.is_dir()
                          else "is a file; give a folder")
    existing = path if folder and path.exists() else path.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(flag, str(path), f"{existing} is a file, not a folder; choose another path")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tuner-check.", dir=existing)
    except OSError as exc:
        raise ConfigError(flag, str(path), f"cannot write in {existing}: {exc.strerror}; "
                          "choose a folder you can write to") from None
    os.close(fd)
    os.unlink(tmp)
