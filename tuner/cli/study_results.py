"""``tuner study pareto`` and ``tuner study export``: the front, and the file SGLang loads.

Both read storage only. Bad requests (unknown study, a trial number that does not exist, a bad
output path) exit 2; a study with nothing to offer (no completed trial, no feasible pick) exits 1.
Either way: one line on stderr and no file written.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from ..config.names import shown
from ..config.wording import counted
from .output import (FiniteFloat, chosen_format, fail, format_option, heading, not_empty, print_csv,
                     print_json, print_table, say)
from .own_files import check_not_an_input
from .study_target import resolve_target, storage_option


def _open(target, study_name, storage):
    from ..engine.study import open_study

    name, url, _ = resolve_target(target, storage, study_name, reads_storage=True)
    return open_study(name, url, tuner_only=True), url


@click.command("pareto")
@click.argument("target", required=False, metavar="NAME|STUDY.yaml")
@click.option("--study", "study_name", default=None, help="The study's name (with --storage).")
@storage_option
@click.option("--min-speedup-c32", type=FiniteFloat(min=0), default=None, metavar="X",
              help="Only trials whose speedup at concurrency 32 is at least X.")
@format_option
def pareto(target, study_name, storage, min_speedup_c32, fmt, as_json) -> None:
    """The non-dominated settings: both objectives, tok/s at every concurrency, accept length,
    with the knee and the two extremes marked."""
    from ..results.pareto import PickError, front_data, study_front

    study, _ = _open(target, study_name, storage)
    try:
        front = study_front(study, min_speedup_c32)
    except PickError as exc:
        fail(str(exc))
    fmt = chosen_format(fmt, as_json)
    if fmt == "json":
        print_json(front_data(front))
    elif fmt == "csv":
        print_csv(*front_rows(front))
    else:
        print_front(front)


def front_rows(front) -> tuple[list[str], list[list]]:
    """The front as flat rows (``-f csv``): the baseline first (trial ``baseline``), numbers unformatted."""
    b = front.baseline or {}
    cs = front.concurrencies
    columns = ["trial", "steps", "topk", "draft", *front.objectives, "single_tok_per_s",
               *(f"tok_per_s@{c}" for c in cs), "accept_length", "marks", "same_as"]
    rows = [["baseline", None, None, None, *([None] * len(front.objectives)), b.get("single_tok_per_s"),
             *(b.get(f"tok_per_s@{c}") for c in cs), None, "", ""]]
    for p in front.points:
        e, a = p.record.effective, p.record.attrs
        rows.append([p.number, e.num_steps, e.eagle_topk, e.num_draft_tokens, *p.values, a.get("single_tok_per_s"),
                     *(a.get(f"tok_per_s@{c}") for c in cs), a.get("accept_length"),
                     "; ".join(r.replace("max ", "best ") for r in p.roles), " ".join(map(str, p.same_as))])
    return columns, rows


@click.command("export")
@click.argument("target", required=False, metavar="NAME|STUDY.yaml")
@click.option("--study", "study_name", default=None, help="The study's name (with --storage).")
@storage_option
@click.option("--pick", default=None, metavar="single|throughput|knee|TRIAL",
              help="Which setting: the best single-request speedup, the best throughput, the knee of "
                   "the front, or a trial number.")
@click.option("--min-speedup-c32", type=FiniteFloat(min=0), default=None, metavar="X",
              help="Only trials whose speedup at concurrency 32 is at least X are eligible.")
@click.option("-o", "--output", default=None, type=click.Path(dir_okay=False),
              help="Write here (atomically). Default: print to stdout.")
@click.option("--format", "fmt", type=click.Choice(["yaml", "json"]), default=None,
              help="yaml: SGLang's --config file (default); json: the same with provenance, for programs.")
@click.option("--print-command", is_flag=True,
              help="Print the equivalent `python -m sglang.launch_server ...` command line.")
@click.option("--adaptive", is_flag=True,
              help="Write SGLang's adaptive speculative policy (JSON) instead of a server config.")
@click.option("--adaptive-out", default=None, type=click.Path(dir_okay=False), metavar="POLICY.json",
              callback=not_empty("give a file name, or leave --adaptive-out out for no policy"),
              help="Also write the adaptive policy here, and make the server config use it.")
def export(target, study_name, storage, pick, min_speedup_c32, output, fmt, print_command, adaptive,
           adaptive_out) -> None:
    """Export a measured setting as `python -m sglang.launch_server --config FILE` loads it, or the
    adaptive policy (`--adaptive`), with provenance."""
    from ..config.files import check_output, write_atomic
    from ..config.yamlfile import ConfigError
    from ..results.adaptive import policy_lines, study_policy
    from ..results.export import build_export, check_json_path, check_yaml_path
    from ..results.pareto import PickError

    if output is not None and not output.strip():
        raise ConfigError("-o", "", "is empty: give a file name, or leave -o out to print to stdout")
    out = Path(output) if output else None
    if adaptive and (adaptive_out or print_command or pick or fmt == "yaml"):
        raise ConfigError("--adaptive", "", "writes the policy JSON alone; for a server config that uses it, "
                          "give --adaptive-out POLICY.json with -o best.yaml instead")
    if adaptive_out and not out:
        raise ConfigError("--adaptive-out", "", "the server config must name the policy file: give -o best.yaml")
    if min_speedup_c32 is not None and not pick:
        raise ConfigError("--min-speedup-c32", "", "filters the trials --pick chooses from; give --pick too")
    fmt = fmt or ("json" if adaptive or (out and out.suffix.lower() == ".json") else "yaml")
    name, url, config = resolve_target(target, storage, study_name, reads_storage=True)
    # os.path.realpath, not Path.resolve: a symlink loop (which check_output names below) raised
    # RuntimeError on Python <= 3.12 (QA fuzz: `--adaptive-out LOOP` ended in a traceback)
    if out and adaptive_out and os.path.realpath(out) == os.path.realpath(adaptive_out):
        raise ConfigError("--adaptive-out", adaptive_out, "is the -o file too: the server config and the policy it "
                          "names need two files")
    for path, flag in ((out, "-o"), (Path(adaptive_out) if adaptive_out else None, "--adaptive-out")):
        if path is not None:
            check_not_an_input(path, flag, target, url, config)
            check_output(path, flag)  # its folder exists: nothing is created for it
    if out and fmt == "yaml" and not adaptive:
        check_yaml_path(out)
    if out and fmt == "json" and not adaptive:
        check_json_path(out)
    from ..engine.study import open_study

    study = open_study(name, url, tuner_only=True)
    try:
        if adaptive:
            # an older study's broken model config.json: said, as export's other warnings
            policy = study_policy(study, unreadable=lambda line: click.echo(shown(f"warning: {line}"),
                                                                            err=True))
            import json

            text = json.dumps(policy.to_json(), indent=2) + "\n"
            if out is None:
                click.echo(text, nl=False)
                return
            write_atomic([(out, text)])
            click.echo(shown(f"wrote {out}: adaptive policy of study {study.study_name}"), err=True)
            for line in policy_lines(policy):
                click.echo(f"  {line}", err=True)
            return
        # (build_export says a broken model config.json, among its warnings)
        policy = study_policy(study, unreadable=lambda line: None) if adaptive_out else None
        exp = build_export(study, pick, url=url, min_speedup_c32=min_speedup_c32, policy=policy,
                           policy_path=adaptive_out)
    except PickError as exc:
        fail(str(exc))
    text = exp.json_text() if fmt == "json" else exp.yaml_text()
    files = [(out, text)] if out else []
    if adaptive_out:
        import json

        files.insert(0, (Path(adaptive_out), json.dumps(policy.to_json(), indent=2) + "\n"))
    if files:
        write_atomic(files)
        click.echo(shown(f"wrote {out}: trial {exp.record.number} of study {exp.study} ({exp.spec.label()})"
                         + (f" and {adaptive_out}" if adaptive_out else "")), err=True)
    elif not print_command:
        click.echo(text, nl=False)
    for w in exp.warnings:
        # a warning may quote the study's server.extra_args, a model's config.json or a path: escaped
        # (tuner.config.names.shown; QA: extra_args holding ESC [31m and U+202E reached the terminal raw)
        click.echo(shown(f"warning: {w}"), err=True)
    if print_command:
        click.echo(exp.command_line)


def print_front(front) -> None:
    """The front as a table for people (model time on the simulator)."""
    from ..results.pareto import C32

    b = front.baseline or {}
    cs = front.concurrencies
    heading(f"study {front.study}", f": Pareto front of {len(front.points)} of "
            f"{counted(front.eligible, 'feasible setting')}; objectives {', '.join(front.objectives)}"
            + (f"; speedup@{C32} >= {front.min_speedup_c32:g} only" if front.min_speedup_c32 else ""))
    rows = [("base", "no spec", *([""] * len(front.objectives)), _f(b.get("single_tok_per_s")),
             *(_f(b.get(f"tok_per_s@{c}")) for c in cs), "", "")]
    for p in front.points:
        e = p.record.effective
        a = p.record.attrs
        rows.append((p.number, f"{e.num_steps},{e.eagle_topk},{e.num_draft_tokens}",
                     *(f"{v:.2f}" for v in p.values), _f(a.get("single_tok_per_s")),
                     *(_f(a.get(f"tok_per_s@{c}")) for c in cs), _f(a.get("accept_length"), 2),
                     ", ".join(r.replace("max ", "best ") for r in p.roles)))
    print_table(["trial", "steps,topk,draft", *front.objectives, "tok/s single",
                 *(f"tok/s C={c}" for c in cs), "accept", "marks"], rows)
    say(knee_line(len(front.objectives), len(front.points)))
    from ..results.traffic import baseline_slo_lines, limits_note

    for line in baseline_slo_lines(front.baseline):
        say(line)
    if front.limited:
        say(f"{len(front.limited)} measured settings are off the front because they break the study's "
            "limits:")
        for r in front.limited[:8]:
            vals = " ".join(f"{v:.2f}" for v in r.values or [])
            say(f"  trial {r.number} ({r.effective.label()}, {vals}): {limits_note(r.attrs)}")


def knee_line(n_objectives: int, n_points: int = 2) -> str:
    """What the knee is, as the table's footnote says it: "farthest from the line between the two
    extremes" holds for two objectives only (tuner.results.pareto; QA: said of a study of one
    objective, whose knee is its best setting, and of three, where the extremes span a plane), and
    for a front of two points or more (QA, qa199: a front of one setting, which is both extremes,
    was told of "the line between the two extremes")."""
    if n_objectives == 1:
        return "knee: with one objective, its best setting"
    if n_points == 1:
        return "knee: the front's only setting (it is every pick)"
    if n_objectives == 2:
        return ("knee: the front point farthest from the line between the two extremes "
                "(objectives normalized over the front)")
    return "knee: the front point with the largest sum of its objectives, each normalized over the front"


def _f(v, digits: int = 1) -> str:
    return "" if v is None else f"{v:.{digits}f}"
