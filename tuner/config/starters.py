"""Starter study files (``tuner study init``): the example studies, shipped in the package so that a
tuner installed from the index, with no checkout at hand, has one to start from.

Each backend has one: ``sim`` the simulated server (the README's demo, a few minutes), ``model`` the
performance model alone (no server, seconds), ``sglang`` the article's setup on a GPU node (edit its
``draft_model_path`` first). The files are ``tuner/config/studies/*.yaml``, byte for byte the
checkout's ``studies/*.yaml`` (tests/cli/test_study_init.py keeps them so): one text, two places.
Each names the shipped search space (``search_space: eagle3``) and shipped suites and profiles only,
so it loads from any folder. :func:`starter_text` gives the text with the study's ``name`` set.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from .. import shipped
from .study import study_name_problem
from .yamlfile import ConfigError, yaml_text

STUDIES_DIR = shipped(__package__, "studies")
#: backend -> the shipped study file's stem; the first is ``tuner study init``'s default
STARTERS = {"sim": "sim-demo", "model": "model-demo", "sglang": "kimi-k2.6-tp8"}
#: the study file's ``name`` line (one, at the top level)
_NAME_LINE = re.compile(r"^name: .*$", re.M)


def starter_path(backend: str) -> Path:
    """The shipped starter study of ``backend`` (a key of :data:`STARTERS`)."""
    return STUDIES_DIR / f"{STARTERS[backend]}.yaml"


def starter_text(backend: str, name: str, source: str = "--name") -> str:
    """The starter study of ``backend``, its comments kept, named ``name``: :class:`ConfigError`
    naming ``source`` when ``name`` is no study name (:func:`study_name_problem`). The name is
    written as the tuner's reader reads it back as text (``'123'``, ``'true'``, ``'1e3'`` quoted)."""
    problem = study_name_problem(name)
    if problem:
        raise ConfigError(source, name, problem)
    text = starter_path(backend).read_text(encoding="utf-8")
    line = yaml.safe_dump({"name": name}, default_flow_style=False).strip()
    if yaml_text(line) != {"name": name}:
        # PyYAML's dumper quotes what YAML 1.1 reads as a number; the tuner reads YAML 1.2, where `1e3`,
        # `1e-3` and `0o17` are numbers too (QA: `init 1e3.yaml` wrote `name: 1e3`, which every command
        # then refused as "got 1000.0"). A study name is letters, digits and ._-: no quote to escape.
        line = f"name: '{name}'"
    return _NAME_LINE.sub(lambda _: line, text, count=1)
