"""The study's own files, which no command's output may overwrite: writing a report or an export over
the study file, its search-space file or its SQLite database would destroy the study (its results,
or the file every later command reads)."""

from __future__ import annotations

from pathlib import Path

from ..config.study import StudyConfig
from ..config.yamlfile import ConfigError
from ..engine.urls import sqlite_path


def check_not_an_input(output: str | Path, flag: str, target: str | None, url: str | None,
                       config: StudyConfig | None = None) -> None:
    """Refuse (:class:`ConfigError`, exit 2) an output path that is the study file (``target``, when
    it is a file), its search-space file, or the SQLite database of ``url``: the same file, however
    it is spelled (relative, through a link)."""
    out = Path(output)
    if not out.exists():
        return
    own = {"the study file": target if target and Path(target).is_file() else None,
           "the study's search-space file": config.search_space if config is not None else None,
           "the study's storage": sqlite_path(url) if url else None}
    for what, path in own.items():
        try:
            same = path is not None and Path(path).exists() and out.samefile(path)
        except OSError:
            same = False
        if same:
            raise ConfigError(flag, str(output), f"is {what}: writing there would destroy it; give another path")
