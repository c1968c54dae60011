"""Whether the server's command can start at all: its program (``server.python``, or the tuner's own
interpreter when that is unset), checked before anything of a launch is written.

``execve`` says little about a program that cannot run: ``No such file or directory`` for a bare name
not on ``PATH``, for a broken symlink (a venv whose base Python was removed or moved) and for a script
whose ``#!`` interpreter is missing alike; ``Permission denied`` for a folder. QA (qa110): ``tuner
launch`` of a study whose ``server.python`` was a folder wrote the launch's log folder and line, then
said ``error: study: server.python: cannot run '...': Permission denied`` (the study file unnamed, no
fix); a script with a missing ``#!`` interpreter passed ``tuner study run``'s checks, the study was
written, and the baseline failed with ``No such file or directory`` for a file that exists.
:func:`interpreter_problem` names which of these it is, and the fix. Nothing here raises or writes.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def _shebang(path: Path) -> str | None:
    """The interpreter a ``#!`` script names (its first word), or None: no ``#!`` line, unreadable."""
    try:
        with open(path, "rb") as f:
            first = f.readline(4096)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode(errors="replace").split()
    return words[0] if words else None


def _runnable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def interpreter_problem(program: str, path_var: str | None = None) -> str | None:
    """What keeps ``program`` (the server command's first word) from running, as a sentence naming
    it and the fix, or None when it looks runnable. ``path_var``: the ``PATH`` a bare name is looked
    up on (the server's environment, as ``subprocess`` looks it up; None: this process's). The
    ``#!`` line of a script is followed one step (an ``env`` there is not asked what it would run)."""
    found = program if "/" in program else shutil.which(program, path=path_var)
    if found is None:
        return f"{program!r} is not on PATH; give the interpreter's full path"
    path = Path(found)
    if path.is_symlink() and not path.exists():
        return (f"{path} is a broken symlink (to {os.readlink(path)}: a venv whose Python was moved or "
                "removed?); give the path of the Python that has SGLang")
    if not path.is_file():
        return f"{path} does not exist or is not a file; give the path of the Python that has SGLang"
    if not os.access(path, os.X_OK):
        return f"{path} is not executable; chmod +x it or give another"
    interpreter = _shebang(path)
    if interpreter is not None and not _runnable(Path(interpreter)):
        return (f"{path} is a script whose #! line names {interpreter}, which is not an executable file; "
                "fix that line or give the Python itself")
    return None
