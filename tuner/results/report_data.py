"""What a study report shows, read from storage once: :class:`ReportData`.

Both the page (:mod:`tuner.results.report`) and its charts (:mod:`tuner.results.report_plots`)
read this one object, so neither needs the other and nothing reads storage twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine.records import FAILED, INVALID, MEASURED, UNREADABLE, StoredFigures, TrialRecord, load_records


@dataclass
class Pick:
    name: str  #: single | throughput | knee
    record: TrialRecord
    why: str


@dataclass
class ReportData:
    """Everything the report shows, read from storage once."""

    study_name: str
    objectives: list[str]
    backend: str  #: sim | sglang
    time_note: str  #: "" on SGLang; how model time is meant on the simulator
    baseline: StoredFigures | None
    records: list[TrialRecord]
    measured: list[TrialRecord]  #: feasible measurements, one per effective config, oldest first
    front: list[TrialRecord]
    picks: list[Pick]
    picks_note: str
    failures: list[TrialRecord]  #: failed, invalid and unreadable trials, and those left behind (FAIL)
    study: Any = field(repr=False, default=None)
    config: dict = field(default_factory=dict)  #: the study config as stored
    workload: dict | None = None  #: the suite's request statistics (tuner.bench.workload)
    baseline_attrs: dict = field(default_factory=dict)
    confirmation: Any = None  #: tuner.results.confirmed.Confirmation, when the study was confirmed
    #: what became of the latest baseline launch when no baseline stands (it failed, or cannot be
    #: read): :func:`tuner.engine.baseline.baseline_problem`, as status says it
    baseline_problem: str | None = None

    @property
    def model_time(self) -> bool:
        return self.backend in ("sim", "model")

    def tps_label(self, what: str = "tok/s") -> str:
        return f"{what} (model time)" if self.model_time else what


def load_report_data(study) -> ReportData:
    """Read a tuner study (see :mod:`tuner.engine.study`) into :class:`ReportData`."""
    from ..engine.baseline import baseline_problem, find_baseline
    from ..engine.study import CONFIG_ATTR
    from .status import front_records

    config = study.user_attrs.get(CONFIG_ATTR) or {}
    server = config.get("server") or {}
    backend = server.get("backend", "sglang")
    time_note = ""
    if backend == "sim":
        sim = server.get("sim") or {}
        time_note = (f"Simulated server (profile {sim.get('profile', '?')}): every figure is in model time, "
                     f"the time of the GPU server the simulator plays, not this machine's wall clock.")
    elif backend == "model":
        model = server.get("model") or {}
        source = f"landscape table {model.get('landscape')}" if model.get("landscape") else \
            f"performance model, profile {model.get('profile')}"
        time_note = (f"No server ran (backend model, {source}): every figure is in model time, with "
                     f"{model.get('noise', 0):.0%} measurement noise.")
    records = load_records(study)
    objectives = list(study.user_attrs.get("objectives") or config.get("objectives") or [])
    baseline = find_baseline(study)
    measured, seen = [], set()
    for r in records:
        key = r.attrs.get("effective_key")
        if r.status == MEASURED and r.feasible and r.values is not None and key not in seen:
            seen.add(key)
            measured.append(r)
    front = sorted(front_records(records), key=lambda r: r.values[0])
    picks, note = export_picks(front, objectives)
    # every trial without a result the summary counts: failed, invalid, unreadable, left behind
    failures = [r for r in records if r.status in (FAILED, INVALID, UNREADABLE) or r.state == "FAIL"]
    from ..engine.study import WORKLOAD_ATTR
    from .confirmed import load_confirmation

    return ReportData(study.study_name, objectives, backend, time_note,
                      baseline.figures if baseline else None, records, measured, front, picks, note, failures,
                      study, config, study.user_attrs.get(WORKLOAD_ATTR), dict(baseline.attrs) if baseline else {},
                      load_confirmation(study), baseline_problem(study) if baseline is None else None)


#: why each pick is marked (the definitions are tuner.results.pareto's, the ones ``tuner study export --pick`` uses)
PICK_WHY = {"single": "best single-request objective", "throughput": "best objective at the highest concurrency",
            "knee": "largest sum of objectives scaled to the front"}


def export_picks(front: list[TrialRecord], objectives: list[str]) -> tuple[list[Pick], str]:
    """The front's picks exactly as ``tuner study export --pick`` chooses them (:func:`tuner.results.pareto.picks`),
    and only those it offers: a study with no single-request objective has no ``single`` pick, one
    with none at a concurrency no ``throughput`` (:func:`tuner.results.pareto.absent_pick`; QA: the
    page marked the best speedup@32 setting of an ``objectives: [speedup@32]`` study ``single``, a
    pick ``export --pick single`` refuses)."""
    from .pareto import absent_pick, picks

    chosen = {name: r for name, r in picks(front, objectives).items() if absent_pick(objectives, name) is None}
    note = f"Picks as `tuner study export --pick {'|'.join(chosen)}` chooses them" if chosen else ""
    return [Pick(name, r, PICK_WHY.get(name, name)) for name, r in chosen.items()], note
