"""The path keys of the tuner's files (``search_space``, ``bench.suite``, ``workdir``, simulator and
model profiles, the landscape table, a suite's prompt files and dataset): ``~`` is refused, not
expanded.

Why refused: a study file is read by every worker, on every node, as whoever runs it, so ``~`` would
name another folder on each, and the study stores the files it read as absolute paths; the storage
URL already refuses ``~`` the same way (:func:`tuner.config.study.sqlite_url_problem`). Taken
literally (as before) it was relative to the file's folder: a "file not found" that did not say
why, and ``workdir: ~/wd`` made a folder named ``~`` beside the study file.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

from pydantic import AfterValidator, StringConstraints


def not_under_home(value: Any) -> Any:
    """``value`` unchanged, unless it is text starting with ``~``: ``ValueError`` saying ``~`` is not
    expanded and the path to write instead (the model's loader names the file and key)."""
    if isinstance(value, str) and value.startswith("~"):
        home = os.path.expanduser(value)
        spelled = f" ({home})" if home != value else ""
        raise ValueError(f"{value!r}: '~' is not expanded; write the path out{spelled}, or give it relative "
                         "to this file's folder")
    return value


#: A path key's text (:func:`not_under_home`).
PathText = Annotated[str, AfterValidator(not_under_home)]
#: ... that may not be empty ("at least 1 character": the length is checked on the text as written).
NonEmptyPathText = Annotated[str, StringConstraints(min_length=1), AfterValidator(not_under_home)]
