"""``tuner sim landscape``: the performance model's figures for every setting of a search space."""

from __future__ import annotations

import click

from ..config.wording import counted
from ..config.yamlfile import ConfigError
from .numbers import AsciiInt, ascii_problem
from .output import fail, not_empty, print_json, print_table


def _concurrencies(ctx, param, value: str) -> tuple[int, ...]:
    for part in value.split(","):  # ASCII digits, as every numeric flag (tuner.cli.numbers)
        problem = part.strip() and ascii_problem(part.strip(), "integer")
        if problem:
            raise click.BadParameter(problem)
    try:
        out = tuple(int(v) for v in value.split(",") if v.strip())
    except ValueError:
        raise click.BadParameter(f"{value!r}: expected comma-separated positive integers, e.g. 1,32")
    if not out or min(out) < 1:
        raise click.BadParameter(f"{value!r}: expected comma-separated positive integers, e.g. 1,32")
    from ..config.suite import MAX_CONCURRENCY

    if max(out) > MAX_CONCURRENCY:  # a suite's cap (QA: 10**23 ran the model for ever)
        raise click.BadParameter(f"{max(out)} is more than the tuner's cap of {MAX_CONCURRENCY} requests at once")
    return out


def _profile(ctx, param, value: str) -> str:
    """``--profile``: not empty, and not a special file (a device such as /dev/null, a pipe): the
    simulator's profile reader calls one "file not found" (QA), so it is said here as ``--suite`` and
    ``--space`` say it: not a regular file."""
    import os

    from ..config.yamlfile import check_regular_file
    from ..sim.profile import PROFILES_DIR

    value = not_empty("give a shipped profile's name or a profile YAML file, or leave --profile out")(ctx, param, value)
    shipped = (PROFILES_DIR / f"{value}.yaml").is_file() and "/" not in value
    if not shipped and os.path.exists(value) and not os.path.isdir(value) and not os.path.isfile(value):
        check_regular_file(value)
    return value


#: --space's default: the shipped EAGLE-3 space, by name (tuner.config.space.SHIPPED_SPACES)
DEFAULT_SPACE = "eagle3"


@click.command("landscape")
@click.option("--profile", "profile", default="k2.6-tp8-pcie", show_default=True,
              callback=_profile,
              help="Simulator profile: a shipped name or a YAML file.")
@click.option("--space", "space_file", default=DEFAULT_SPACE, show_default=True, metavar="SPACE",
              callback=not_empty("give a shipped space's name or a search-space YAML file, or leave --space out"),
              help="Search space: a shipped one (eagle3) or a YAML file.")
@click.option("--concurrency", "concurrencies", default="1,32", show_default=True,
              callback=_concurrencies, help="Sweep concurrencies, comma-separated.")
@click.option("--suite", default="seed", show_default=True,
              callback=not_empty("give a shipped suite's name or a suite YAML file, or leave --suite out"), help="Benchmark suite: a shipped one (seed, quick, mixed, sharegpt-mini) or a file.")
@click.option("--top", "top", default=10, show_default=True, type=AsciiInt(min=1),
              help="Rows shown per objective in the table.")
@click.option("--json", "as_json", is_flag=True, help="Print every row, the front and the optima as JSON.")
@click.option("--table", "table_path", default=None, type=click.Path(dir_okay=False),
              callback=not_empty("give a file name, or leave --table out"),
              help="Also write a landscape table (FILE.json) that server.backend: model and "
                   "benchmarks/search_efficiency.py --landscape read.")
def landscape(profile, space_file, concurrencies, suite, top, as_json, table_path) -> None:
    """Expected figures of every valid setting of a search space, from the model alone (no server).

    Objectives are the study's defaults: single_speedup and speedup at the largest concurrency.
    The table shows the baseline, the best settings by each objective and the true Pareto front;
    --json prints all rows.
    """
    from pathlib import Path

    from ..sim.landscape import landscape as compute

    if table_path:
        from ..config.files import check_output, unusable_path
        from ..config.space import SPACES_DIR, is_shipped_space
        from .own_files import check_not_among

        # before the (slow) model runs, and never over this command's own inputs (QA: --table
        # eagle3.yaml wrote the table over the search space, exit 0), a shipped space's file included
        shipped = SPACES_DIR / f"{space_file}.yaml" if is_shipped_space(space_file) else space_file
        inputs = [("the --space file", shipped), ("the --suite file", suite),
                  ("the --profile file", profile)]
        try:
            check_not_among(table_path, "--table", [(what, p) for what, p in inputs
                                                   if not unusable_path(p) and Path(p).is_file()])
            check_output(table_path, "--table")  # no missing folder is made, as for every output
        except ConfigError as exc:
            fail(str(exc), 2)
    try:
        from ..sim.model import PerfModel
        from ..sim.profile import load_profile

        # the --suite file is held to the suite schema by tuner.sim.landscape.load_suite_inputs
        model = PerfModel(load_profile(profile))
        result = compute(model, space_file, concurrencies=concurrencies, suite=suite)
    except ConfigError as exc:
        fail(str(exc), 2)
    if table_path:
        import json

        from ..config.files import write_text_atomic
        from ..sim.landscape import table_that_fits

        from ..config.landscape import parse_landscape

        try:  # a setting the GPUs cannot hold fails at launch on the profile: the table says so
            table, left_out = table_that_fits(result, model)
            # read back as a study and the benchmark read it (QA: a profile at 1000 s an all-reduce
            # wrote a baseline of 0.0 tok/s, "wrote ...", exit 0, and no study could load the file)
            parse_landscape(table, table_path)
        except ConfigError as exc:
            fail(f"--table: profile {result.profile}: {exc.key}: {exc.message}: the model's figures are no "
                 "server's (check the profile's hardware and runtime figures for a unit slip); no table "
                 "written", 2)
        except ValueError as exc:
            fail(f"--table: {exc}; no table written", 2)
        write_text_atomic(table_path, json.dumps(table, indent=1) + "\n")
        fit = (f" ({left_out} of them listed as failed, oom: they do not fit in memory at concurrency "
               f"{max(result.concurrencies)}, and a study on the profile fails them so)") if left_out else ""
        n = len(table["configs"])
        click.echo(f"wrote {table_path}: {counted(n, 'setting')} of profile {result.profile}{fit}",
                   err=True)
    if as_json:
        print_json(result.to_dict())
        return
    concs = result.concurrencies
    columns = ["steps", "topk", "draft", "accept", "single tok/s", "single x"]
    columns += [f"tok/s@{c}" for c in concs] + [f"x@{c}" for c in concs]

    def cells(row):
        c = row.config
        head = ["-", "-", "-"] if c is None else [c.num_steps, c.eagle_topk, c.num_draft_tokens]
        return (head + [f"{row.accept_length:.2f}", f"{row.single_tok_per_s:.1f}", f"{row.single_speedup:.2f}"]
                + [f"{row.tok_per_s[k]:.1f}" for k in concs] + [f"{row.speedup[k]:.2f}" for k in concs])

    where = f"profile {result.profile}, suite {result.suite}"
    print_table(columns, [cells(result.baseline)], title=f"Autoregressive baseline ({where})")
    for objective in result.objectives:
        print_table(columns, [cells(r) for r in result.best(objective, top)],
                    title=f"Top {top} by {objective}")
    print_table(columns, [cells(r) for r in result.front],
                title=f"Pareto front ({' vs '.join(result.objectives)})")
    click.echo(f"{len(result)} valid effective settings in {space_file}")
