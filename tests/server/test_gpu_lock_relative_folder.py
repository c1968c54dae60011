"""A relative ``TUNER_GPU_LOCK_DIR`` is refused in one line: each tuner would read it from its own
folder, and tuners started in two folders would not see each other's locks.

QA (qa167): with ``TUNER_GPU_LOCK_DIR=locks``, a tuner started in ``a/`` and one in ``b/`` each took
the lock on GPU 0 (``a/locks/gpu-0.lock``, ``b/locks/gpu-0.lock``): both would launch on it.
"""

from __future__ import annotations

import pytest

from tuner.server.gpu_lock import LOCK_DIR_VAR, GpuLock, GpuLockError


def test_two_folders_two_locks_no_more(tmp_path, monkeypatch):
    monkeypatch.setenv(LOCK_DIR_VAR, "locks")
    for where in ("a", "b"):
        (tmp_path / where).mkdir()
        monkeypatch.chdir(tmp_path / where)
        lock = GpuLock(["0"])
        with pytest.raises(GpuLockError) as caught:
            lock.acquire()
        assert caught.value.strerror == (
            "TUNER_GPU_LOCK_DIR=locks is a relative path, read from each tuner's own folder: tuners started in "
            "two folders would not see each other's locks; set TUNER_GPU_LOCK_DIR to an absolute folder every "
            "tuner on this node can write")
        assert not lock.held and not (tmp_path / where / "locks").exists()  # nothing made


def test_an_absolute_folder_still_serves(tmp_path, monkeypatch):
    monkeypatch.setenv(LOCK_DIR_VAR, str(tmp_path / "locks"))
    with GpuLock(["0"]) as lock:
        assert lock.held
    assert (tmp_path / "locks" / "gpu-0.lock").exists()
