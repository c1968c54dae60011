"""``tuner study report``: a self-contained HTML report of a study, and PNGs on request."""

from __future__ import annotations

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
    output = output or f"{name}-report.html"
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
