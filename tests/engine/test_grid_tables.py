"""benchmarks/grid_tables.py: the coarse grids of the README's held-out replay figures, cut from full
landscape tables (its ``main`` in this process)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("grid_tables", ROOT / "benchmarks" / "grid_tables.py")
grid_tables = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(grid_tables)

ROWS = [(1, 1, 2), (3, 1, 4), (3, 2, 6), (3, 2, 7), (3, 4, 6), (5, 8, 16), (4, 2, 6)]


def _table(path: Path) -> Path:
    configs = [{"num_steps": s, "eagle_topk": k, "num_draft_tokens": d, "single_tok_per_s": 40.0 + s,
                "tok_per_s@32": 800.0} for s, k, d in ROWS]
    configs.append({"num_steps": 5, "eagle_topk": 2, "num_draft_tokens": 6, "failure": "oom"})
    path.write_text(json.dumps({"name": "node", "concurrency": 32, "configs": configs,
                                "baseline": {"single_tok_per_s": 26.0, "tok_per_s@32": 800.0}}))
    return path


def test_the_grid_keeps_its_values_and_a_chain_at_its_steps(tmp_path):
    table = _table(tmp_path / "node.json")
    code = grid_tables.main([str(table), "--grid", "G", "--steps", "1,3,5", "--topk", "1,2",
                             "--draft", "6", "-o", str(tmp_path / "out")])
    assert code == 0
    grid = json.loads((tmp_path / "out" / "node-G.json").read_text())
    kept = {(r["num_steps"], r["eagle_topk"], r["num_draft_tokens"]) for r in grid["configs"]}
    # topk 1 at its steps whatever its draft tokens; (3, 2, 7) off the draft values; steps 4 and
    # topk 4, 8 off the grid; the failed row at the grid's values kept as failed
    assert kept == {(1, 1, 2), (3, 1, 4), (3, 2, 6), (5, 2, 6)}, kept
    assert grid["name"] == "node-G" and grid["baseline"]["tok_per_s@32"] == 800.0


def test_a_table_with_nothing_measured_on_the_grid_writes_nothing(tmp_path, capsys):
    table = _table(tmp_path / "node.json")
    code = grid_tables.main([str(table), "--grid", "G", "--steps", "5", "--topk", "2", "--draft", "6",
                             "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "node.json: no measured row" in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()
