"""Peak memory of loading a suite whose ``dataset:`` is a large file, against the file's size.

Writes a JSONL file and a ShareGPT JSON file of about ``--mb`` MB each (synthetic rows: ASCII
prompts of a few hundred to a few thousand characters; ShareGPT conversations of four turns), then
loads a suite naming each (``tuner.config.suite.load_suite``: the path a study file's suite takes)
in a fresh child process, with ``n: 64`` drawn and with every row kept, and prints the child's peak
RSS (``ru_maxrss``) beside the file's size and a child that only imports the loader. Prints
figures; asserts nothing (not a test).

    python benchmarks/dataset_memory.py            # 300 MB files in a temporary folder
    python benchmarks/dataset_memory.py --mb 50 --keep /tmp/ds
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = ("the model drafts tokens and the target verifies them in one forward pass so that "
         "several tokens may be accepted per step when the draft agrees with the target").split()

CHILD = """
import sys, resource
from tuner.config.suite import load_suite
if sys.argv[1] != "-":
    suite = load_suite(sys.argv[1])
    print(len(suite.prompts), end=" ")
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _text(rng: random.Random, lo: int, hi: int) -> str:
    n = rng.randint(lo, hi)
    out, size = [], 0
    while size < n:
        w = rng.choice(WORDS)
        out.append(w)
        size += len(w) + 1
    return " ".join(out)


def write_jsonl(path: Path, mb: float, seed: int = 0) -> int:
    rng, rows, target = random.Random(seed), 0, int(mb * 1e6)
    with open(path, "w", encoding="utf-8") as f:
        while f.tell() < target:
            row = {"id": f"q{rows}", "category": rng.choice(("chat", "code", "math")),
                   "prompt": _text(rng, 200, 4000), "max_tokens": rng.choice((64, 128, 256))}
            f.write(json.dumps(row) + "\n")
            rows += 1
    return rows


def write_sharegpt(path: Path, mb: float, seed: int = 0) -> int:
    rng, rows, target = random.Random(seed), 0, int(mb * 1e6)
    with open(path, "w", encoding="utf-8") as f:
        f.write("[")
        while f.tell() < target:
            turns = [{"from": "human" if i % 2 == 0 else "gpt", "value": _text(rng, 100, 1500)} for i in range(4)]
            f.write(("," if rows else "") + json.dumps({"id": f"c{rows}", "conversations": turns}))
            rows += 1
        f.write("]")
    return rows


def peak_of(suite: Path | None) -> tuple[int | None, float]:
    """(prompts loaded, peak RSS in MB) of a child loading ``suite`` (None: importing only)."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(suite) if suite else "-"], capture_output=True,
                         text=True, cwd=ROOT, check=False)
    if out.returncode != 0:
        raise SystemExit(f"loading {suite} failed: {out.stderr.strip().splitlines()[-1:]}")
    parts = out.stdout.split()
    return (int(parts[0]) if len(parts) == 2 else None), int(parts[-1]) / 1024


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=float, default=300.0, help="size of each generated file (MB)")
    p.add_argument("--keep", default=None, metavar="DIR", help="write the files here and keep them")
    args = p.parse_args(argv)
    if not 0 < args.mb <= 1000:
        print("--mb: from 0 to 1000 (the loader's cap is 1 GiB)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        files = {"jsonl": folder / "big.jsonl", "sharegpt": folder / "big.json"}
        rows = {"jsonl": write_jsonl(files["jsonl"], args.mb), "sharegpt": write_sharegpt(files["sharegpt"], args.mb)}
        _, base = peak_of(None)
        print(f"# python {sys.version.split()[0]}; a child importing the loader only: {base:.0f} MB peak RSS")
        print("layout    file MB   rows      n     prompts  peak RSS MB  (peak - import) / file")
        for layout, path in files.items():
            size = path.stat().st_size / 1e6
            for n in (64, None):
                suite = folder / f"suite-{layout}-{n or 'all'}.yaml"
                ds = {"path": path.name, "format": layout, **({"n": n} if n else {}), "max_prompt_chars": 100000}
                # (single.prompts: a suite drawing 64 measures a few of them alone, as a study's does; one that
                # keeps every row sends every one, as a draw of over 10,000 rows without n must)
                single = {"prompts": 8 if n else rows[layout]}
                suite.write_text(json.dumps({"name": f"mem-{layout}", "dataset": ds, "single": single}) + "\n")
                got, peak = peak_of(suite)
                print(f"{layout:9} {size:7.0f} {rows[layout]:7d} {str(n or 'all'):>6} {got:9d} {peak:12.0f}  "
                      f"{(peak - base) / size:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
