"""``tuner study report``: a self-contained HTML report of a study, and PNGs on request."""

from __future__ import annotations

import os

import click

from .output import fail, not_empty
from .own_files import check_not_an_input
from .study_target import resolve_target, storage_option


@click.command("report")
@click.argument("target", required=False)
@click.option("--study", "study_name", default=None, help="The study's name (with --storage).")
@storage_option
@click.option("-o", "--output", default=None, type=click.Path(dir_okay=False),
              callback=not_empty("give a file name, or leave -o out for NAME-report.html"),
              help="The HTML file to write (default: NAME-report.html).")
@click.option("--png", "png_dir", default=None, type=click.Path(file_okay=False),
              callback=not_empty("give a folder, or leave --png out for no PNGs"),
              help="Also write every chart as a PNG into this folder.")
def report(target, study_name, storage, output, png_dir) -> None:
    """One HTML page of a study that opens with no network: the Pareto front, throughput and speedup
    against concurrency, accept length, optimization history, importances, failed trials."""
    from ..engine.study import open_study
    from ..results.report import check_page_beside_pngs, write_report

    if png_dir is not None:
        try:
            import matplotlib  # noqa: F401 - checked before anything is written
        except ImportError:
            # one line, as every bad flag (QA, qa134: click's usage block came first)
            fail("--png needs matplotlib: pip install 'sglang-spec-tuner[report]' (from a clone: pip install -e "
                 "'.[report]'); the HTML page alone needs no extra", 2)
    from ..config.files import check_output

    name, url, config = resolve_target(target, storage, study_name, reads_storage=True)
    if output is None:
        output = default_output(name)
    check_not_an_input(output, "-o", target, url, config)
    # before anything is read or written: one line, not a traceback; no missing folder is made
    check_output(output, "-o")
    if png_dir is not None:
        check_output(png_dir, "--png", folder=True)
        check_page_beside_pngs(output, png_dir)
    files = write_report(open_study(name, url, tuner_only=True), output, png_dir)
    from ..config.names import shown

    click.echo(shown(f"report: {files.html}"))  # paths as given: escaped, as every path a user names
    if files.pngs:
        click.echo(shown(f"{len(files.pngs)} PNGs in {png_dir}"))


def default_output(name: str) -> str:
    """``NAME-report.html``, in the working folder, when the study's name can be that file's name.
    A study named by another tool or Optuna itself (a name the tuner's files never take) with a
    ``/`` in it (``../up``, ``a/b``, ``/srv/x``), or too long for one file name (255 bytes, Linux's
    NAME_MAX), names no file here: one line, exit 2, asking for ``-o`` (QA: ``--study ../up`` wrote
    ``../up-report.html`` into the parent folder, ``/srv/x`` wrote ``/srv/x-report.html``, ``a/b`` said
    "-o: a/b-report.html: folder a does not exist" of a flag never given, 300 characters "File name
    too long"). So does a name holding a character the report line escapes (a newline, an ESC, a
    U+202E: :func:`tuner.config.names.shown`): the file would be named otherwise than the line says
    (QA, qa177: ``--study $'a\\nb'`` wrote a file named ``a``, newline, ``b-report.html`` and said
    "report: a\\x0ab-report.html", which names no file). Spaces, quotes and emoji stay in the name as
    they are."""
    from ..config.names import shown

    output = f"{name}-report.html"
    try:
        too_long = len(os.fsencode(output)) > 255
    except UnicodeEncodeError:  # a lone surrogate, in no file-system encoding
        too_long = True
    if too_long or any(c in name for c in (os.sep, os.altsep or os.sep, "\0")) or shown(name) != name:
        fail(f"report: study {name!r} has a name that is no file name here (it holds a '/' or a control "
             "character, or is too long for one); give the page's file with -o FILE.html", 2)
    return output
