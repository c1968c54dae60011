"""Cut a coarse grid out of full landscape tables: what a node measured at a few values of each flag.

A grid a person measures on a real node holds a few values per flag (steps 1/3/5/7, topk 1/2/8, a
handful of draft-token counts), not every setting of the space. This keeps, of each table given, the
rows at the chosen values -- a topk-1 row at its steps whatever its draft tokens, since SGLang runs
topk 1 with ``steps + 1`` -- failed rows included, and writes ``OUT/NAME-GRID.json``. The grids of
the README's held-out replay figures were cut with it from the search benchmark's test-set tables
(``benchmarks/.landscapes``, written by ``search_efficiency.py --set test``)::

    python benchmarks/grid_tables.py --grid G1 --steps 1,3,5,7 --topk 1,2,8 --draft 2,3,6,10,16,24,40 \\
        -o grids benchmarks/.landscapes/gen-100[0-9]-*.json benchmarks/.landscapes/[BC]-*.json

A table that keeps no row is an error (exit 2, naming it), and nothing is written before every table
was read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _values(text: str, flag: str) -> set[int]:
    try:
        values = {int(v) for v in text.split(",") if v.strip()}
    except ValueError:
        raise SystemExit(f"error: {flag}: expected comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise SystemExit(f"error: {flag}: expected integers of at least 1, got {text!r}")
    return values


def cut(table: dict, steps: set[int], topk: set[int], draft: set[int]) -> list[dict]:
    """The rows of ``table`` at the grid's values (a topk-1 row at any draft tokens: SGLang's own)."""
    return [row for row in table["configs"] if row["num_steps"] in steps and row["eagle_topk"] in topk
            and (row["eagle_topk"] == 1 or row["num_draft_tokens"] in draft)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tables", nargs="+", type=Path, help="landscape tables (JSON)")
    p.add_argument("--grid", required=True, help="the grid's name, appended to each table's")
    p.add_argument("--steps", required=True)
    p.add_argument("--topk", required=True)
    p.add_argument("--draft", required=True)
    p.add_argument("-o", "--out", type=Path, required=True, help="folder to write the grids in")
    args = p.parse_args(argv)
    steps, topk, draft = (_values(args.steps, "--steps"), _values(args.topk, "--topk"),
                          _values(args.draft, "--draft"))
    grids = []
    for path in args.tables:
        try:
            table = json.loads(path.read_text())
            rows = cut(table, steps, topk, draft)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"error: {path}: no landscape table ({type(exc).__name__}: {exc})", file=sys.stderr)
            return 2
        if not [r for r in rows if "failure" not in r]:
            print(f"error: {path}: no measured row at the grid's values; widen --steps, --topk or --draft",
                  file=sys.stderr)
            return 2
        name = f"{table['name']}-{args.grid}"
        grids.append((name, {**table, "name": name, "configs": rows,
                             "description": f"grid {args.grid} of {table['name']}"}))
    args.out.mkdir(parents=True, exist_ok=True)
    for name, grid in grids:
        (args.out / f"{name}.json").write_text(json.dumps(grid))
        print(f"{args.out / name}.json: {len(grid['configs'])} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
