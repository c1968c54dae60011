"""``tuner study init FILE [--backend sim|model|sglang] [--name NAME]``: write a starter study file
(:mod:`tuner.config.starters`), so that a tuner installed from the index, with no checkout at hand,
has a study to run: ``sim`` and ``model`` run as written, ``sglang`` after its draft model is set.

FILE is never overwritten: an existing one (a dangling link too) is refused with one line, exit 2,
nothing written, and so is a name that is no study name, a folder that does not exist, or a FILE
named as the study itself (``demo``: its trials' folder, ``demo/`` beside it, would be the file).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import click

from ..config.starters import STARTERS, starter_text
from ..config.study import study_name_problem
from ..config.yamlfile import ConfigError

#: what the next line says each starter is, and what to do with it
_NEXT = {
    "sim": ("on the simulated SGLang server (a few minutes, no GPU)", "tuner study run {f} && "
            "tuner study export {f} --pick knee -o best.yaml"),
    "model": ("on the performance model alone (no server, seconds)", "tuner study run {f} && "
              "tuner study export {f} --pick knee -o best.yaml"),
    "sglang": ("on SGLang (a GPU node)", "set server.draft_model_path (and server.python) in {f}, then on "
               "the GPU node: tuner doctor {f} && tuner study run {f}"),
}


def _exists(path: str) -> ConfigError:
    return ConfigError(path, "", "exists; nothing was written (init never overwrites a file): give another "
                                 "FILE, or remove this one first")


@click.command("init")
@click.argument("study_file", metavar="FILE")
@click.option("--backend", type=click.Choice(list(STARTERS)), default="sim", show_default=True,
              help="sim: the simulated server; model: the performance model, no server; sglang: a GPU node.")
@click.option("--name", default=None, help="The study's name (default: FILE's name without .yaml).")
def init(study_file, backend, name) -> None:
    """Write a starter study file FILE, with comments: the demo study on the simulated server
    (--backend sim), which runs as written from any folder; the same on the performance model
    (model); or the article's setup on SGLang (sglang). It names the shipped search space (eagle3)
    and suite; FILE is never overwritten.
    """
    from ..config.files import check_output, write_new_file

    if not study_file:  # Path("") is the current folder (QA: "FILE: .: is a folder; give a file name")
        raise ConfigError("FILE", "", "is empty; give the study file's name, e.g. demo.yaml")
    if os.path.lexists(study_file):
        raise _exists(study_file)
    check_output(study_file, "FILE")  # its folder exists and is writable; nothing is made for it
    if name is None:
        base = Path(study_file).name
        name = base[: -len(Path(base).suffix)] if base.endswith((".yaml", ".yml")) else base
        problem = study_name_problem(name)
        if problem:
            raise ConfigError(study_file, "name", f"the study is named after the file: {problem}; "
                              "or give --name NAME")
    if Path(study_file).name == name:
        # the starter sets no workdir: its default, NAME/ beside the file, would be the file itself, and
        # the `run` the next line names refused it (QA: `init demo` wrote a file that never ran)
        raise ConfigError(study_file, "", f"study {name} keeps its trials in the folder {name}/ beside its "
                          f"file, which would be this file itself; name the file {name}.yaml (or give "
                          "--name NAME)")
    text = starter_text(backend, name)
    try:
        write_new_file(study_file, text)
    except FileExistsError:  # made by someone else since the check above
        raise _exists(study_file) from None
    what, next_step = _NEXT[backend]
    click.echo(f"wrote {study_file}: study {name} {what}")
    click.echo("next: " + next_step.format(f=shlex.quote(study_file)))
