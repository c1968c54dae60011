"""What a trial leaves in storage, and how to read it back.

The study engine (:mod:`tuner.engine`) writes the attributes named here; status, pareto, export and
report read them back through :func:`load_records`.

Every trial the engine finishes is COMPLETE with one value per objective. A trial that measured
nothing (invalid setting, failed launch, crashed run) gets the worst values and a violated
constraint (``trial.set_constraint("measured", 1.0)``), so samplers learn to avoid it while status
and reports still show it as failed (``status`` attribute). A trial stopped early because its
partial figures were already dominated (:mod:`tuner.engine.pruning`) is PRUNED, status ``pruned``,
with no values, the same violated constraint, and its partial figures under ``partial``.

Why one module of over 400 lines: what the engine writes on a trial and the check of what every
reader may trust of it (:func:`attrs_problem`) are one contract; split, a new attribute's writer
and its check drift apart (QA, qa175: five attributes the readers format went unchecked).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..sglang.rules import SpecConfig
from .stored_trials import UnbuiltTrial, stored_trials

CONSTRAINT = "measured"
#: status values of a trial (user attribute ``status``)
MEASURED, REUSED, INVALID, FAILED, PRUNED = "measured", "reused", "invalid", "failed", "pruned"
#: status of a trial stopped with the tuner (Ctrl-C, SIGTERM) or failed because its worker died (FAIL)
INTERRUPTED = "interrupted"
#: attribute of a pruned trial that launched nothing: the proposal repeated a pruned setting
PRUNED_FROM = "pruned_from"
#: The statuses that say what a trial's values are: believed only of a COMPLETE trial.
RESULT_STATUSES = (MEASURED, REUSED, INVALID, FAILED)
#: status of a trial whose attributes the readers cannot trust (edited by hand, or by a tool that
#: does not know them): counted and shown with why, never on the front, never picked
UNREADABLE = "unreadable"
#: attribute saying why a trial is :data:`UNREADABLE` (set when read, never stored)
UNREADABLE_ATTR = "unreadable_because"

#: Attributes that must be finite numbers when present: every reader computes with them.
_NUMERIC = ("single_tok_per_s", "single_speedup", "accept_length", "duration_s", "model_duration_s")
#: The throughput figures (and the speedups made of them): a server that ran produced more than 0 of
#: them (a baseline of 0 tok/s read "0.0" in status, report and compare, the speedups over it nothing).
_RATES = ("single_tok_per_s", "single_speedup", "tok_per_s@", "speedup@")
#: No figure or objective value a server can produce reaches this (10^9 tokens a second, or times the
#: baseline): beyond it a figure was written by hand or by another tool (QA, qa182: figures of 1e300 made
#: the hypervolume overflow in numpy's matmul, its chart all null, and the tables print 301 digits).
FIGURE_MAX = 1e9


def finite_number(value: Any) -> bool:
    """Whether ``value`` is a JSON number that can be a figure: an int or float (not a bool), neither
    NaN nor infinite, nor a whole number past a float's range (JSON spells any number of digits;
    QA, qa182: a figure of 10^400 ended every reader in math.isfinite's OverflowError). What every
    reader of a stored or hand-edited attribute checks first."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def whole_number(value: Any) -> bool:
    """Whether ``value`` is a JSON whole number of at least 0 (an int, not a bool): a stored count, a
    position or a trial number, as a reader checks one edited by hand before it uses it."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def attrs_problem(attrs: dict) -> str | None:
    """What makes a trial's stored attributes unusable, or None: the readers (status, pareto,
    export, report, confirm) trust what this passes. ``status`` text; ``effective``/``requested``
    mappings of positive whole numbers (or unset flags, for a request); figures finite numbers, none
    negative nor above :data:`FIGURE_MAX`, throughputs and speedups above 0;
    ``stages`` a list of ``{stage, estimates}``; ``effective_key`` and ``failure_class``
    text; the limits and warnings of :func:`_limits_problem`."""
    status = attrs.get("status")
    if status is not None and not isinstance(status, str):
        return f"status {status!r} is not text"
    for key in ("effective", "requested"):
        spec = attrs.get(key)
        if spec is None:
            continue
        if not isinstance(spec, dict):
            return f"{key} {spec!r} is not a setting"
        values = [spec.get(k) for k in ("num_steps", "eagle_topk", "num_draft_tokens")]
        unset_ok = key == "requested"
        if not all((v is None and unset_ok) or (isinstance(v, int) and not isinstance(v, bool) and v >= 1)
                   for v in values) or (key == "effective" and None in values):
            return f"{key} {spec!r} is not a setting SGLang runs"
    key = attrs.get("effective_key")
    if key is not None:
        # the readers group a setting's measurements by it (merge_repeats); the tuner writes it as
        # text (tuner.engine.trial, spec_key). QA, qa175: a list ended every reader in "unhashable type"
        if not isinstance(key, str):
            return f"effective_key {key!r} is not text"
    failure = attrs.get("failure_class")
    if failure is not None and not isinstance(failure, str):  # the report groups failures by it
        return f"failure_class {failure!r} is not text"
    for key, value in attrs.items():
        if key in _NUMERIC or key.startswith(("tok_per_s@", "speedup@")):
            if value is None:
                continue
            if not finite_number(value):  # (a whole number of 400 digits is shown cut)
                return f"{key} {_cut(repr(value))} is not a finite number"
            if value < 0:  # no rate, ratio or duration is below 0 (QA: a baseline of -5 tok/s gave -12.24x)
                return f"{key} {value!r} is negative"
            if value > FIGURE_MAX:
                return f"{key} {value!r} is more than any server produces ({FIGURE_MAX:g})"
            if value == 0 and key.startswith(_RATES):
                return f"{key} is 0, which no server that ran produces"
        if key.startswith(("tok_per_s@", "speedup@")) and not _concurrency(key.split("@", 1)[1]):
            # StoredFigures and the front read the concurrency as a number (QA, qa175: a key
            # tok_per_s@x ended pareto, export and report in int()'s ValueError)
            return f"{key} does not name a concurrency (a whole number of at least 1)"
    problem = _limits_problem(attrs)
    if problem is not None:
        return problem
    if "stages" in attrs and not isinstance(attrs["stages"], list):
        return f"stages {attrs['stages']!r} is not a list"
    for st in attrs.get("stages") or []:  # what pruning's noise and the sampler read of each stage
        estimates = st.get("estimates") if isinstance(st, dict) else None
        if (not isinstance(st, dict) or not isinstance(st.get("stage"), str) or not isinstance(estimates, list)
                or not all(finite_number(v) for v in estimates)):
            return f"stages entry {st!r} is not {{stage: name, estimates: [numbers]}}"
    return None


def _cut(text: str, limit: int = 60) -> str:
    """``text`` up to ``limit`` characters, ``...`` after it when cut."""
    return text if len(text) <= limit else text[:limit] + "..."


def _concurrency(text: str) -> bool:
    """Whether ``text`` (what follows the ``@`` of ``tok_per_s@32``) is a concurrency the suite runs."""
    return text.isascii() and text.isdigit() and int(text) >= 1


def _share(value: Any) -> bool:
    return finite_number(value) and 0 <= value <= 1


#: One stored SLO check's keys and what each must be, as tuner.engine.limits.slo_checks writes it
#: (``measured_ms`` None when the figure was not measured).
_SLO_CHECK = {"concurrency": whole_number, "limit": lambda v: isinstance(v, str), "limit_ms": finite_number,
              "measured_ms": lambda v: v is None or finite_number(v), "ok": lambda v: isinstance(v, bool),
              "excess": finite_number}


def _limits_problem(attrs: dict) -> str | None:
    """What is wrong with the attributes of a trial's limits and warnings, as the tuner writes them
    (tuner.engine.limits, tuner.bench.lossless's ``to_attrs``, tuner.engine.finish), or None:
    ``slo_checks`` a list of :data:`_SLO_CHECK` mappings; the lossless check's ``lossless_share`` and
    ``lossless_min_share`` shares in [0, 1], ``lossless_compared`` and ``lossless_identical`` whole
    numbers (at most the compared), ``lossless_flag``/``lossless_enforced`` true or false,
    ``lossless_first_divergence`` a ``{prompt, max_tokens, position}``, ``lossless_mismatches`` a list;
    a check (``lossless_compared``) or a flag with its share; ``server_args`` (what the server reported
    in ``/server_info``) a mapping of argument names to values; ``worker`` a mapping whose ``host`` is text;
    ``file_warnings`` a list of text. Each reader formats these as stored (QA, qa175: ``slo_checks:
    "x"`` ended status and export in a TypeError, a ``lossless_share`` of "half" status in format()'s
    ValueError, a check with no share the report in a KeyError, ``file_warnings: 5`` status in join()'s
    TypeError; ``server_args: 5`` ``export --pick N`` in a TypeError)."""
    checks = attrs.get("slo_checks")
    if checks is not None:
        if not isinstance(checks, list):
            return f"slo_checks {checks!r} is not a list"
        for c in checks:
            if not isinstance(c, dict) or not all(k in c and ok(c[k]) for k, ok in _SLO_CHECK.items()):
                return (f"slo_checks entry {c!r} is not {{concurrency, limit, limit_ms, measured_ms, ok, "
                        "excess}")
    for key in ("lossless_share", "lossless_min_share"):
        if attrs.get(key) is not None and not _share(attrs[key]):
            return f"{key} {attrs[key]!r} is not a share from 0 to 1"
    for key in ("lossless_compared", "lossless_identical"):
        if attrs.get(key) is not None and not whole_number(attrs[key]):
            return f"{key} {attrs[key]!r} is not a whole number"
    compared, identical = attrs.get("lossless_compared"), attrs.get("lossless_identical")
    if compared is not None and identical is not None and identical > compared:
        return f"lossless_identical {identical!r} is more than lossless_compared {compared!r}"
    for key in ("lossless_flag", "lossless_enforced"):
        if attrs.get(key) is not None and not isinstance(attrs[key], bool):
            return f"{key} {attrs[key]!r} is not true or false"
    for key in ("lossless_compared", "lossless_flag"):
        if attrs.get(key) is not None and attrs.get("lossless_share") is None:
            return f"{key} is stored without lossless_share"
    first = attrs.get("lossless_first_divergence")
    if first is not None and not (isinstance(first, dict) and whole_number(first.get("position"))
                                  and isinstance(first.get("prompt"), str)
                                  and whole_number(first.get("max_tokens"))):
        return f"lossless_first_divergence {first!r} is not {{prompt, max_tokens, position}}"
    if attrs.get("lossless_mismatches") is not None and not isinstance(attrs["lossless_mismatches"], list):
        return f"lossless_mismatches {attrs['lossless_mismatches']!r} is not a list"
    ran = attrs.get("server_args")  # export compares its args with these (tuner.results.export)
    # its values are SGLang's own, of any JSON shape: lists (gc_threshold), mappings (cuda_graph_config)
    if ran is not None and not (isinstance(ran, dict) and all(isinstance(k, str) for k in ran)):
        return f"server_args {ran!r} is not a mapping of argument names to values"
    worker = attrs.get("worker")  # export names the host that measured (tuner.engine.workers.Worker)
    if worker is not None and not (isinstance(worker, dict) and isinstance(worker.get("host", ""), str)):
        return f"worker {worker!r} is not {{host, pid, start}}"
    notes = attrs.get("file_warnings")
    if notes is not None and not (isinstance(notes, list) and all(isinstance(n, str) for n in notes)):
        return f"file_warnings {notes!r} is not a list of text"
    return None


def values_problem(values, names: list[str]) -> str | None:
    """What makes a COMPLETE trial's objective values unusable, or None: each must be a finite number
    from 0 to :data:`FIGURE_MAX`.
    Optuna's ``tell`` stores +-inf (QA: a trial told ``[inf, 0.1]`` stood on the front as the best
    single_speedup, and ``export --pick single`` wrote it). ``names``: the study's objectives, to
    say which value."""
    for i, value in enumerate(values or []):
        name = names[i] if i < len(names) and names[i] else f"objective {i}"
        if not finite_number(value):
            return f"value of {name} {value!r} is not a finite number"
        if value < 0:  # every objective is a rate or a ratio, 0 the worst (tuner.engine.objectives)
            return f"value of {name} {value!r} is negative"
        if value > FIGURE_MAX:  # (its hypervolume overflowed a float: QA, qa182)
            return f"value of {name} {value!r} is more than any server produces ({FIGURE_MAX:g})"
    return None


def trial_status(state: str, attrs: dict) -> str | None:
    """A trial's status as readers must see it: its ``status`` attribute when the trial is
    COMPLETE; for a trial not (or no longer) complete, only a status that claims no result
    (``abandoned``, ``interrupted``). A worker killed between writing ``status: measured`` and the
    tell leaves a trial that is RUNNING, then FAIL: it measured nothing the study may count or
    reuse (its measurement, if it finished, comes back from the journal as a trial of its own).
    ``pruned`` likewise only of a PRUNED trial."""
    status = attrs.get("status")
    if state != "COMPLETE" and status in RESULT_STATUSES:
        return None
    if status == PRUNED and state != "PRUNED":
        return None
    return status


def spec_key(spec: SpecConfig) -> str:
    """A stable key of an effective config, used to find repeats and claims across workers."""
    return f"{spec.num_steps}-{spec.eagle_topk}-{spec.num_draft_tokens}"


def spec_from_params(params: dict) -> SpecConfig:
    return SpecConfig(params.get("speculative_num_steps"), params.get("speculative_eagle_topk"),
                      params.get("speculative_num_draft_tokens"))


def spec_from_dict(d: dict | None) -> SpecConfig | None:
    return None if d is None else SpecConfig(d.get("num_steps"), d.get("eagle_topk"), d.get("num_draft_tokens"))


def launched(status: str | None, attrs: dict) -> bool:
    """Whether a trial launched a server: measured, failed, or pruned after launching (a repeat of a
    pruned setting launches nothing)."""
    return status in (MEASURED, FAILED) or (status == PRUNED and attrs.get(PRUNED_FROM) is None)


@dataclass
class StoredFigures:
    """Figures read back from storage; satisfies :class:`tuner.engine.objectives.Figures`."""

    single_tok_per_s: float | None
    tok_per_s: dict[int, float] = field(default_factory=dict)
    accept_length: float | None = None

    def tok_per_s_at(self, concurrency: int) -> float | None:
        return self.tok_per_s.get(concurrency)

    @classmethod
    def from_attrs(cls, attrs: dict) -> "StoredFigures":
        tps = {int(k.split("@")[1]): v for k, v in attrs.items() if k.startswith("tok_per_s@") and v is not None}
        return cls(attrs.get("single_tok_per_s"), tps, attrs.get("accept_length"))


def figure_attrs(figures: Any) -> dict[str, Any]:
    """Every figure worth keeping, flat, in model time: a SuiteResult's own ``summary()``
    (throughput, spread, latency percentiles per concurrency), or the model's figures."""
    if hasattr(figures, "summary"):
        flat = figures.summary()
    else:
        flat = {"single_tok_per_s": figures.single_tok_per_s,
                "accept_length": getattr(figures, "accept_length", None),
                **{f"tok_per_s@{c}": v for c, v in sorted(figures.tok_per_s.items())}}
    return {k: v for k, v in flat.items() if v is not None}


@dataclass
class TrialRecord:
    """One trial as the reports see it."""

    number: int
    state: str  #: Optuna's state name: COMPLETE, RUNNING, FAIL, ...
    status: str | None  #: measured | reused | invalid | failed of a COMPLETE trial, pruned of a PRUNED one
    #: (see :func:`trial_status`)
    requested: SpecConfig
    effective: SpecConfig | None
    values: list[float] | None
    feasible: bool
    attrs: dict[str, Any]
    duration_s: float | None

    @property
    def figures(self) -> StoredFigures:
        return StoredFigures.from_attrs(self.attrs)

    @property
    def failure_class(self) -> str | None:
        return self.attrs.get("failure_class")


def load_records(study) -> list[TrialRecord]:
    """All trials of an Optuna study, oldest first."""
    out = []
    names = list(study.metric_names or [])
    trials = stored_trials(study)
    by_number = {t.number: t for t in trials if not isinstance(t, UnbuiltTrial)}
    for t in trials:
        if isinstance(t, UnbuiltTrial):  # its values cannot be read (a NaN in SQLite): no result
            out.append(_unbuilt_record(t))
            continue
        attrs = {**t.user_attrs, **_setting_of_original(t.user_attrs, by_number)}
        problem = attrs_problem(attrs) or values_problem(t.values if t.state.name == "COMPLETE" else None, names)
        if (problem is None and t.state.name == "COMPLETE" and t.params and attrs.get("status") == MEASURED
                and attrs.get("effective") is None):
            # figures of no known setting: a measurement re-homed before it carried its setting
            problem = "measured, but its effective setting is not recorded"
        if problem is not None:  # kept out of every figure, shown as what it is
            attrs = {"status": UNREADABLE, UNREADABLE_ATTR: problem, "failure_class": f"unreadable: {problem}"}
        feasible = problem is None and t.state.name == "COMPLETE" and all(v <= 0 for v in t.constraints.values())
        out.append(TrialRecord(
            number=t.number,
            state=t.state.name,
            status=trial_status(t.state.name, attrs),
            requested=_requested(t, attrs),
            effective=spec_from_dict(attrs.get("effective")),
            # only a COMPLETE trial has a result. A PRUNED one's value is Optuna's last intermediate
            # value (a partial estimate, single-objective studies); a RUNNING one may carry the
            # values of a tell that committed between Optuna's SELECTs of its state and of its
            # values (PostgreSQL reads each in its own snapshot; QA: status -f json during a run
            # showed RUNNING trials with values)
            values=list(t.values) if t.values is not None and t.state.name == "COMPLETE" else None,
            feasible=feasible,
            attrs=attrs,
            duration_s=attrs.get("duration_s"),
        ))
    return out


#: The attributes naming a trial's setting, set on it before its launch (tuner.engine.trial); a
#: measurement re-homed elsewhere carries them (tuner.engine.finish.SETTING_ATTRS, with a baseline's
#: hardware).
TRIAL_SETTING = ("requested", "effective", "effective_key", "rewritten")


def _setting_of_original(attrs: dict, by_number: dict) -> dict:
    """The setting attributes a re-homed measurement (``replayed_from``: its original trial's
    number, tuner.engine.finish) lacks, from that original trial, which holds them: a tuner before
    2026-12-04 re-homed a measurement with its figures alone, and its copy read 'unreadable: measured,
    but its effective setting is not recorded', the measurement off the front for good (QA, qa173: a
    worker of 2026-12-01 paused past the heartbeat's grace, its trial failed by a worker of this
    tuner on another host, re-homed its measurement when woken). Empty for any other trial."""
    number = attrs.get("replayed_from")
    if not whole_number(number) or attrs.get("effective") is not None:
        return {}
    original = by_number.get(number)
    if original is None:
        return {}
    return {k: original.user_attrs[k] for k in TRIAL_SETTING
            if attrs.get(k) is None and original.user_attrs.get(k) is not None}


def _unbuilt_record(t: UnbuiltTrial) -> TrialRecord:
    """An :class:`UnbuiltTrial` as the readers see one: unreadable, with the setting it asked for.
    Its state is shown as COMPLETE: Optuna stores objective values only with a finished trial's
    state (``study.tell``)."""
    requested = None if attrs_problem(t.user_attrs) else spec_from_dict(t.user_attrs.get("requested"))
    attrs = {"status": UNREADABLE, UNREADABLE_ATTR: t.problem, "failure_class": f"unreadable: {t.problem}"}
    return TrialRecord(number=t.number, state="COMPLETE", status=UNREADABLE, requested=requested,
                       effective=None, values=None, feasible=False, attrs=attrs, duration_s=None)


def _requested(trial, attrs: dict) -> SpecConfig | None:
    """The setting a trial asked for: its parameters; a queued (WAITING) trial has none yet but the
    ones it was queued with (Optuna's ``fixed_params``: a seed a spent budget never reached showed
    in ``status`` with no setting); else the setting the tuner stored."""
    if trial.params:
        return spec_from_params(trial.params)
    queued = trial.system_attrs.get("fixed_params") if trial.state.name == "WAITING" else None
    if isinstance(queued, dict) and {"speculative_num_steps", "speculative_eagle_topk",
                                     "speculative_num_draft_tokens"} <= set(queued):
        return spec_from_params(queued)
    return spec_from_dict(attrs.get("requested"))


def status_counts(records: list[TrialRecord]) -> dict[str, int]:
    """Trials by status (``measured``, ``reused``, ...; Optuna's state for trials without one)."""
    counts: dict[str, int] = {}
    for r in records:
        key = r.status or r.state.lower()
        counts[key] = counts.get(key, 0) + 1
    return counts


def counts_text(records: list[TrialRecord]) -> str:
    """``"3 invalid, 10 measured"``: :func:`status_counts` as one line ("" for no trials)."""
    return ", ".join(f"{n} {k}" for k, n in sorted(status_counts(records).items()))


#: Figures :func:`merge_repeats` averages over the measurements of one setting (the others, such as
#: latency percentiles, stay the first measurement's).
_AVERAGED = ("single_tok_per_s", "single_speedup", "accept_length")


def _repeat_groups(records: list[TrialRecord]) -> list[list[TrialRecord]]:
    """The feasible measured trials grouped by effective setting, oldest first."""
    groups: dict[str, list[TrialRecord]] = {}
    for r in records:
        if r.status == MEASURED and r.feasible and r.values is not None:
            groups.setdefault(r.attrs.get("effective_key") or f"trial-{r.number}", []).append(r)
    return list(groups.values())


def merge_repeats(records: list[TrialRecord]) -> list[TrialRecord]:
    """One record per effective setting among the feasible measured trials, oldest first: a setting
    measured more than once (a sampler's deliberate re-measurement) gets the mean of its
    measurements' objective values and throughput figures, plus ``measurements`` (how many) and
    ``measured_in`` (their trial numbers); the first measurement's record stands for them. The
    estimate of a setting's true value is the mean of its readings, not its luckiest one."""
    import dataclasses

    out = []
    for group in _repeat_groups(records):
        first = group[0]
        if len(group) == 1:
            out.append(first)
            continue
        values = [sum(v) / len(group) for v in zip(*(r.values for r in group))]
        attrs = dict(first.attrs, measurements=len(group), measured_in=[r.number for r in group])
        for key in first.attrs:
            if key in _AVERAGED or key.startswith(("tok_per_s@", "speedup@")):
                got = [r.attrs.get(key) for r in group]
                if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in got):
                    attrs[key] = sum(got) / len(got)
        out.append(dataclasses.replace(first, values=values, attrs=attrs))
    return out


def run_to_run_spread(records: list[TrialRecord]) -> dict[str, Any] | None:
    """How far one launch's reading of a setting strays from another's, from the settings the study
    measured more than once (a sampler's re-measurements): per objective, the pooled standard
    deviation of the log readings around each setting's mean, as a relative spread (0.03: 3%) --
    the estimate the default sampler makes of its noise (:mod:`tuner.engine.structured`), without
    its prior. ``{"objectives": [spread or None, ...], "settings": n, "readings": m}``; None when no
    setting has two readings. An objective is left None where a repeated setting read 0 or less on
    it (a goodput of 0 has no relative spread)."""
    repeated = [g for g in _repeat_groups(records) if len(g) > 1]
    if not repeated:
        return None
    spreads = []
    for i in range(len(repeated[0][0].values)):
        ss, dof = 0.0, 0
        for group in repeated:
            col = [r.values[i] for r in group]
            if min(col) <= 0:
                continue
            logs = [math.log(v) for v in col]
            mean = sum(logs) / len(logs)
            ss += sum((x - mean) ** 2 for x in logs)
            dof += len(logs) - 1
        spreads.append(math.expm1(math.sqrt(ss / dof)) if dof else None)
    return {"objectives": spreads, "settings": len(repeated), "readings": sum(len(g) for g in repeated)}


def front_records(records: list[TrialRecord]) -> list[TrialRecord]:
    """The non-dominated feasible trials, one per effective config: its first measurement, with the
    mean of all its measurements when the sampler measured it again (:func:`merge_repeats`). The one
    front every reader uses: status, pareto, export, the report, and pruning's verdict."""
    from .objectives import pareto_front

    candidates = merge_repeats(records)
    return [candidates[i] for i in pareto_front([r.values for r in candidates])]
