"""The GPU lock folder as a user's environment makes it: ``TUNER_GPU_LOCK_DIR`` naming a folder whose
parents do not exist yet, made under ``umask 077``, and a folder that cannot be reached.

QA (qa157): root's tuner under ``umask 077`` with ``TUNER_GPU_LOCK_DIR=/scratch/locks/gpu`` made
``/scratch/locks`` 0700 (only the lock folder itself was opened to everyone), so another user's
tuner could not reach its 1777 folder, and ended in a ``PermissionError`` traceback from
``Path.is_dir()`` rather than the one line naming the folder and the variable. Root passes every
permission check, so the unreachable folder is shown here by a name too long, the same path.
"""

import os
import stat

import pytest

from tuner.server.gpu_lock import LOCK_DIR_VAR, GpuLock, GpuLockError


@pytest.fixture
def umask_077():
    old = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(old)


def test_missing_parents_are_made_open_to_every_user_whatever_the_umask(tmp_path, umask_077, monkeypatch):
    locks = tmp_path / "scratch" / "locks" / "gpu"
    monkeypatch.setenv(LOCK_DIR_VAR, str(locks))
    with GpuLock(["0"]) as lock:
        assert lock.held
    assert stat.S_IMODE(locks.stat().st_mode) == 0o1777
    for parent in (locks.parent, locks.parent.parent):
        assert stat.S_IMODE(parent.stat().st_mode) == 0o755, parent
    assert stat.S_IMODE((locks / "gpu-0.lock").stat().st_mode) == 0o666


def test_an_existing_parent_is_left_as_it_is(tmp_path, umask_077):
    tmp_path.chmod(0o711)
    with GpuLock(None, directory=tmp_path / "gpu") as lock:
        assert lock.held
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o711
    assert stat.S_IMODE((tmp_path / "gpu").stat().st_mode) == 0o1777


def test_a_folder_that_cannot_be_reached_is_one_error_naming_the_variable(tmp_path, monkeypatch):
    locks = tmp_path / ("x" * 300) / "gpu"  # ENAMETOOLONG on the stat, as EACCES past a 0700 parent
    monkeypatch.setenv(LOCK_DIR_VAR, str(locks))
    lock = GpuLock(["0"])
    with pytest.raises(GpuLockError) as caught:
        lock.acquire()
    assert f"cannot reach the GPU lock folder {locks}" in caught.value.strerror
    assert LOCK_DIR_VAR in caught.value.strerror and not lock.held
