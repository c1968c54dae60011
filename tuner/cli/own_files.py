"""The files a command reads, which no command's output may overwrite: writing a report or an export
over the study file, its search-space file, its suite file (or a prompt file or dataset of its suite),
its simulator profile, its landscape table or its SQLite database would destroy the study (its
results, or a file every later command reads); writing `sim landscape --table` over its own --space,
--suite or --profile would destroy the command's input (QA: each was written over, exit 0)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ..config.space import SPACES_DIR, is_shipped_space
from ..config.study import StudyConfig
from ..config.suite import SHIPPED_SUITES, shipped_suite_file
from ..config.yamlfile import ConfigError, read_yaml
from ..engine.urls import sqlite_path


def check_not_among(output: str | Path, flag: str, inputs: Iterable[tuple[str, str | Path | None]]) -> None:
    """Refuse (:class:`ConfigError`, exit 2) an ``output`` that is one of ``inputs`` (``(what,
    path)`` pairs, ``what`` as in "is the study's suite file"): the same file, however it is spelled
    (relative, through a link). A missing output or input is no conflict."""
    from ..config.files import check_usable

    check_usable(output, flag)
    out = Path(output)
    if not out.exists():
        return
    for what, path in inputs:
        try:
            same = path is not None and Path(path).exists() and out.samefile(path)
        except OSError:
            same = False
        if same:
            raise ConfigError(flag, str(output),
                              f"is {what}: writing there would destroy it; give another path")


def _suite_files(suite, folder: Path | None, owner: str = "the study's suite") -> list[tuple[str, Path]]:
    """A suite's own files: its prompt files and dataset, relative to ``folder`` (the suite file's
    folder; an inline suite's: the study file's). Relative ones are skipped without a folder (a
    study read from storage alone: they were relative to a folder this command does not know)."""
    if not isinstance(suite, dict):
        return []
    named: list[tuple[str, str]] = []
    for prompt in suite.get("prompts") or []:
        if isinstance(prompt, dict) and isinstance(prompt.get("file"), str):
            named.append((f"a prompt file of {owner}", prompt["file"]))
    dataset = suite.get("dataset")
    if isinstance(dataset, dict) and isinstance(dataset.get("path"), str):
        named.append((f"the dataset of {owner}", dataset["path"]))
    out = []
    for what, text in named:
        path = Path(text)
        if not path.is_absolute():
            if folder is None:
                continue
            path = folder / path
        out.append((what, path))
    return out


def suite_file_inputs(suite_path: str | Path, what: str,
                      owner: str = "the study's suite") -> list[tuple[str, str | Path | None]]:
    """A suite file (``what``: how to call it) and its prompt files and dataset (``owner``: whose
    they are, e.g. "the --suite file" for ``tuner bench``, which has no study), for
    :func:`check_not_among`."""
    suite_path = Path(suite_path)
    own: list[tuple[str, str | Path | None]] = [(what, suite_path)]
    try:
        own += _suite_files(read_yaml(suite_path), suite_path.resolve().parent, owner)
    except (ConfigError, OSError):
        pass  # an unreadable suite file holds no file to spare
    return own


def study_inputs(target: str | None, url: str | None,
                 config: StudyConfig | None) -> list[tuple[str, str | Path | None]]:
    """Every file the study reads, as ``(what, path)`` for :func:`check_not_among`."""
    study_file = Path(target) if target and Path(target).is_file() else None
    own: list[tuple[str, str | Path | None]] = [
        ("the study file", study_file), ("the study's storage", sqlite_path(url) if url else None)]
    if config is None:
        return own
    space = config.search_space  # a shipped name: its file in the package (tuner.config.space)
    own.append(("the study's search-space file",
                SPACES_DIR / f"{space}.yaml" if is_shipped_space(space) else space))
    server = config.server
    for what, path in (("the study's simulator profile", server.sim.profile),
                       ("the study's simulator profile", server.model.profile if server.model else None),
                       ("the study's landscape table", server.model.landscape if server.model else None)):
        if path and Path(path).is_absolute():  # a shipped profile is a bare name; a loaded path is absolute
            own.append((what, path))
    suite = config.bench.suite
    folder = study_file.resolve().parent if study_file else None
    if isinstance(suite, str) and suite in SHIPPED_SUITES:
        # a shipped suite's file and dataset, in the package (QA: `tuner bench --json` wrote over them;
        # an export or report -o there would too)
        own += suite_file_inputs(shipped_suite_file(suite), "the study's suite file")
    elif isinstance(suite, str):
        suite_path = Path(suite) if Path(suite).is_absolute() or folder is None else folder / suite
        own += suite_file_inputs(suite_path, "the study's suite file")
    else:
        own += _suite_files(suite, folder)
    return own


def check_not_an_input(output: str | Path, flag: str, target: str | None, url: str | None,
                       config: StudyConfig | None = None) -> None:
    """Refuse (:class:`ConfigError`, exit 2) an output path that is one of the study's files
    (:func:`study_inputs`): the study file (``target``, when it is a file), its search-space file,
    suite file and the suite's prompt files and dataset, its profile or landscape table, or the
    SQLite database of ``url``: the same file, however it is spelled (relative, through a link)."""
    check_not_among(output, flag, study_inputs(target, url, config))
