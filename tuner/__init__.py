"""tuner: unattended tuning of SGLang's EAGLE-3 speculative decoding flags with Optuna.

Public API: :class:`tuner.sglang.rules.SpecConfig`, :func:`tuner.sglang.rules.resolve`,
:class:`tuner.config.space.SearchSpace`, :func:`tuner.config.study.load_study`. Everything else is internal.
"""

from __future__ import annotations

import sys
from pathlib import Path

__version__ = "0.1.0"

#: the private folder the package's data files were copied to when it was imported from a zip
_unzipped: Path | None = None


def shipped(package: str, name: str) -> Path:
    """The file or folder ``name`` shipped inside the already imported ``package`` (``"tuner.sim"``,
    ``"profiles"``), as a path the ordinary file functions open.

    Installed or checked out, that is the package's own folder, as before. Imported from a zip
    archive (the wheel itself, or a zipapp, on ``sys.path``: zipimport), ``Path(__file__)`` names no
    folder and every open under it failed with NotADirectoryError (QA, qa179): then the data files of
    the whole package are copied once into a private temporary folder, removed at exit, in the
    package's layout, so references between them (a shipped suite's ``../datasets/...``) hold. A copy
    the disk refuses leaves the path inside the archive, which fails where it is opened, as before.
    """
    here = Path(sys.modules[package].__file__).parent
    if here.is_dir():
        return here / name
    global _unzipped
    if _unzipped is None:
        try:
            _unzipped = _copy_data_files()
        except OSError:
            return here / name
    return _unzipped.joinpath(*package.split("."), name)


def _copy_data_files() -> Path:
    import atexit
    import shutil
    import tempfile
    from importlib.resources import files

    root = Path(tempfile.mkdtemp(prefix="tuner-data-"))
    atexit.register(shutil.rmtree, root, True)
    todo = [(files(__name__), root / __name__)]
    while todo:
        source, target = todo.pop()
        for entry in source.iterdir():
            if entry.is_dir():
                if entry.name != "__pycache__":
                    todo.append((entry, target / entry.name))
            elif not entry.name.endswith((".py", ".pyc")):
                target.mkdir(parents=True, exist_ok=True)
                (target / entry.name).write_bytes(entry.read_bytes())
    return root
