"""A RUNNING trial whose ``worker`` attribute names no process (edited by hand with sqlite3, or written
by another tool: ``5``, text, a pid that is no number) is judged by its heartbeat, as another host's
is: the reaper of the next ``tuner study run`` goes on (QA, qa175: ``AttributeError: 'int' object has no attribute
'get'`` in the reaper, before anything ran)."""

import json
import socket
import sqlite3

import pytest
from support.model_study import make_model_study

from tuner.config.study import load_study
from tuner.engine.study import open_study
from tuner.engine.workers import Worker, reap_dead_trials

HERE = socket.gethostname()


@pytest.mark.parametrize("named", [5, "x", [HERE], {"host": HERE, "pid": "x"}, {"host": HERE, "pid": True},
                                   {"host": HERE, "pid": 1, "start": "x"}, {"host": 5}])
def test_a_worker_that_names_no_process_is_asked_of_the_heartbeat(named):
    assert Worker.alive(named) is None


def test_the_reaper_after_a_running_trial_s_worker_was_edited_goes_on(tmp_path):
    path = make_model_study(tmp_path, "wk", n_trials=3)
    db = sqlite3.connect(load_study(path).storage.removeprefix("sqlite:///"))
    with db:
        trial_id = db.execute("SELECT trial_id FROM trials WHERE number = 2 AND study_id = "
                              "(SELECT study_id FROM studies WHERE study_name = 'wk')").fetchone()[0]
        db.execute("UPDATE trials SET state = 'RUNNING', datetime_complete = NULL WHERE trial_id = ?", (trial_id,))
        assert db.execute("UPDATE trial_user_attributes SET value_json = ? WHERE trial_id = ? AND key = 'worker'",
                          (json.dumps(5), trial_id)).rowcount == 1
    db.close()
    config = load_study(path)
    study = open_study("wk", config.storage)
    assert reap_dead_trials(study) == []  # no process of this host named: its heartbeat decides, later
    assert study.get_trials(deepcopy=False)[2].state.name == "RUNNING"
