"""One place that prints results: rich tables for people, JSON for programs (``--json``)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import sys
from typing import Any, Iterable, Sequence

import click
from rich.console import Console
from rich.table import Table

from .numbers import AsciiInt, FiniteFloat  # noqa: F401  (the numeric flags' types, importable from here)


class _Console(Console):
    """Rich's console, but a stdout pipe its reader closed raises ``BrokenPipeError`` as click's
    echo does, where rich (13.4 on) exits 1 by itself: the root group decides the exit code
    (``tuner.cli._TunerGroup.pipe_closed``: 0 for a command that only reads)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "stdout's reader went away")


def _width() -> int | None:
    """The console's width: piped into a file or another program, 160, so tables keep their rows on
    one line instead of wrapping to rich's default 80 columns; on a terminal, rich's own (``COLUMNS``,
    else the terminal's), unless ``COLUMNS`` is 0: rich takes that as it is and printed nothing at
    all (QA, qa157: ``COLUMNS=0 tuner space list eagle3`` showed the count line alone, exit 0); the
    terminal's size is taken then, as Python's ``shutil.get_terminal_size`` does (80 if it has none)."""
    if not sys.stdout.isatty():
        return 160
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) == 0:
        return shutil.get_terminal_size().columns or 80
    return None


console = _Console(width=_width())


def print_json(data: Any) -> None:
    """Machine-readable output on stdout, nothing else mixed in."""
    click.echo(json.dumps(data, indent=2, sort_keys=False, default=str))


def print_table(columns: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None) -> None:
    """A rich table; every cell as :func:`tuner.config.names.shown` prints it (a prompt's name or a
    dataset's category holding U+202E or ESC), and as text, not rich markup (QA: a name ``[red]x``
    lost its brackets)."""
    from rich.text import Text

    from ..config.names import shown

    table = Table(title=None if title is None else Text(shown(title)))
    for col in columns:
        table.add_column(Text(shown(col)), overflow="fold")
    for row in rows:
        table.add_row(*(Text("" if v is None else shown(v)) for v in row))
    console.print(table)


def heading(title: str, rest: str = "") -> None:
    """A command's heading line on stdout: ``title`` in bold, then ``rest``, both as
    :func:`tuner.config.names.shown` gives them and as text, not rich markup: a title holds a
    study's name or a confirmation's run id, which Optuna stores as anyone wrote them (QA, qa177: a
    study renamed ``a[/x]`` ended ``status`` and ``pareto`` in rich's MarkupError, ``a[red]b`` was
    printed ``ab``, and an ESC or a U+202E in a name reached the terminal)."""
    from rich.text import Text

    from ..config.names import shown

    console.print(Text.assemble((shown(title), "bold"), shown(rest)), highlight=False)


def say(text: str) -> None:
    """One text line of a command's output on stdout, as :func:`tuner.config.names.shown` gives it
    and as text, not rich markup: a status line may quote a server's log line or HTTP error body
    (a failed baseline's message), a dataset's name or a user's path."""
    from ..config.names import shown

    console.print(shown(text), markup=False, highlight=False)


def not_empty(instead: str):
    """A click option callback: an empty value (a script's unset ``"$VAR"``) is refused as
    ``error: OPTION: is empty: <instead>`` (exit 2), never read as the option left out (QA: `report
    -o ''` wrote NAME-report.html, `--png ''` the charts into the working folder, `run --workdir ''`
    used the study's workdir, `export --adaptive-out ''` wrote no policy, `compare -o ''` no page)."""

    def check(ctx, param, value):
        from ..config.yamlfile import ConfigError

        if value is not None and not str(value).strip():
            raise ConfigError(param.opts[0], "", f"is empty: {instead}")
        return value

    return check


def fail(message: str, code: int = 1) -> None:
    """Print one error line on stderr (:func:`tuner.config.names.shown`: a study or trial name from
    a user's file is printed escaped) and exit with ``code``."""
    from ..config.names import shown

    click.echo(shown(f"error: {message}"), err=True)
    sys.exit(code)


#: ``-f/--format`` of the listing commands (status, pareto, list): one formatter for all three.
FORMATS = ("table", "json", "csv")


def format_option(func):
    """``-f/--format table|json|csv``, and ``--json`` kept as the older spelling of ``-f json``."""
    func = click.option("--json", "as_json", is_flag=True, hidden=True, help="Same as -f json.")(func)
    return click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
                        help="table for people, json for programs, csv for spreadsheets.")(func)


def chosen_format(fmt: str, as_json: bool) -> str:
    return "json" if as_json else fmt


def print_csv(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """RFC 4180 CSV on stdout: a header line, then one line per row; None is an empty field."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if v is None else v for v in row])
    click.echo(buf.getvalue(), nl=False)
