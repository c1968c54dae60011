"""`tuner bench` on a terminal draws a progress bar naming the request in flight: a prompt's name (a
dataset row's id) is text there, not rich markup (QA: a name holding "[/]", or an id like
"[/r/AskReddit]", ended the run in a MarkupError traceback on a terminal, and --json saved nothing;
"[red]" coloured the line)."""

import io
import json

import pytest
from rich.console import Console
from support.simproc import running_sim

import tuner.cli.bench as bench_cli
from support.cli_in_process import tuner_here

NAMES = ["[red]plain", "[/r/AskReddit]", "x[/]y"]  # the last one is in flight when the bar stops


@pytest.fixture
def terminal(monkeypatch):
    """The progress bar's console, as on a terminal (CliRunner's stdout is none), kept in memory."""
    screen = Console(file=io.StringIO(), force_terminal=True, width=120, color_system=None)
    monkeypatch.setattr(bench_cli, "console", screen)
    return screen


def test_names_that_look_like_markup_are_drawn_as_they_are(terminal):
    bar = bench_cli._ProgressBar()
    with bar.progress:
        for step, name in enumerate(NAMES, 1):
            bar("single", {"prompt": name, "max_tokens": 2, "repeat": 0, "step": step, "total_steps": 3})
            bar.progress.refresh()
            assert f"single {name} 2 tok #1" in terminal.file.getvalue()


def test_tuner_bench_on_a_terminal_measures_such_a_dataset_to_the_end(tmp_path, terminal):
    rows = [{"id": name, "prompt": f"Say something about {i}.", "max_tokens": 2} for i, name in enumerate(NAMES)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "s.yaml").write_text("name: ids\ndataset: {path: d.jsonl}\nsingle: {repeats: 1}\n"
                                     "warmup: {requests: 0}\n")
    with running_sim() as sim:
        res = tuner_here("bench", "--url", sim.url, "--suite", "s.yaml", "--json", "r.json", cwd=tmp_path)
    assert res.exit_code == 0, res.output
    saved = json.loads((tmp_path / "r.json").read_text())
    assert sorted(r["prompt"] for r in saved["records"] if r["ok"]) == sorted(NAMES)
