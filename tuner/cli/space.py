"""``tuner space check|list``: ask SGLang's rules about a setting before any GPU-minute is spent.

SPACE is a shipped space's name (``eagle3``: :data:`tuner.config.space.SHIPPED_SPACES`) or a
search-space YAML file (:func:`tuner.config.space.space_path`)."""

from __future__ import annotations

import click

from ..config.space import SearchSpace
from ..sglang.rules import SpecConfig
from .numbers import speculative_options
from .output import print_json, print_table


@click.group()
def space() -> None:
    """Inspect a search space: valid settings and what SGLang really runs.

    SPACE is a shipped space (eagle3) or a search-space YAML file.
    """


@space.command("check")
@click.argument("space_file", metavar="SPACE")
@speculative_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def check(space_file, num_steps, topk, draft_tokens, as_json) -> None:
    """Say what SGLang does with one setting: runs as written, rewrites it, or fails (exit 1).

    Rules are applied with the space file's fixed server args (attention backend, page size).
    """
    sp = SearchSpace.load(space_file)
    requested = SpecConfig(num_steps, topk, draft_tokens)
    res = sp.resolve(requested)
    v = res.violation
    if as_json:
        print_json({
            "requested": requested.as_dict(),
            "valid": res.ok,
            "effective": res.effective.as_dict() if res.ok else None,
            "rewritten": res.ok and res.rewritten,
            "sglang_warnings": list(res.warnings),
            "in_space": sp.contains(requested),
            "violation": None if v is None else {
                "rule": v.rule, "message": v.message, "sglang_exception": v.sglang_exception,
                "sglang_message": v.sglang_message,
                "fails": v.when(), "stage": v.stage,
            },
        })
    elif v is not None:
        click.echo(f"invalid ({v.rule}): {v.message}")
        if v.sglang_exception:
            click.echo(f"SGLang fails {v.when()} with {v.sglang_exception}"
                       + (f": {v.sglang_message}" if v.sglang_message else " (no message)"))
        else:
            click.echo(f"SGLang fails {v.when()}")
    else:
        eff = res.effective
        if requested == SpecConfig(None, None, None):
            # No flag given: SGLang picks the setting itself; say whether that one is in the ranges.
            click.echo(f"valid: no flags given, SGLang chooses {eff.label()} itself")
            if not sp.contains(eff):
                click.echo(f"note: SGLang's own choice {eff.label()} lies outside the ranges of {space_file}")
        elif res.rewritten:
            click.echo(f"valid, rewritten by SGLang: runs as {eff.label()} (requested {requested.label()})")
            for line in res.warnings:
                click.echo(f"SGLang warns: {line}")
        else:
            click.echo(f"valid: runs as written, {eff.label()}")
        if requested != SpecConfig(None, None, None) and not sp.contains(requested):
            click.echo(f"note: {requested.label()} lies outside the ranges of {space_file}")
    if not res.ok:
        raise click.exceptions.Exit(1)


@space.command("list")
@click.argument("space_file", metavar="SPACE")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_(space_file, as_json) -> None:
    """List the distinct settings SGLang would really run, and their count."""
    sp = SearchSpace.load(space_file)
    configs = sp.effective_configs()
    if as_json:
        print_json({"space": space_file, "count": len(configs), "configs": [c.as_dict() for c in configs]})
        return
    print_table(["num_steps", "eagle_topk", "num_draft_tokens"],
                [(c.num_steps, c.eagle_topk, c.num_draft_tokens) for c in configs],
                title=f"{space_file}: valid effective configs")
    click.echo(f"{len(configs)} valid effective configs")
