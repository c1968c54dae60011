"""A folder prepared once per test session and shared by every xdist worker: each worker gets its own copy.

The slow fixtures of ``tests/results`` (a study run through the engine, then a report) were module-scoped,
so each of the four xdist workers that drew one of their tests ran the same study again. ``prepared_once``
runs ``build`` once per session, under a lock in the folder the workers share (pytest's session basetemp,
``pytest-N``, whose ``popen-gwK`` children are the workers' own), and hands each caller a fresh copy: a
test that writes to its copy (an Optuna study opened for reading still sets metric names) never touches
another worker's.

Contract: ``build(folder)`` writes everything into ``folder`` (an empty directory) with paths relative
to it -- a study file whose storage and workdir default to its own folder, not an absolute
``sqlite:////tmp/...``, nor a landscape table, profile or suite file of its own, whose absolute
path the study stores -- so that a copy elsewhere reads the same (checked: a file that names the
folder fails the build). A build that raises leaves no "done" mark: the next caller builds again
(and fails the same way, in its own test). Without xdist the build runs in the caller's own tmp
folder, so a session never reads another session's folder.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def prepared_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """A copy, in a new tmp folder of the caller's, of the folder ``build`` prepared once under ``name``
    (unique within ``build``'s module)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        folder = tmp_path_factory.mktemp(name)
        build(folder)
        _assert_relocatable(folder)  # the same build must pass with xdist and without
        return folder
    shared = tmp_path_factory.getbasetemp().parent  # this session's pytest-N, shared by its workers
    key = f"prepared-{build.__module__}-{name}"  # two test modules may both say "study"
    source, done = shared / key, shared / f"{key}.done"
    with open(shared / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes; other workers wait here
        if not done.exists():
            shutil.rmtree(source, ignore_errors=True)  # a build that failed half way
            source.mkdir()
            build(source)
            _assert_relocatable(source)
            done.touch()
    copy = tmp_path_factory.mktemp(name) / name
    shutil.copytree(source, copy)
    return copy


def _assert_relocatable(folder: Path) -> None:
    """No file of ``folder`` names ``folder`` itself: a copy would read the original's files (a study
    stores the absolute path of its landscape table, profile file or suite file), not its own."""
    needle = str(folder).encode()
    holding = [str(p.relative_to(folder)) for p in sorted(folder.rglob("*"))
               if p.is_file() and needle in p.read_bytes()]
    assert not holding, f"{holding} name {folder}: build with paths relative to the folder, or do not share it"
