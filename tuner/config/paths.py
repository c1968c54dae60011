"""The path keys of the tuner's files (``search_space``, ``bench.suite``, ``workdir``, simulator and
model profiles, the landscape table, a suite's prompt files and dataset): ``~`` and environment
variables (``$HOME``, ``${RUN}``) are refused, not expanded.

Why refused: a study file is read by every worker, on every node, as whoever runs it, so ``~`` would
name another folder on each, and the study stores the files it read as absolute paths; the storage
URL already refuses ``~`` the same way (:func:`tuner.config.study.sqlite_url_problem`). Taken
literally (as before) it was relative to the file's folder: a "file not found" that did not say
why, and ``workdir: ~/wd`` made a folder named ``~`` beside the study file.
"""

from __future__ import annotations

import os
import re
from typing import Annotated, Any

from pydantic import AfterValidator, StringConstraints


#: ``$NAME`` or ``${NAME}``, as a shell would expand it
VARIABLE = re.compile(r"\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)")


def not_under_home(value: Any) -> Any:
    """``value`` unchanged, unless it is text starting with ``~`` or holding an environment variable:
    ``ValueError`` saying it is not expanded and the path to write instead (the model's loader names
    the file and key). Environment variables for the same reason as ``~``: each worker's would
    differ, and only the storage URL reads one (``${VAR}``, for its password)."""
    if not isinstance(value, str):
        return value
    found = "~" if value.startswith("~") else (m.group(0) if (m := VARIABLE.search(value)) else None)
    if found is not None:
        expanded = os.path.expandvars(os.path.expanduser(value))
        spelled = f" ({expanded})" if expanded != value else ""
        raise ValueError(f"{value!r}: {found!r} is not expanded; write the path out{spelled}, or give it "
                         "relative to this file's folder")
    return value


def model_path_not_expanded(value: str) -> str:
    """``value`` (``server.model_path``, ``draft_model_path``) unchanged, unless it starts with ``~`` or
    holds an environment variable: ``ValueError`` naming it and the path to write. The launcher starts
    the server without a shell (an argv list), and SGLang 0.5.23 takes ``--model-path`` as written: no
    ``expanduser`` in ``configs/model_config.py`` or ``utils/hf_transformers/config.py``, and its
    ``--config`` loader, reading the export, expands nothing either. So ``~/models/kimi`` is no folder
    to it, nor a Hugging Face id (``~`` and ``$`` are no characters of one): every launch would fail.
    Unlike the tuner's own path keys, a model path is not read relative to the study file, so the fix
    is the path written out."""
    found = "~" if value.startswith("~") else (m.group(0) if (m := VARIABLE.search(value)) else None)
    if found is not None:
        expanded = os.path.expandvars(os.path.expanduser(value))
        spelled = f" ({expanded})" if expanded != value else ""
        raise ValueError(f"{value!r}: {found!r} is not expanded: the server is started without a shell and "
                         f"SGLang reads the path as written; write the path out{spelled}")
    return value


#: A path key's text (:func:`not_under_home`).
PathText = Annotated[str, AfterValidator(not_under_home)]
#: ... that may not be empty ("at least 1 character": the length is checked on the text as written).
NonEmptyPathText = Annotated[str, StringConstraints(min_length=1), AfterValidator(not_under_home)]


#: Characters of a file path that an SQLite URL would read as something else: ``%`` (SQLAlchemy
#: decodes ``%XX`` in the file name), ``?`` and ``#`` (a query, a fragment) and ``$`` (the tuner
#: refuses a ``$VAR`` inside a URL); ``%`` first, so the others' escapes are not escaped again.
_URL_ESCAPES = (("%", "%25"), ("?", "%3F"), ("#", "%23"), ("$", "%24"))


def sqlite_url(path: Any, scheme: str = "sqlite") -> str:
    """The SQLite storage URL of the file ``path`` (absolute), which SQLAlchemy reads back as that
    very file. QA: a study file in a folder ``a%20b`` had its database beside it opened as ``a b``
    (another folder's study, or "no such storage"), and one in ``h#sh``, ``q?m`` or ``do$llar`` was
    refused for an option or a ``$VARIABLE`` the user never wrote."""
    text = str(path)
    for char, escape in _URL_ESCAPES:
        text = text.replace(char, escape)
    return f"{scheme}:///{text}"


def is_bare_name(text: str) -> bool:
    """A name, not a path: no ``/`` and no ``.yaml``/``.yml`` ending. Where a key takes a shipped
    file by name (a search space, a suite, a simulator profile), such text is a name: shipped, or
    refused as unknown, never a file looked up in the current folder."""
    return "/" not in text and not text.endswith((".yaml", ".yml"))
