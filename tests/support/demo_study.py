"""The demo study file (studies/sim-demo.yaml) with changes, written into a test's tmp folder."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "studies" / "sim-demo.yaml"


def demo_study(tmp_path: Path, name: str = "demo", **changes) -> Path:
    """The demo study named ``name`` with ``changes`` (dotted keys: ``server.port``); its storage
    and workdir in ``tmp_path``. Returns the file's path."""
    data = yaml.safe_load(DEMO.read_text())
    data["name"] = name
    data["search_space"] = str(ROOT / "search_spaces" / "eagle3.yaml")
    data["storage"] = f"sqlite:///{tmp_path / (name + '.db')}"
    data["workdir"] = str(tmp_path / "work")
    for key, value in changes.items():
        node = data
        *path, last = key.split(".")
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path
