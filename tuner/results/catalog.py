"""The studies a storage holds, one summary each (``tuner study list``). Reads storage only.

A summary: name, trials by status, launches against the budget, the best feasible value of each
objective, when the study was created, the backend, and the SGLang versions its servers reported
in ``/server_info``. Baseline companions (``NAME.baseline``) are folded into their study, and
Optuna studies that tuner did not make are listed with what Optuna knows (``tuner: false``; no best
figures: their values are no tuner objective).
"""

from __future__ import annotations

from typing import Any

from ..engine.records import launched, load_records, merge_repeats, status_counts
from ..config.study import companion_of
from ..engine.study import CONFIG_ATTR, READY_ATTR, incomplete_note, stored_attrs_problem


def study_summary(study, storage_label: str = "") -> dict[str, Any]:
    """One study as :func:`list_studies` shows it."""
    attrs = study.user_attrs
    unreadable = stored_attrs_problem(study)
    config = {} if unreadable else attrs.get(CONFIG_ATTR) or {}
    records = load_records(study)
    objectives = list((None if unreadable else attrs.get("objectives")) or study.metric_names
                      or [f"objective_{i}" for i in range(len(study.directions))])
    best: dict[str, float | None] = {}
    feasible = merge_repeats(records)  # a setting measured again: the mean of its readings
    # none of another tool's study (its values are no tuner objective: QA saw empty `best objective_0`
    # columns in `list -f csv`), nor of an unreadable one (its labels are in doubt)
    for i, name in enumerate(objectives if CONFIG_ATTR in attrs else []):
        best[name] = None if unreadable else max((r.values[i] for r in feasible), default=None)
    versions = sorted({str(r.attrs["sglang_version"]) for r in records if r.attrs.get("sglang_version")})
    server = config.get("server") or {}
    return {
        "name": study.study_name,
        "storage": storage_label,
        "tuner": CONFIG_ATTR in attrs,
        "trials": len(records),
        "counts": status_counts(records),
        "launched": sum(1 for r in records if launched(r.status, r.attrs)),
        "budget": (config.get("budget") or {}).get("n_trials"),
        "objectives": objectives,
        "best": best,
        "created": attrs.get(READY_ATTR),
        "incomplete": incomplete_note(study),  #: None for a whole study
        "unreadable": unreadable,  #: why its stored attributes cannot be trusted (edited), or None
        "backend": server.get("backend"),
        "sglang_versions": versions,
    }


def list_studies(storage, storage_label: str = "") -> list[dict[str, Any]]:
    """A summary of every study in ``storage`` (an Optuna storage), by name."""
    import optuna

    # names only: Optuna's study summaries read every trial, and one NaN value stored in SQLite (NULL,
    # which Optuna's reader asserts on) ended the whole list in AssertionError (QA)
    names = sorted(optuna.get_all_study_names(storage))
    out = []
    for name in names:
        companion = companion_of(name)
        if companion is not None and companion[0] in names:
            continue  # folded into its study
        out.append(study_summary(optuna.load_study(study_name=name, storage=storage), storage_label))
    return out
