"""The README quotes what the tool prints today, and says how to print it again.

A figure quoted as measured is reproducible from the recipe the README gives next to it (the
spread example of `tuner study status`: its profile, noise and seed, on `server.backend: model`,
which is deterministic for a seed; QA: it named no seed, and seeds 0-2 print other figures).
Quoted outputs of the shipped example studies (sim-demo, sim-traffic) number their first trials as
today's default seed trials (tuner.engine.seeds.DEFAULT_SEED_TRIALS): every study with
`default_seed_trials: true` measures them first, in that order, so a quote whose trial 1 is
another setting was printed by an older tuner (QA: the pareto, adaptive, SLO and confirm examples showed
the seeds before (4, 8, 64) and (2, 4, 8): trial 1 as 1,1,2).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tuner.cli import cli
from tuner.engine.seeds import DEFAULT_SEED_TRIALS

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


#: rows of the quoted tables and lines that name a trial with its setting
_ROWS = (
    re.compile(r"^ ?(\d+)\s+(\d+),(\d+),(\d+)\s"),  # pareto, confirm: trial  steps,topk,draft
    re.compile(r"^ ?(\d+)\s+(?:measured|pruned|failed|reused|invalid)\s+(\d+)\s+(\d+)\s+(\d+)\s"),  # status
    re.compile(r"trial (\d+) \(steps=(\d+) topk=(\d+) draft=(\d+)"),  # pareto's off-front lines
    re.compile(r"-> trial (\d+)\n# setting: steps=(\d+) topk=(\d+) draft=(\d+)"),  # export header
)
_ADAPTIVE = re.compile(r"steps (\d+) \(trial (\d+), ")  # export --adaptive: the winner per threshold


def quoted_trials(text: str) -> list[tuple[int, tuple[int, ...]]]:
    """(trial, (steps, topk, draft)) of every trial a code block of ``text`` shows with its setting."""
    found = []
    for block in code_blocks(text):
        for pattern in _ROWS:
            for m in pattern.finditer(block) if pattern.pattern.startswith("-> ") else (
                    m for line in block.splitlines() for m in [pattern.search(line)] if m):
                number, *setting = map(int, m.groups())
                found.append((number, tuple(setting)))
    return found


@pytest.mark.parametrize("title", [
    "From the front to deployment: `tuner study pareto` and `tuner study export`",
    "Tuning on your traffic: datasets, chat, SLOs, a confirmed winner",
])
def test_quoted_example_studies_show_todays_seed_trials_first(title):
    text = section(title)
    seeds = [(s.num_steps, s.eagle_topk, s.num_draft_tokens)
             for s in DEFAULT_SEED_TRIALS]
    rows = quoted_trials(text)
    assert rows, f"no quoted trial found in {title!r}: the patterns no longer read its tables"
    stale = [(n, setting) for n, setting in rows if n < len(seeds) and setting != seeds[n]]
    assert not stale, f"quoted trials that are no seed trial of today's tuner: {stale} (seeds: {seeds})"
    steps = [(int(trial), int(step)) for block in code_blocks(text) for step, trial in _ADAPTIVE.findall(block)]
    stale_steps = [(n, step) for n, step in steps if n < len(seeds) and step != seeds[n][0]]
    assert not stale_steps, f"adaptive winners that are no seed trial of today's tuner: {stale_steps}"


def test_the_ctrl_c_section_says_a_killed_tuners_server_dies_with_it():
    # The servers of `run` and `confirm` are started with PR_SET_PDEATHSIG (tuner/server/procs.py,
    # die_with_this_thread; tests/engine/test_study_e2e.py kills a run with SIGKILL and sees its
    # server die), as "Killed at any point" says. QA: the Ctrl-C section still said a `kill -9`
    # left the server running until the next run, and a killed `confirm`'s too: neither was true.
    from tuner.server import procs

    assert procs.PR_SET_PDEATHSIG == 1 and callable(procs.die_with_this_thread)
    ctrl_c = section("Studies: `tuner study create | run | status`").split("### Ctrl-C", 1)[1].split("\n### ", 1)[0]
    said = " ".join(ctrl_c.split())
    kill_9 = said[said.index("`kill -9` of the tuner"):]
    kill_9 = kill_9[:kill_9.index("`tuner study confirm` takes")]
    assert "server running" not in kill_9, kill_9
    assert "takes its server with it" in kill_9 and "PR_SET_PDEATHSIG" in kill_9, kill_9


def test_list_shows_another_tools_study_as_the_readme_says(tmp_path, monkeypatch):
    # QA: the README said such a study is listed with backend `(not a tuner study)`, which only the
    # table prints; `-f csv` leaves the field empty and `-f json` says "tuner": false.
    import csv
    import io
    import json

    import optuna

    text = " ".join(section("Managing studies: `tuner study list | delete | copy | compare`").split())
    said = text[text.index("A study another tool made"):]
    said = said[:said.index("rather than show its trials as settings")]
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path / 'x.db'}"
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    optuna.create_study(study_name="lr-search", storage=url).optimize(lambda t: t.suggest_float("x", 0, 1),
                                                                       n_trials=1)
    runner = CliRunner()
    table = runner.invoke(cli, ["study", "list", "--storage", url])
    assert table.exit_code == 0 and "(not a tuner study)" in table.output
    assert "backend `(not a tuner study)`" in said
    rows = json.loads(runner.invoke(cli, ["study", "list", "--storage", url, "-f", "json"]).output)
    assert rows[0]["tuner"] is False and rows[0]["backend"] is None
    assert '`"tuner": false`, `"backend": null`' in said
    out = runner.invoke(cli, ["study", "list", "--storage", url, "-f", "csv"]).output
    row = next(csv.DictReader(io.StringIO(out)))
    assert row["backend"] == "" and not any(k.startswith("best ") for k in row)
    assert "`backend` field empty and no `best objective_0` column" in said
