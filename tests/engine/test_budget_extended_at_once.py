"""Two ``run --add-trials`` at the same moment (one per node) both extend the study's budget.

``--add-trials N`` adds N each time it is given (README). :func:`tuner.engine.study.extend_budget` read
the stored config, added N and stored it with Optuna's ``set_study_user_attr``, which writes whatever
was there: two extensions that both read 20 both stored 25, one of them lost while both said
``20 -> 25`` (QA, qa93, on SQLite and PostgreSQL). Now the config is stored only over the text it
was computed from (one conditional UPDATE), else read and raised again.

Forced on a real SQLite file and a real PostgreSQL database: each extension, about to store the
config, waits until the other is there too (tests/support/together.py); each has a storage of its
own, as a process does.
"""

from __future__ import annotations

import threading

import optuna
from support.landed_moves import break_the_first_move
from support.together import hold_before, run_together

from tuner.engine.storage import open_storage
from tuner.engine.study import CONFIG_ATTR, READY_ATTR, extend_budget, stored_budget



def storing_the_config(sql: str) -> bool:
    return sql.startswith("UPDATE STUDY_USER_ATTRIBUTES")


def test_two_extensions_at_once_both_count(url):
    storage = open_storage(url, patient=True)
    study = optuna.create_study(study_name="grow", storage=storage)
    study.set_user_attr(CONFIG_ATTR, {"budget": {"n_trials": 20, "timeout": None}})
    study.set_user_attr(READY_ATTR, "2026-12-05T00:00:00+00:00")

    nodes = [optuna.load_study(study_name="grow", storage=open_storage(url, patient=True)) for _ in range(2)]
    barrier = threading.Barrier(2)
    for node in nodes:
        hold_before(node._storage._backend.engine, barrier, storing_the_config)
    said, errors = run_together([lambda node=node: extend_budget(node, 5) for node in nodes])
    assert not barrier.broken  # both were about to store the config at once
    assert not errors
    assert stored_budget(study) == 30  # before the fix: 25, one extension lost
    assert sorted(said) == [(20, 25), (25, 30)]  # before the fix: both said 20 -> 25
    assert study._storage.get_study_user_attrs(study._study_id)[CONFIG_ATTR]["budget"]["timeout"] is None
    for node in nodes:
        node._storage._backend.engine.dispose()
    storage.engine.dispose()


def test_an_extension_whose_commit_landed_before_the_error_counts_once(tmp_path, monkeypatch):
    """The conditional UPDATE committed, then the driver's error (the connection broke before the
    answer): the patient storage tries again, finds the config it stored, and it is this extension's.
    Read otherwise (changed by another process), the budget would be raised a second time."""
    storage = open_storage(f"sqlite:///{tmp_path / 'landed.db'}", patient=True)
    study = optuna.create_study(study_name="landed", storage=storage)
    study.set_user_attr(CONFIG_ATTR, {"budget": {"n_trials": 20}})
    study.set_user_attr(READY_ATTR, "2026-12-05T00:00:00+00:00")
    broke = break_the_first_move(monkeypatch, "_replace_study_attr")
    assert extend_budget(study, 5) == (20, 25)
    assert broke == [True]  # the first attempt had stored it
    assert stored_budget(study) == 25  # read as another's change, it would be 30
    storage.engine.dispose()
