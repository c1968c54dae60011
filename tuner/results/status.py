"""What a study holds, for people and programs: baseline, trials, Pareto front. Reads storage only."""

from __future__ import annotations

from typing import Any

from ..config.wording import counted
from ..engine.pruning import last_estimates
from ..engine.records import (INTERRUPTED, PRUNED, PRUNED_FROM, TrialRecord, front_records, load_records,
                              run_to_run_spread, status_counts)


def pruned_fields(r: TrialRecord) -> dict[str, Any]:
    """A pruned trial's decision (empty for other trials): the stage it stopped after, the front
    trial that dominated it, the setting's first pruned trial for a repeat that launched nothing,
    and its last partial estimates (intermediate values, never a result)."""
    if r.status != PRUNED:
        return {}
    return {"pruned_at": r.attrs.get("pruned_at"), "pruned_by": r.attrs.get("pruned_by"),
            "pruned_from": r.attrs.get(PRUNED_FROM), "partial_values": last_estimates(r.attrs)}


def pruned_note(t: dict) -> str:
    """How status and the report say why a trial was pruned."""
    if t.get("pruned_from") is not None:
        return f"= trial {t['pruned_from']} (pruned, not launched again)"
    by = f": trial {t['pruned_by']} dominates it" if t.get("pruned_by") is not None else ""
    # a PRUNED trial with no stage (told by another tool, or edited) read "stopped after None" (QA)
    at = t.get("pruned_at")
    stage = f"stopped after {at}" if isinstance(at, str) and at else "stopped early (stage not recorded)"
    return stage + by


def successors(records: list[TrialRecord]) -> dict[str, dict[Any, int]]:
    """For :func:`ended_note`, read once for a whole study: by trial number, the first trial that
    retries it (``retry_of``) and the first that holds its replayed measurement (``replayed_from``).
    One pass over the trials: a note that searched every trial for each FAIL trial read N x N
    attributes (QA: reading a study of 6,000 trials, every one failed, took 10 s, 0.26 s in one
    pass). A value that is no key (a list, edited by hand) names no trial, as it equals no trial
    number."""
    out: dict[str, dict[Any, int]] = {"retry_of": {}, "replayed_from": {}}
    for x in records:
        for key, found in out.items():
            value = x.attrs.get(key)
            if value is not None and isinstance(value, (int, float, str)):
                found.setdefault(value, x.number)
    return out


def ended_note(r: TrialRecord, records: list[TrialRecord],
               later: dict[str, dict[Any, int]] | None = None) -> str | None:
    """Why a FAIL trial ended without a result, for status and the report (None for other trials).

    The note the tuner stored when it failed the trial itself (status ``interrupted``, written with
    the note: stopped, its worker dead on this host, copied while running), else Optuna's heartbeat
    check: the tuner itself never fails a trial without saying why, but ``fail_stale_trials``
    (:func:`tuner.engine.workers.reap_dead_trials`) fails the trial of a worker on another host that
    stopped beating and can write nothing on it, the trial being finished; its retry, queued by
    :class:`tuner.engine.requeue.RetryStaleTrial`, names it (``retry_of``). Any other note on a FAIL
    trial is a verdict whose tell never came (:mod:`tuner.engine.finish` writes the attributes, the
    note among them, then tells COMPLETE or PRUNED): its worker stopped between the two, and the
    heartbeat check ended the trial; the note speaks of values the trial does not hold.

    ``later``: :func:`successors` of ``records``, which a caller noting many trials reads once."""
    if r.state != "FAIL":
        return None
    if r.attrs.get("note") and r.status == INTERRUPTED:
        return str(r.attrs["note"])
    if r.status is not None:  # abandoned (a budget slot taken) or unreadable: the status says it
        return None
    worker = r.attrs.get("worker")
    who = (f" ({worker.get('host')}, pid {worker.get('pid')})"
           if isinstance(worker, dict) and worker.get("host") else "")
    later = later if later is not None else successors(records)
    retry = later["retry_of"].get(r.number)
    again = f"; its setting is queued again (trial {retry})" if retry is not None else ""
    # a worker that wrote its figures and stopped before its tell journaled them; replayed, they are a
    # trial of their own (tuner.engine.finish: replayed_from), which this one's note names (QA, qa136)
    replay = later["replayed_from"].get(r.number)
    if replay is not None:
        again += f"; its measurement is stored as trial {replay}"
    return (f"its worker{who} stopped answering: no heartbeat within the grace period, so another worker "
            f"failed the trial{again}")


def _spec(s) -> dict | None:
    return None if s is None else s.as_dict()


def study_status(study) -> dict[str, Any]:
    from ..engine.baseline import baseline_problem, find_baseline
    from ..engine.limits import SLO_ATTR
    from ..engine.study import CONFIG_ATTR, WORKLOAD_ATTR, incomplete_note
    from .traffic import limits_note

    records = load_records(study)
    objectives = study.user_attrs.get("objectives") or [f"objective_{i}" for i in range(len(study.directions))]
    baseline = find_baseline(study)
    front = front_records(records)
    later = successors(records)
    config = study.user_attrs.get(CONFIG_ATTR) or {}
    bench = config.get("bench") or {}
    return {
        "study": study.study_name,
        "incomplete": incomplete_note(study),  #: None for a whole study
        "objectives": objectives,
        "baseline": None if baseline is None else {
            k: v for k, v in baseline.attrs.items()
            # remeasured_for: measured again after a trial read too fast over the one before (tuner.engine.suspect)
            if k in ("single_tok_per_s", "accept_length", "log_path", "duration_s", SLO_ATTR, "remeasured_for")
            or k.startswith(("tok_per_s@", "goodput"))
        },
        #: what became of the last baseline launch when none stands (failed, unreadable; None: fine or none ran)
        "baseline_problem": baseline_problem(study) if baseline is None else None,
        "workload": study.user_attrs.get(WORKLOAD_ATTR),
        "bench": {k: bench.get(k) for k in ("api", "stream", "lossless")},
        "slo": config.get("slo") or [],
        "counts": status_counts(records),
        "trials": [{
            "number": r.number, "state": r.state, "status": r.status,
            "requested": _spec(r.requested), "effective": _spec(r.effective),
            "values": r.values, "feasible": r.feasible,
            "failure_class": r.failure_class, "failure_message": r.attrs.get("failure_message"),
            "note": ended_note(r, records, later),  #: why a FAIL trial ended without a result
            "reused_from": r.attrs.get("reused_from"), "remeasure_of": r.attrs.get("remeasure_of"),
            "duration_s": r.duration_s, **pruned_fields(r),
            #: the modelled GPU time of a `server.backend: model` trial (its duration_s is the process's
            #: wall, 0 or near it: no server ran); None on a server
            "model_duration_s": r.attrs.get("model_duration_s"),
            "limits": limits_note(r.attrs) or None, "slo_checks": r.attrs.get(SLO_ATTR),
            "lossless_share": r.attrs.get("lossless_share"), "lossless_flag": r.attrs.get("lossless_flag"),
            "lossless_first_divergence": r.attrs.get("lossless_first_divergence"),
            "file_warnings": r.attrs.get("file_warnings"), "replayed_from": r.attrs.get("replayed_from"),
        } for r in records],
        "front": [r.number for r in front],
        "spread": run_to_run_spread(records),
    }


#: above this run-to-run spread, status warns that picks resting on few readings may be off: the
#: search benchmark's picks are right after 16 launches in 93% of its held-out runs at 2% noise and
#: 72% at 4%; after 32 launches in 98.5% and 87.2% (README, "How the tuner searches")
SPREAD_WARN = 0.03


def spread_lines(spread: dict | None, objectives: list[str]) -> list[str]:
    """How status states the study's run-to-run spread (:func:`run_to_run_spread`), and a hint when
    it is large enough to misrank settings a few percent apart."""
    if spread is None:
        return ["run-to-run spread: not known yet (no setting measured more than once)"]
    parts = ", ".join(f"{o} {'-' if v is None else f'{v:.1%}'}"
                      for o, v in zip(objectives, spread["objectives"]))
    n = spread["settings"]
    lines = [f"run-to-run spread: {parts} (from {counted(n, 'setting')} measured more than once, "
             f"{spread['readings']} readings)"]
    if any(v is not None and v > SPREAD_WARN for v in spread["objectives"]):
        lines.append(f"  above {SPREAD_WARN:.0%}: a pick that rests on one or two readings may trail its "
                     "optimum by more than that; measure the candidates again with `tuner study confirm`, "
                     "or give the study more launches (`tuner study run --add-trials N`)")
    return lines
