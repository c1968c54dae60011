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
import subprocess
from pathlib import Path
from typing import Mapping

#: How long asking the server's interpreter which SGLang it has may take (seconds).
VERSION_TIMEOUT_S = 60.0
# The installed distribution's version (what pip installed, no import of SGLang and its torch); a
# source tree on the path has none: then its own sglang.__version__ (sglang/version.py, 0.5.23).
_VERSION_SCRIPT = ("import importlib.metadata as m\ntry:\n    print(m.version('sglang'))\n"
                   "except Exception:\n    import sglang\n    print(sglang.__version__)\n")


def _shebang(path: Path) -> list[str]:
    """The words of a script's ``#!`` line (the interpreter first), or []: no ``#!`` line, unreadable."""
    try:
        with open(path, "rb") as f:
            first = f.readline(4096)
    except OSError:
        return []
    if not first.startswith(b"#!"):
        return []
    return first[2:].decode(errors="replace").split()


def _runnable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def interpreter_problem(program: str, path_var: str | None = None) -> str | None:
    """What keeps ``program`` (the server command's first word) from running, as a sentence naming
    it and the fix, or None when it looks runnable. ``path_var``: the ``PATH`` a bare name is looked
    up on (the server's environment, as ``subprocess`` looks it up; None: this process's). The
    ``#!`` line of a script is followed one step (its interpreter, or the one name ``env`` is given)."""
    found = program if "/" in program else shutil.which(program, path=path_var)
    unexpanded = program.startswith("~") or "$" in program
    if unexpanded and (found is None or not os.path.lexists(found)):
        # execve takes the path as written: no shell expands it (QA, qa187: server.python
        # ~/sglang-venv/bin/python said "does not exist" of a file the user's shell lists)
        return (f"{program!r}: a ~ or an environment variable ($HOME) is not expanded here; write the path "
                "out (/home/me/venv/bin/python)")
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
    words = _shebang(path)
    if words and not _runnable(Path(words[0])):
        return (f"{path} is a script whose #! line names {words[0]}, which is not an executable file; "
                "fix that line or give the Python itself")
    # `#!/usr/bin/env python3.11`: env looks the name up on the PATH it is given (the server's);
    # more words after env (options, or a name Linux passes on with them as one argument) are not judged
    if len(words) == 2 and Path(words[0]).name == "env" and shutil.which(words[1], path=path_var) is None:
        return (f"{path} is a script whose #! line runs {words[1]!r} through env, which is not on PATH; "
                "fix that line or give the Python itself")
    return None


def installed_sglang(python: str, env: Mapping[str, str] | None = None) -> str | None:
    """The version of SGLang ``python`` runs (its installed distribution's, else ``sglang.__version__``),
    or None where it cannot be told (no SGLang, a failure, past :data:`VERSION_TIMEOUT_S`). Never raises."""
    from .bounded_run import run_bounded

    try:
        out = run_bounded([python, "-c", _VERSION_SCRIPT], VERSION_TIMEOUT_S,
                          env=None if env is None else dict(env))
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = out.stdout.strip().splitlines()
    return lines[-1].strip()[:80] if out.returncode == 0 and lines else None

