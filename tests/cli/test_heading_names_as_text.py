"""A study's name in the heading of ``status`` and ``pareto`` is text, never rich markup.

QA, qa177: Optuna stores any name; a study renamed ``a[/x]`` (sqlite3, or another tool) ended
``tuner study status`` and ``pareto`` in rich's MarkupError traceback, ``a[red]b`` printed as
``ab``, and an ESC in a name reached the terminal raw.
"""

import sqlite3

import pytest

from support.cli_in_process import tuner_here
from support.model_study import make_model_study
from tuner.config.study import load_study

NAMES = ["a[/x]", "a[red]b[/red]", "esc\x1b[31mred"]


@pytest.fixture(scope="module")
def storage(tmp_path_factory):
    """Three measured studies, renamed in SQLite to each of NAMES."""
    folder = tmp_path_factory.mktemp("markup")
    urls = []
    for i, name in enumerate(NAMES):
        config = load_study(make_model_study(folder, f"plain{i}", n_trials=2))
        db = sqlite3.connect(config.storage.removeprefix("sqlite:///"))
        with db:
            db.execute("UPDATE studies SET study_name = ? || substr(study_name, 7) WHERE study_name LIKE ?",
                       (name, f"plain{i}%"))
        db.close()
        urls.append(config.storage)
    return dict(zip(NAMES, urls))


@pytest.mark.parametrize("command", ["status", "pareto"])
@pytest.mark.parametrize("name", NAMES)
def test_the_heading_shows_the_name_as_written(storage, command, name):
    result = tuner_here("study", command, "--storage", storage[name], "--study", name)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0, result.stdout + result.stderr
    heading = result.stdout.splitlines()[0]
    shown = name.replace("\x1b", "\\x1b")  # as tuner.config.names.shown prints an ESC
    assert heading.startswith(f"study {shown}"), heading
    assert "\x1b" not in result.stdout
