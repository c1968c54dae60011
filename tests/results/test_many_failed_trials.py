"""A study whose trials all failed, read by ``status`` and the report: each FAIL trial's note (who
retries it, where its replayed measurement went) comes from one pass over the trials, not a search
of every trial per failed trial (QA: status's reading of 6,000 failed trials took 10 s, growing
with the square of the count; tuner/results/status.py, successors).

The cost is counted, not timed: the records :func:`tuner.engine.records.load_records` reads (the
storage seam) are handed on with attributes that count their reads of ``retry_of``."""

from __future__ import annotations

import dataclasses

import optuna
import pytest
from optuna.trial import TrialState, create_trial

from tuner.engine.records import load_records

N = 300


class _Counted(dict):
    reads = 0

    def get(self, key, default=None):
        if key == "retry_of":
            type(self).reads += 1
        return super().get(key, default)


@pytest.fixture
def all_failed(monkeypatch):
    """An Optuna study of ``N`` FAIL trials of dead workers, the last retrying the first; readers
    get its records with counting attributes."""
    study = optuna.create_study(directions=["maximize", "maximize"])
    dist = {"speculative_num_steps": optuna.distributions.IntDistribution(1, 8),
            "speculative_eagle_topk": optuna.distributions.IntDistribution(1, 8),
            "speculative_num_draft_tokens": optuna.distributions.IntDistribution(2, 64)}
    params = {"speculative_num_steps": 3, "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 4}
    for i in range(N):
        attrs = {"worker": {"host": "node-b", "pid": 7}, **({"retry_of": 0} if i == N - 1 else {})}
        study.add_trial(create_trial(state=TrialState.FAIL, params=params, distributions=dist, user_attrs=attrs))

    def counted(s):
        return [dataclasses.replace(r, attrs=_Counted(r.attrs)) for r in load_records(s)]

    monkeypatch.setattr("tuner.results.status.load_records", counted)
    monkeypatch.setattr("tuner.results.report_data.load_records", counted)
    _Counted.reads = 0
    return study


def test_status_notes_every_failed_trial_in_one_pass(all_failed):
    from tuner.results.status import study_status

    status = study_status(all_failed)
    notes = [t["note"] for t in status["trials"]]
    assert len(notes) == N and all("stopped answering" in n for n in notes)
    assert f"queued again (trial {N - 1})" in notes[0] and "queued again" not in notes[1]
    assert _Counted.reads <= 2 * N, _Counted.reads


def test_the_reports_failures_read_the_trials_once(all_failed):
    from tuner.results.report import _failures_html
    from tuner.results.report_data import load_report_data

    page = "".join(_failures_html(load_report_data(all_failed)))
    assert f"queued again (trial {N - 1})" in page
    assert _Counted.reads <= 2 * N, _Counted.reads
