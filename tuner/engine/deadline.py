"""How long one trial may take: a deadline per trial, so a slow or stuck server costs a bounded part of
the night.

The rule (:func:`trial_deadline`): ``bench.trial_timeout`` when the study sets it; otherwise
``server.startup_timeout_s`` (the launch: loading the model may take all of it) plus
``max(DEADLINE_FLOOR_S, DEADLINE_FACTOR x the baseline's suite time)``, the baseline's suite time
being its measured wall time (``suite_wall_s``; a baseline stored before that attribute existed: its
whole measurement, ``duration_s``, launch included, which only makes the deadline longer; one that is
no positive finite number of seconds, edited by hand, is passed over).

Why 3x: a trial runs the very suite the baseline ran, and speculative decoding is meant to make it
faster; a setting three times slower than autoregressive over the whole suite is far worse than any
the front could keep (the article's worst, large trees at C=32, ran at about 0.5x), while a server
that hangs would otherwise cost hours. The floor, 5 minutes: a short suite (the demo's runs in
seconds) must not fail a trial over a busy machine's scheduling noise. The hang rules of
:mod:`tuner.bench.watch` find a frozen or wedged server within minutes whatever the deadline; the
deadline is the backstop for a server that answers, slowly, forever.

The baseline itself has no derived deadline (nothing to derive it from): ``bench.trial_timeout``
when set, else the hang rules alone. A baseline that hangs stops the run with one line: nothing
could be compared without it (:class:`tuner.engine.baseline.BaselineError`).
"""

from __future__ import annotations

from ..config.study import StudyConfig
from .records import finite_number

DEADLINE_FACTOR = 3.0
DEADLINE_FLOOR_S = 300.0


def trial_deadline(config: StudyConfig, baseline_attrs: dict | None) -> tuple[float | None, str]:
    """``(seconds, why)``: how long a trial (launch and suite) may take, and the rule that gave it.
    ``baseline_attrs`` None: the baseline's own measurement."""
    explicit = config.bench.trial_timeout_s
    if explicit is not None:
        return explicit, f"bench.trial_timeout {config.bench.trial_timeout}"
    if baseline_attrs is None:
        return None, "no deadline for the baseline (bench.trial_timeout unset): the hang rules only"
    # A figure that cannot be a time (an attribute edited by hand, a damaged row: text, NaN, negative)
    # is no suite time: the next one, else none (QA, qa139: suite_wall_s "abc" ended the run in a
    # traceback, after --add-trials had extended the study).
    suite_s = next((v for v in (baseline_attrs.get("suite_wall_s"), baseline_attrs.get("duration_s"))
                    if finite_number(v) and v > 0), None)
    startup = config.server.startup_timeout_s
    if not suite_s:
        return None, "no deadline: the baseline's suite time is unknown"
    suite_budget = max(DEADLINE_FLOOR_S, DEADLINE_FACTOR * float(suite_s))
    why = (f"server.startup_timeout_s {startup:g} s + max({DEADLINE_FLOOR_S:g} s, {DEADLINE_FACTOR:g} x the "
           f"baseline's suite time {float(suite_s):.0f} s)")
    return startup + suite_budget, why


def apply_trial_deadline(backend, config: StudyConfig, baseline_attrs: dict | None, emit) -> None:
    """Give ``backend`` the deadline of every measurement from now on (a backend without servers,
    the performance model, has no use for one) and say so (``emit("deadline", {seconds, why})``)."""
    setter = getattr(backend, "set_trial_deadline", None)
    if setter is None:
        return
    seconds, why = trial_deadline(config, baseline_attrs)
    setter(seconds, why)
    emit("deadline", {"seconds": seconds, "why": why})
