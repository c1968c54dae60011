"""A confirmation measurement whose stored ``picks`` is not a list of pick names (edited by hand, or
written by another tool) counts in no round, as one with an edited candidate or round does, and no
reader ends in a traceback.

QA, qa177: ``picks: [1, 2]`` on a confirm trial ended ``tuner study status``, ``export``, ``report``
and ``confirm --show`` in "AttributeError: 'int' object has no attribute 'removeprefix'";
``picks: 5`` in "TypeError: 'int' object is not iterable".
"""

from __future__ import annotations

from test_confirm import _edit, lucky_study, lucky_study_built  # noqa: F401 - fixtures; one module, one build
from tuner.engine.confirm import BASELINE, open_confirm_study, run_confirmation
from tuner.engine.study import open_study
from tuner.results.confirmed import confirm_candidates, load_confirmation
from support.cli_in_process import tuner_here


def test_measurements_with_edited_picks_count_in_no_round(request):
    path, config, backend, study = request.getfixturevalue("lucky_study")  # test_confirm's study and backend
    run_confirmation(study, config, backend, confirm_candidates(study, ["throughput", "single"], near=0.1), repeats=2)
    before = load_confirmation(open_study("noisy", config.storage))
    measured = [t for t in open_confirm_study(study).trials if t.user_attrs["candidate"] != BASELINE]
    who = sorted({t.user_attrs["candidate"] for t in measured})
    assert len(who) >= 3, who
    edits = {who[0]: "[1, 2]", who[1]: "5", who[2]: '"throughput"'}
    for t in measured:
        if t.user_attrs["candidate"] in edits:
            _edit(config, t, "picks", edits[t.user_attrs["candidate"]])
    conf = load_confirmation(open_study("noisy", config.storage))
    assert {c.trial for c in conf.candidates} == {c.trial for c in before.candidates} - set(edits)
    assert conf.rounds == before.rounds
    for args in (["status"], ["export", "--pick", "knee"], ["report", "-o", str(path.parent / "r.html")],
                 ["confirm", "--show"]):
        r = tuner_here("study", *args, str(path))
        assert r.exit_code == 0, (args, r.output, r.exception)
