"""``tuner study list | delete | copy``: the studies of a storage, as whole things.

``list`` reads only. ``delete`` and ``copy`` always take the baseline companion (``NAME.baseline``)
with the study; ``delete`` asks first (``--yes`` for scripts, required without a terminal).
"""

from __future__ import annotations

import os
import sys

import click

from ..config.wording import counted
from ..config.yamlfile import ConfigError
from ..engine.storage import redact
from .output import chosen_format, format_option, print_csv, print_json, print_table
from .study_target import LOCAL_DB_DIRS, resolve_target, storage_option, storage_url


def _storages(storage: str | None) -> list[str]:
    """``--storage``, else ``$TUNER_STORAGE``, else every ``*.db`` here and in ``studies/`` (never a
    new file)."""
    if storage is not None or os.environ.get("TUNER_STORAGE"):
        return [storage_url(storage, "--storage" if storage is not None else "$TUNER_STORAGE")]
    files = [f for d in LOCAL_DB_DIRS for f in sorted(d.glob("*.db")) if f.is_file()]
    if not files:
        raise ConfigError("--storage", "", "no storage given, $TUNER_STORAGE is not set and there is no "
                          "*.db here or in studies/; give --storage URL")
    from ..config.paths import sqlite_url

    return [sqlite_url(f.resolve()) for f in files]


def _fmt(v, digits: int = 3) -> str:
    return "" if v is None else f"{v:.{digits}f}"


@click.command("list")
@storage_option
@format_option
def list_(storage, fmt, as_json) -> None:
    """Every study in the storage (default: $TUNER_STORAGE, else each *.db here and in studies/): trials,
    launches against the budget, best value of each objective, created, backend, SGLang version."""
    from ..engine.storage import open_storage
    from ..results.catalog import list_studies

    studies = []
    urls = _storages(storage)
    unreadable = []
    for url in urls:
        try:
            studies += list_studies(open_storage(url, create=False), redact(url) or "")
        except ConfigError as exc:
            if storage is not None or len(urls) == 1:
                raise  # the one storage asked for
            unreadable.append(str(exc))  # one bad *.db does not hide the others
    for line in unreadable:
        click.echo(f"warning: skipped {line}", err=True)
    fmt = chosen_format(fmt, as_json)
    if fmt == "json":
        print_json(studies)
        return
    columns = ["study", "trials", "launched/budget", "best", "created", "backend", "SGLang", "storage"]
    rows = []
    for s in studies:
        counts = ", ".join(f"{n} {k}" for k, n in sorted(s["counts"].items()))
        best = "; ".join(f"{k} {_fmt(v)}" for k, v in s["best"].items() if v is not None)
        rows.append([s["name"], f"{s['trials']}" + (f" ({counts})" if counts else ""),
                     f"{s['launched']}/{s['budget'] if s['budget'] is not None else '-'}", best,
                     s["created"] or ("incomplete" if s.get("incomplete") else ""),
                     f"(unreadable: {s['unreadable']})" if s.get("unreadable") else
                     s["backend"] or ("(not a tuner study)" if not s["tuner"] else ""),
                     ", ".join(s["sglang_versions"]), s["storage"]])
    if fmt == "csv":
        objectives = sorted({k for s in studies for k in s["best"]})
        print_csv(["study", "trials", "launched", "budget", *(f"best {o}" for o in objectives), "created",
                   "backend", "sglang_versions", "storage"],
                  [[s["name"], s["trials"], s["launched"], s["budget"], *(s["best"].get(o) for o in objectives),
                    s["created"], s["backend"], " ".join(s["sglang_versions"]), s["storage"]] for s in studies])
        return
    if not studies:
        click.echo("no studies")
        return
    print_table(columns, rows)
    for s in studies:
        if s.get("incomplete"):
            click.echo(f"warning: study {s['name']} is {s['incomplete']}", err=True)


@click.command("delete")
@click.argument("target", required=False, metavar="NAME|STUDY.yaml")
@click.option("--study", "study_name", default=None, help="The study's name (with --storage).")
@storage_option
@click.option("-y", "--yes", is_flag=True, help="Do not ask (needed when stdin is not a terminal).")
@click.option("--force", is_flag=True, help="Delete even with trials RUNNING (a dead worker's).")
def delete(target, study_name, storage, yes, force) -> None:
    """Delete a study and its companions (baseline, confirmation) from the storage.

    Server logs, suite results and artifacts (files under the workdir) stay where they are.
    """
    from ..engine.lifecycle import delete_study
    from ..engine.study import open_study

    name, url, _ = resolve_target(target, storage, study_name, reads_storage=True)
    if not yes:
        if not sys.stdin.isatty():
            raise ConfigError("delete", name, "would delete the study; confirm with --yes (stdin is not a terminal)")
        n = len(open_study(name, url, companions=True).trials)
        click.confirm(f"delete study {name} ({counted(n, 'trial')}) and its companions "
                      f"({name}.baseline, {name}.confirm) from {redact(url)}?", abort=True)
    deleted = delete_study(name, url, force=force)
    click.echo(f"deleted {', '.join(deleted)} from {redact(url)}")


@click.command("copy")
@click.argument("source", metavar="NAME|STUDY.yaml")
@click.argument("new_name", metavar="NEW_NAME")
@storage_option
@click.option("--to-storage", default=None, metavar="URL", help="Copy into this storage (default: the same one).")
def copy(source, new_name, storage, to_storage) -> None:
    """Copy a study and its baseline under a new name, or into another storage.

    Trials keep their numbers, values, constraints and attributes; a trial running in the source is
    failed in the copy and its setting queued again. Run the copy with `tuner study run --study
    NEW_NAME --storage URL` (its stored config has the new name): e.g. to extend a finished study
    without touching the original, or to move a night's study from SQLite into PostgreSQL.
    """
    from ..engine.lifecycle import CopyInterrupted, copy_study

    name, url, _ = resolve_target(source, storage, reads_storage=True)
    to_url = storage_url(to_storage, "--to-storage") if to_storage is not None else None
    try:
        res = copy_study(name, url, new_name, to_url)
    except CopyInterrupted as exc:  # Ctrl-C, and its part copy still there: the shell's 130, and the way out
        click.echo(f"interrupted; {exc}", err=True)
        raise click.exceptions.Exit(130) from None
    click.echo(f"copied {res.source} ({counted(res.trials, 'trial')}) to {res.destination} in "
               f"{redact(to_url or url)}"
               + _running_note(res))


def _running_note(res) -> str:
    """What became of the trials running in the source: failed in the copy, each setting queued
    again; one asked but not yet given its setting has nothing to queue (QA: copy said "queued
    again" of such a trial)."""
    if not res.running:
        return ""
    queued = [n for n in res.running if n not in res.unqueued]
    if not res.unqueued:
        return f"; trials {res.running} were running: failed in the copy, their settings queued again"
    return (f"; trials {res.running} were running: failed in the copy"
            + (f", the settings of {queued} queued again" if queued else "")
            + f"; {res.unqueued} had no setting yet: nothing to queue")
