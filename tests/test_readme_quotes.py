"""The README quotes what the tool prints today, and says how to print it again.

A figure quoted as measured is reproducible from the recipe the README gives next to it (the
spread example of `tuner study status`: its profile, noise and seed, on `server.backend: model`,
which is deterministic for a seed; QA: it named no seed, and seeds 0-2 print other figures).
"""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from tuner.cli import cli

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    """The text of the README's level-2 section ``title``, up to the next level-2 heading."""
    start = README.index(f"\n## {title}")
    end = README.find("\n## ", start + 1)
    return README[start:end if end != -1 else len(README)]


def code_blocks(text: str) -> list[str]:
    return re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.S | re.M)


def test_the_quoted_run_to_run_spread_is_printed_again_by_the_recipe_beside_it(tmp_path, monkeypatch):
    studies = section("Studies: `tuner study create | run | status`")
    recipe = re.search(r"\(A (\d+)-launch study on `server\.backend: model`, profile ([\w.-]+), "
                       r"`noise: ([\d.]+)`, `seed: (\d+)`", studies)
    assert recipe, "the spread example names no seed: its figures cannot be printed again"
    launches, profile, noise, seed = recipe.groups()
    quoted = next(line for block in code_blocks(studies) for line in block.splitlines()
                  if line.startswith("run-to-run spread: "))
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(cli, ["study", "init", "s.yaml", "--backend", "model"]).exit_code == 0
    text = (tmp_path / "s.yaml").read_text()
    model_line = "model: {profile: k2.6-tp8-pcie, noise: 0.02, seed: 1}"
    assert model_line in text and f"n_trials: {launches}" in text
    (tmp_path / "s.yaml").write_text(text.replace(
        model_line, f"model: {{profile: {profile}, noise: {noise}, seed: {seed}}}"))
    run = runner.invoke(cli, ["study", "run", "s.yaml"])
    assert run.exit_code == 0, run.output
    status = runner.invoke(cli, ["study", "status", "s.yaml"])
    assert status.exit_code == 0, status.output
    assert quoted in status.output.splitlines()
