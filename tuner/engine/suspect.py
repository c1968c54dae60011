"""A trial faster over its baseline than its accept length allows: the baseline is suspected first.

The too-fast bound (:func:`tuner.engine.outcome.speedup_problem`) divides the trial's figures by the
baseline's, so a baseline that read slow breaks it as surely as a server that lies about its speed.
On a small suite ``speedup@1`` rests on a single short request of the baseline, timed by the wall
clock: 70-90 ms of host delay on it (another process on the node, a loaded CI machine) read the
baseline slow enough for an honest trial to break the bound (QA, qa203: SIGSTOP of the baseline's
simulator 150 ms of every 270 ms, its own clock 107-157 ms behind, below the 2 s stall rule; the
trial failed as ``bad_response`` for good, its figures off the front, and every later trial could
hit the same wall, the baseline being the study's).

So such a verdict is held (journaled, :func:`tuner.engine.finish.journal_finish`) until the trial's
server stops, and the baseline it was judged against is looked at again (:func:`baseline_to_rejudge`):

* another baseline began since (another worker suspected it too, ``--rebaseline``): the trial is
  judged again against that one, nothing measured;
* the baseline was itself measured again for this reason (:data:`~tuner.engine.baseline.REMEASURED_FOR`):
  the trial fails for good (bounded: a server that truly lies costs the study one baseline, not one
  per trial);
* else the baseline is measured again, once, as ``tuner study run --rebaseline`` measures it
  (:func:`tuner.engine.baseline.ensure_baseline`, the reason stored on it), and it is the study's
  baseline from then on: this worker's, status's, the next runs'; another worker already running
  keeps the one it loaded until a trial of its own suspects it (then the first case).

`tuner study confirm` does the same with a round's baseline (:func:`tuner.engine.confirm._measure_once`):
measured again in its round, once, the candidate's repeat judged again against it.

The trial's measurement is judged again in full (:func:`tuner.engine.outcome.judge_measurement`)
against the baseline so chosen; it fails only if it still breaks the bound, its message then naming
both baselines (:func:`still_too_fast`). The alternative -- the baseline rejecting its own reading
when the simulator's ``sim_timekeeping`` shows it delayed -- was not chosen: SGLang reports no such
clock, and a real node's hiccup on the baseline would still fail honest trials.
"""

from __future__ import annotations

from typing import Callable

from .baseline import REMEASURED_FOR, Baseline, find_baseline

#: What :func:`suspicion` says to do about the baseline a too-fast trial was judged against.
NEWER, REMEASURE, FINAL = "newer", "remeasure", "final"


def suspicion(judged: Baseline, current: Baseline | None) -> str:
    """Pure decision: :data:`NEWER` when the study's ``current`` baseline is another than ``judged``
    (the one the trial was judged against), :data:`FINAL` when ``judged`` was itself measured again
    for a too-fast trial, else :data:`REMEASURE`."""
    if current is not None and current.trial_number != judged.trial_number:
        return NEWER
    if judged.attrs.get(REMEASURED_FOR):
        return FINAL
    return REMEASURE


def baseline_to_rejudge(study, judged: Baseline, remeasure: Callable[[], Baseline]) -> Baseline | None:
    """The baseline to judge a too-fast trial against again (see the module docstring), or None
    (fail it for good). ``remeasure()`` measures the baseline again (or waits for another worker
    measuring it) and returns it; what it raises (a failed baseline: ``BaselineError``) propagates."""
    current = find_baseline(study)
    what = suspicion(judged, current)
    if what == NEWER:
        return current
    if what == FINAL:
        return None
    return remeasure()


def remeasure_reason(trial: int, judged: Baseline) -> str:
    """Why the baseline is measured again, stored on it (:data:`REMEASURED_FOR`) and shown by status."""
    return (f"trial {trial} read faster over baseline trial {judged.trial_number} than its accept length "
            "allows: that baseline's timing was suspected first")


def judged_again_note(first: Baseline, why_not: str | None = None) -> str:
    """What a too-fast trial's message adds when it was not judged again: ``why_not``, or the bound
    (``first``, the baseline it was judged against, was itself measured again for such a trial)."""
    if why_not:
        return f"; not judged again: {why_not}"
    return (f"; baseline trial {first.trial_number} was itself measured again after a trial read too fast, "
            "and is not measured again for this one: this server's timing is the suspect")


def still_too_fast(first: Baseline, again: Baseline) -> str:
    """How the message of a trial that breaks the bound over both baselines ends (``way_on`` of
    :func:`tuner.engine.outcome.speedup_problem`)."""
    return (f"judged again against baseline trial {again.trial_number}, begun after baseline trial "
            f"{first.trial_number} it first read so over, it still reads so: this server's timing is the "
            "suspect, not the baseline's")
