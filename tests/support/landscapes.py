"""Landscape tables for tests: written from the performance model, so their true figures are known."""

from __future__ import annotations

import json
from pathlib import Path

from tuner.sim.landscape import landscape

ROOT = Path(__file__).resolve().parents[2]
SPACE = ROOT / "search_spaces" / "eagle3.yaml"


def table_from_profile(profile: str = "k2.6-tp8-pcie", suite: str = "quick", concurrency: int = 32,
                       keep=lambda spec: True, load_s: float | None = None) -> dict:
    """A landscape table (the file's format) of ``profile``'s model figures, rows ``keep`` accepts."""
    land = landscape(profile, SPACE, concurrencies=(concurrency,), suite=suite)
    b = land.baseline
    data: dict = {"name": f"{profile}-table", "concurrency": concurrency,
                  "baseline": {"single_tok_per_s": b.single_tok_per_s, f"tok_per_s@{concurrency}": b.tok_per_s[concurrency]},
                  "configs": [{**r.config.as_dict(), "accept_length": r.accept_length,
                               "single_tok_per_s": r.single_tok_per_s,
                               f"tok_per_s@{concurrency}": r.tok_per_s[concurrency]}
                              for r in land.rows if keep(r.config)]}
    if load_s is not None:
        data["load_s"] = load_s
    return data


def write_table(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data))
    return path
