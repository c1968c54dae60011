"""`tuner ARGS` run inside the test's own process (click's CliRunner), for tests that run a command
only to read what it prints, writes or exits with, where the command's process is not what they
test: it saves a Python start-up and the imports of Optuna, SQLAlchemy and the rest (a second or
two of CPU each on a loaded CI machine). A command that starts servers, or whose signals, exit or
process tree a test is about, stays a real subprocess."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from click.testing import CliRunner, Result


@contextlib.contextmanager
def working_dir(path: Path):
    """``os.chdir(path)`` for the block, then back: ``contextlib.chdir`` is Python 3.11's, and the
    suite runs on 3.10 too (README, "Python")."""
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def tuner_here(*args: str, cwd: Path | None = None, env: dict | None = None) -> Result:
    """Run ``tuner ARGS`` in this process, in ``cwd`` (then back), with ``env``'s variables set for
    the call (click puts the old values back). Returns click's Result: ``exit_code``, ``stdout`` and
    ``stderr`` apart; an exception the command let out is in ``exception``, never raised here."""
    from tuner.cli import cli

    changed = {k: v for k, v in (env or {}).items() if os.environ.get(k) != v}
    with working_dir(cwd) if cwd is not None else contextlib.nullcontext():
        return CliRunner().invoke(cli, list(args), env=changed, prog_name="tuner")
