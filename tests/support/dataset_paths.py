"""Shared by the tests of a ``dataset.path`` not found where the file meant is there under the path
written another way: what an inline suite naming ``given`` says, and its "not found" line."""

from __future__ import annotations

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError


def said(tmp_path, given: str) -> str:
    """The ConfigError an inline suite whose ``dataset.path`` is ``given`` raises, read from ``tmp_path``."""
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": given}}, tmp_path)
    return str(err.value)


def not_found(tmp_path, given: str) -> str:
    """The line for ``given`` not found, with no file near it."""
    return (f"<inline suite>: dataset.path: {tmp_path / given} not found (a relative path is read from {tmp_path}: "
            "the suite file's folder, or the study file's for an inline suite)")
