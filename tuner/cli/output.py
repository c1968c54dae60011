"""One place that prints results: rich tables for people, JSON for programs (``--json``)."""

from __future__ import annotations

import json
import sys
from typing import Any, Iterable, Sequence

import click
from rich.console import Console
from rich.table import Table

# Piped into a file or another program, tables keep their rows on one line instead of wrapping to
# rich's default 80 columns.
console = Console(width=None if sys.stdout.isatty() else 160)


def print_json(data: Any) -> None:
    """Machine-readable output on stdout, nothing else mixed in."""
    click.echo(json.dumps(data, indent=2, sort_keys=False, default=str))


def print_table(columns: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None) -> None:
    table = Table(title=title)
    for col in columns:
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row))
    console.print(table)


def fail(message: str, code: int = 1) -> None:
    """Print one error line on stderr and exit with ``code``."""
    click.echo(f"error: {message}", err=True)
    sys.exit(code)
