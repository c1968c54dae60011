"""Session-wide settings for every test."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def gpu_lock_dir(tmp_path_factory):
    """The GPU locks of SGLang launches (tuner.server.gpu_lock) live in the session's own folder, not
    in the host-wide /tmp/tuner-gpu-locks: tests never wait for, nor block, a real tuner or another
    test session on this machine. Child processes inherit it."""
    old = os.environ.get("TUNER_GPU_LOCK_DIR")
    path = tmp_path_factory.mktemp("gpu-locks")
    os.environ["TUNER_GPU_LOCK_DIR"] = str(path)
    yield path
    if old is None:
        os.environ.pop("TUNER_GPU_LOCK_DIR", None)
    else:
        os.environ["TUNER_GPU_LOCK_DIR"] = old
