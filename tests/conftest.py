"""Session-wide settings for every test."""

from __future__ import annotations

import os
import sys

import pytest

# Compiled modules are cached (``__pycache__``) even where the environment says not to
# (``PYTHONDONTWRITEBYTECODE=1``, as some CI images and sandboxes set): the suite starts several
# hundred Python processes (tuner commands, simulated servers, workers), and each would otherwise
# compile every module it imports from source again, and every xdist worker every test module
# (pytest's rewritten ones too). Set here, before the test modules are collected; children inherit it.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def _session_folder(tmp_path_factory, var: str, name: str):
    """``var`` names a folder of the session's own (``name``) while the session runs; restored after."""
    old = os.environ.get(var)
    path = tmp_path_factory.mktemp(name)
    os.environ[var] = str(path)
    yield path
    if old is None:
        os.environ.pop(var, None)
    else:
        os.environ[var] = old


@pytest.fixture(scope="session", autouse=True)
def gpu_lock_dir(tmp_path_factory):
    """The GPU locks of SGLang launches (tuner.server.gpu_lock) live in the session's own folder, not
    in the host-wide /tmp/tuner-gpu-locks: tests never wait for, nor block, a real tuner or another
    test session on this machine. Child processes inherit it."""
    yield from _session_folder(tmp_path_factory, "TUNER_GPU_LOCK_DIR", "gpu-locks")


@pytest.fixture(scope="session", autouse=True)
def journal_fallback_dir(tmp_path_factory):
    """The journal's fallback folder (tuner.engine.journal.fallback_folder: where an entry goes that
    a full workdir refuses) is the session's own, not this user's /tmp/tuner-journal-UID. Child
    processes inherit it."""
    yield from _session_folder(tmp_path_factory, "TUNER_JOURNAL_FALLBACK", "journal-fallback")


@pytest.fixture(scope="session", autouse=True)
def optuna_sqlite_urls_close_their_connections():
    """A test that opens a storage through Optuna itself (``optuna.create_study(storage=URL)``, as a
    plain Optuna user would) gets an SQLite storage that closes each connection after use, as the
    tuner's own (tuner.engine.storage, NullPool). Optuna's default pools them in an engine nothing
    disposes, and Python 3.13's sqlite3 warns of each one collected unclosed (ResourceWarning, an
    error here). The tuner hands Optuna storage objects, never a URL, so this changes no tuner path."""
    import optuna.storages
    import sqlalchemy as sa

    original = optuna.storages.get_storage

    def get_storage(storage):
        if isinstance(storage, str) and storage.startswith("sqlite"):
            return original(optuna.storages.RDBStorage(storage, engine_kwargs={"poolclass": sa.pool.NullPool}))
        return original(storage)

    optuna.storages.get_storage = get_storage
    yield
    optuna.storages.get_storage = original


def pytest_collection_modifyitems(config, items):
    """On an xdist worker, the long test files first in every worker's share (support/long_first.py):
    only the order changes. Every worker orders its collection alike (xdist checks that they match)."""
    workers = int(getattr(config, "workerinput", {}).get("workercount", 0))
    if workers > 1:
        from support.long_first import spread

        items[:] = spread(items, workers, lambda item: item.nodeid.split("::")[0].removeprefix("tests/"))
