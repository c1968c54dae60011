"""``tuner study compare A B``: two studies side by side, in the terminal, as JSON, or as a page."""

from __future__ import annotations

from pathlib import Path

import click

from ..engine.storage import redact
from .output import not_empty, print_json, print_table, say
from .own_files import check_not_an_input
from .study_target import resolve_target, storage_option, storage_url


@click.command("compare")
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@storage_option
@click.option("--storage-b", default=None, metavar="URL", help="B's storage, when it is not A's.")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("-o", "--output", default=None, type=click.Path(dir_okay=False),
              callback=not_empty("give a file name, or leave -o out for no page"),
              help="Also write the comparison as one HTML page (no network needed to open it).")
def compare(a, b, storage, storage_b, fmt, output) -> None:
    """Compare two studies (study files, or names in --storage / --storage-b): hardware, SGLang
    version, workload, baselines, both fronts, the best of each objective, and the settings
    measured in both with B's speedup over A."""
    from ..config.files import check_output
    from ..engine.study import open_study
    from ..results.compare import compare_studies
    from ..results.compare_report import summary_rows, write_compare_page

    name_a, url_a, config_a = resolve_target(a, storage, reads_storage=True)
    # B's storage: --storage-b, else A's (a study file B keeps its own unless --storage is given)
    b_is_file = b.endswith((".yaml", ".yml")) or Path(b).is_file()
    url_for_b = storage_url(storage_b, "--storage-b") if storage_b is not None else storage or (None if b_is_file else url_a)
    name_b, url_b, config_b = resolve_target(b, url_for_b, reads_storage=True)
    if output:
        check_not_an_input(output, "-o", a, url_a, config_a)
        check_not_an_input(output, "-o", b, url_b, config_b)
        check_output(output, "-o")  # no missing folder is made, as for export and report
    cmp = compare_studies(open_study(name_a, url_a, tuner_only=True), open_study(name_b, url_b, tuner_only=True),
                          redact(url_a) or "", redact(url_b) or "")
    # The page first, then stdout: a reader that stops early (`| head`, a read command's exit 0) or a
    # full disk under stdout cannot cost the page asked for (QA, qa172: `compare A B -o page.html |
    # head -1` exited 0 and wrote no page); said after the tables, where it was.
    path = write_compare_page(cmp, output) if output else None
    if fmt == "json":
        print_json(cmp)
    else:
        print_table(["", "A", "B"], summary_rows(cmp), title="side by side")
        objectives = cmp["a"]["workload"]["objectives"]
        for side in ("a", "b"):
            s = cmp[side]
            print_table(["trial", "steps,topk,draft", *s["workload"]["objectives"]],
                        [[p["trial"], p["setting"], *(f"{v:.3f}" for v in p["values"])] for p in s["front"]],
                        title=f"{side.upper()}: Pareto front of {s['study']}")
        if cmp["common"]:
            print_table(["steps,topk,draft", "trial A", "trial B", *(f"A {o}" for o in objectives),
                         *(f"B {o}" for o in cmp["b"]["workload"]["objectives"]),
                         *((f"B/A {o}" for o in objectives) if cmp["same_objectives"] else [])],
                        [[c["setting"], c["trial_a"], c["trial_b"], *(f"{v:.3f}" for v in c["values_a"]),
                          *(f"{v:.3f}" for v in c["values_b"]),
                          *(f"{r:.2f}x" if r is not None else "" for r in (c["ratio_b_over_a"] or []))]
                         for c in cmp["common"]], title="settings measured in both")
        for w in cmp["warnings"]:
            say(f"warning: {w}")  # as text: an env variable's name ([/x]) is no rich markup
    if path is not None:
        click.echo(f"comparison page: {path}", err=True)
