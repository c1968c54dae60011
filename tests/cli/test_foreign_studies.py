"""A storage holding studies plain Optuna (or another tool) made, beside tuner's: every reader
given such a study (and ``copy``) refuses it at once, in one line naming it and why, exit 2, writing nothing
(tuner/engine/study.py, ``open_study(tuner_only=True)``); ``list`` shows it as not a tuner study."""

from __future__ import annotations

import time

import optuna
import pytest
from click.testing import CliRunner
from support.model_study import make_model_study

from tuner.cli import cli

READERS = [
    ["status", "FOREIGN"], ["status", "FOREIGN", "-f", "json"], ["pareto", "FOREIGN"], ["pareto", "FOREIGN", "-f", "csv"],
    ["export", "FOREIGN", "--pick", "knee"], ["export", "FOREIGN", "--pick", "0", "-o", "{tmp}/best.yaml"],
    ["export", "FOREIGN", "--adaptive"], ["report", "FOREIGN", "-o", "{tmp}/r.html"], ["confirm", "FOREIGN", "--show"],
    ["compare", "FOREIGN", "tuner"], ["compare", "tuner", "FOREIGN"], ["copy", "FOREIGN", "copied"],
]


@pytest.fixture(scope="module")
def storage(tmp_path_factory):
    """One SQLite storage: tuner's study ``tuner``, and plain Optuna's ``plain`` (one objective,
    param x, no attributes), ``plain2`` (two objectives over tuner's param names) and ``empty``."""
    folder = tmp_path_factory.mktemp("foreign")
    make_model_study(folder, "tuner", n_trials=4)
    url = f"sqlite:///{folder / 'tuner.db'}"
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    optuna.create_study(study_name="plain", storage=url).optimize(
        lambda t: t.suggest_float("x", 0, 1) ** 2, n_trials=3)
    optuna.create_study(study_name="plain2", storage=url, directions=["maximize"] * 2).optimize(
        lambda t: (t.suggest_int("speculative_num_steps", 1, 5), 1.5), n_trials=3)
    optuna.create_study(study_name="empty", storage=url)
    return url


@pytest.mark.parametrize("foreign", ["plain", "plain2", "empty"])
@pytest.mark.parametrize("argv", READERS, ids=" ".join)
def test_a_reader_refuses_a_study_tuner_did_not_make(storage, foreign, argv, tmp_path):
    """QA: `status` showed plain Optuna's trials as tuner's (`objective_0`), `pareto` said "no
    feasible measured trial ... status shows the failures", `report` wrote a page, `compare` set
    one beside a tuner study ("B on None"), and `export`/`confirm` waited 30 s for a ready mark
    that never comes, then advised `tuner study delete` of someone else's study; `copy` waited alike."""
    args = [a.replace("{tmp}", str(tmp_path)).replace("FOREIGN", foreign) for a in argv]
    started = time.monotonic()
    r = CliRunner().invoke(cli, ["study", *args, "--storage", storage])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert lines[0].startswith("error: ") and f"{foreign}: is not a tuner study" in lines[0], lines[0]
    assert "tuner study delete" not in lines[0]
    assert time.monotonic() - started < 10, "waited for a study no tuner creation is writing"
    assert list(tmp_path.iterdir()) == []
    assert "copied" not in r.output and "copied" not in {s.study_name for s in optuna.get_all_study_summaries(storage)}


def test_list_shows_foreign_studies_for_what_they_are(storage):
    """QA: `list -f csv` grew empty `best objective_0`, `best objective_1` columns for plain Optuna's
    studies, whose values are no tuner objective (and never filled)."""
    import json

    r = CliRunner().invoke(cli, ["study", "list", "--storage", storage, "-f", "json"])
    assert r.exit_code == 0, r.output
    rows = {s["name"]: s for s in json.loads(r.output)}
    assert rows["plain"]["tuner"] is False and rows["plain"]["best"] == {} and rows["empty"]["best"] == {}
    assert rows["tuner"]["tuner"] is True and set(rows["tuner"]["best"]) == {"single_speedup", "speedup@32"}
    r = CliRunner().invoke(cli, ["study", "list", "--storage", storage, "-f", "csv"])
    assert r.exit_code == 0, r.output
    header = r.output.splitlines()[0]
    assert "objective_" not in header and "best single_speedup" in header, header
    r = CliRunner().invoke(cli, ["study", "list", "--storage", storage])
    assert r.exit_code == 0 and r.output.count("(not a tuner study)") == 3, r.output


def test_a_tuner_study_beside_them_reads_as_before(storage, tmp_path):
    r = CliRunner().invoke(cli, ["study", "export", "tuner", "--pick", "knee", "--storage", storage])
    assert r.exit_code == 0 and "# study tuner" in r.output, r.output
