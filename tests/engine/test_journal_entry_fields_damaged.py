"""A journal entry that still reads as JSON but whose ``finish`` is no longer what the tuner wrote (a
field removed or retyped by a hand, another tool: tuner/engine/finish.py, ``replay_journal``). QA
(qa191): a dead worker's entry whose ``finish`` lacked ``trial_id`` ended every later ``tuner study
run`` at its start in ``TypeError: Finish.__init__() missing 6 required positional arguments``,
before the baseline: the study could measure nothing more until someone found and removed the file.
Such an entry is what a truncated one is (tests/engine/test_journal_entry_damaged.py): nothing in it
can be stored, so it is set aside in ``journal/set-aside/`` and said, and the run goes on."""

from __future__ import annotations

import copy
import os

import pytest

from tuner.config.study import load_study
from tuner.engine.finish import UNREADABLE, Finish, replay_journal
from tuner.engine.journal import SET_ASIDE_DIR, Journal
from tuner.engine.storage import storage_label
from tuner.engine.study import UID_ATTR, create_study, open_study
from tuner.engine.workers import Worker

STUDY = """name: jd
search_space: {space}
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  model: {{profile: k2.6-tp8-pcie, noise: 0.02, seed: 1}}
bench: {{suite: quick}}
budget: {{n_trials: 4}}
"""

#: A finish as Finish.to_dict writes it (a measured trial 3 of two objectives).
WHOLE = {"study": "jd", "trial_id": 4, "number": 3, "params": {"speculative_num_steps": 3},
         "distributions": {"speculative_num_steps": '{"name": "IntDistribution", "attributes": '
                                                     '{"low": 1, "high": 8, "step": 1, "log": false}}'},
         "user_attrs": {"status": "measured"}, "system_attrs": {}, "values": [2.3, 0.9], "measured": True,
         "pruned": False, "setting": {}}


def _damaged(change) -> dict:
    finish = copy.deepcopy(WHOLE)
    change(finish)
    return finish


DAMAGES = {
    "trial_id removed": lambda f: f.pop("trial_id"),
    "values as text": lambda f: f.update(values="abc"),
    "params a list": lambda f: f.update(params=["x"]),
    "number as text": lambda f: f.update(number="3"),
    "measured as a number": lambda f: f.update(measured=1),
    "a distribution not JSON text": lambda f: f.update(distributions={"speculative_num_steps": 5}),
}


def test_a_finish_as_written_is_readable_and_older_entries_too():
    assert Finish.readable(WHOLE) == Finish.from_dict(WHOLE)
    older = {k: v for k, v in WHOLE.items() if k not in ("pruned", "setting")}  # a tuner before both
    assert Finish.readable(older) is not None and Finish.readable({**WHOLE, "values": None}) is not None


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_an_entry_whose_finish_is_damaged_is_set_aside_and_said(tmp_path, damage):
    from support.landscapes import SPACE

    (tmp_path / "jd.yaml").write_text(STUDY.format(space=SPACE))
    config = load_study(tmp_path / "jd.yaml")
    create_study(config, config.storage)
    study = open_study(config.name, config.storage)
    # written by a worker of this host that is gone (its pid with another start: not that process)
    dead = {**Worker().as_dict(), "start": -1}
    assert Worker.alive(dead) is False
    journal = Journal(config.workdir)
    entry = journal.write({"storage": storage_label(study._storage), "study_uid": study.user_attrs[UID_ATTR],
                           "worker": dead, "finish": _damaged(DAMAGES[damage]), "files": {}}, stem="jd-3")

    before = [(t.number, t.state) for t in study.get_trials(deepcopy=False)]  # the queued seeds

    done = replay_journal(study, config.workdir)  # TypeError (trial_id removed) before the fix

    assert done == [("jd", 3, UNREADABLE)]
    assert not entry.exists() and (entry.parent / SET_ASIDE_DIR / entry.name).is_file()
    assert [(t.number, t.state) for t in study.get_trials(deepcopy=False)] == before, "nothing of it is stored"
    assert replay_journal(study, config.workdir) == []  # said once: set aside, never read again
    assert os.listdir(entry.parent / SET_ASIDE_DIR) == [entry.name]


def test_an_entry_whose_files_are_damaged_stores_its_figures_with_a_warning(tmp_path):
    """Its finish whole, its ``files`` edited (a suite result that is none, a cap that is text, a log
    path that is a number): the replay ended in ValueError from the suite's reader, every run, the
    measurement never stored. The figures are stored; what the files could not be is a warning."""
    from support.landscapes import SPACE

    from tuner.engine.finish import REHOMED

    (tmp_path / "jd.yaml").write_text(STUDY.format(space=SPACE))
    config = load_study(tmp_path / "jd.yaml")
    create_study(config, config.storage)
    study = open_study(config.name, config.storage)
    suite_json = tmp_path / "jd" / "trials" / "3" / "suite.json"
    Journal(config.workdir).write({
        "storage": storage_label(study._storage), "study_uid": study.user_attrs[UID_ATTR],
        "worker": {**Worker().as_dict(), "start": -1}, "finish": copy.deepcopy(WHOLE),
        "files": {"suite": {"x": 1}, "suite_json": str(suite_json), "log": 5, "log_max_mb": "abc"}}, stem="jd-3")

    done = replay_journal(study, config.workdir)  # ValueError (no schema_version/records) before the fix

    [(name, _, outcome)] = done
    assert (name, outcome) == ("jd", REHOMED)  # trial 3 is not in this storage: its measurement is added
    [stored] = [t for t in study.get_trials(deepcopy=False) if t.user_attrs.get("replayed_from") == 3]
    assert stored.values == WHOLE["values"] and stored.user_attrs["status"] == "measured"
    assert stored.user_attrs["suite_json"] is None and not suite_json.exists()
    [warning] = stored.user_attrs["file_warnings"]
    assert warning.startswith(f"suite JSON not written ({suite_json}: the journaled suite result does not read")
