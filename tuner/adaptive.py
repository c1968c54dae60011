"""SGLang's adaptive speculative policy (``--speculative-adaptive-config FILE``) from a study.

What SGLang 0.5.23 does with the file (``srt/speculative/adaptive_spec_params.py``,
``AdaptiveSpeculativeParams``; flag handling in ``srt/arg_groups/speculative_hook.py``,
``_maybe_disable_adaptive`` / ``_init_adaptive_speculative_params``):

* Top-level keys that are digit strings are batch-size thresholds; every other key is ignored by the
  threshold lookup (merged into each slot's knobs, where only SGLang's own knob names are read).
  Each threshold has ``candidate_steps``: a non-empty list of ints >= 0, 0 meaning no drafting.
* Before every decode step the running batch size is rounded up to the next captured CUDA-graph
  batch size, and the slot used is the largest threshold at or below it (the smallest threshold
  when the batch is below all of them).
* Within a slot SGLang moves between the candidates by an EMA of accepted draft length. With one
  candidate per threshold -- what this module writes -- the steps are fixed per batch size.
* Only EAGLE/EAGLE3 with ``--speculative-eagle-topk 1`` (otherwise SGLang logs "speculative_adaptive
  disabled" and runs static params); draft tokens are always steps + 1; ``--speculative-num-steps``
  must be one of the candidates of some threshold, or SGLang raises ``ValueError`` at launch.

How this module chooses: a threshold per measured concurrency C (the sweep's aggregate tok/s at C;
the single-request tok/s for batch size 1 when the sweep has no C=1). Candidates are the study's
feasible topk-1 measurements (effective (s, 1, s+1), first measurement of each) plus the baseline as
steps 0; the steps with the highest measured tok/s win (ties: fewer steps).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Sequence

from .pareto import PickError
from .records import MEASURED, TrialRecord, load_records

#: Where the evidence goes in the policy file: not a digit string, so SGLang's lookup skips it.
PROVENANCE_KEY = "_tuner"


@dataclass(frozen=True)
class StepsMeasurement:
    steps: int  #: 0 = the autoregressive baseline
    tok_per_s: float
    trial: int | None  #: None for the baseline


@dataclass
class Threshold:
    batch_size: int
    figure: str  #: the attribute compared: tok_per_s@C or single_tok_per_s
    measured: list[StepsMeasurement]  #: best first

    @property
    def best(self) -> StepsMeasurement:
        return self.measured[0]


@dataclass
class AdaptivePolicy:
    study: str
    thresholds: list[Threshold]
    left_out: list[int] = field(default_factory=list)  #: feasible trials with topk > 1 (unsupported)

    def steps_by_batch_size(self) -> dict[int, int]:
        return {t.batch_size: t.best.steps for t in self.thresholds}

    def candidate_steps(self) -> list[int]:
        """Union of the thresholds' steps (SGLang sizes its runtime states from it)."""
        return sorted(set(self.steps_by_batch_size().values()))

    def start_steps(self) -> int:
        """``--speculative-num-steps`` for the server: the smallest batch's steps, else the largest
        positive candidate (SGLang requires a candidate; 0 cannot be the launch value)."""
        first = self.thresholds[0].best.steps
        return first if first > 0 else max(self.candidate_steps())

    def to_json(self, exported_at: str | None = None) -> dict[str, Any]:
        """The policy file: thresholds as digit strings, plus the evidence under ``_tuner``."""
        out: dict[str, Any] = {str(t.batch_size): {"candidate_steps": [t.best.steps]} for t in self.thresholds}
        out[PROVENANCE_KEY] = {
            "study": self.study,
            "exported_at": exported_at or _now(),
            "note": "one candidate per batch-size threshold: the steps that measured the highest "
                    "tok/s at that concurrency (0 = no drafting, measured as the baseline); only "
                    "topk-1 settings and measured concurrencies",
            "measured": {str(t.batch_size): {
                "figure": t.figure,
                "by_steps": {str(m.steps): {"tok_per_s": round(m.tok_per_s, 3),
                                            "trial": "baseline" if m.trial is None else m.trial}
                             for m in t.measured},
            } for t in self.thresholds},
            "left_out_topk_gt_1": self.left_out,
        }
        return out


def topk1_measurements(records: Sequence[TrialRecord]) -> tuple[dict[int, TrialRecord], list[int]]:
    """Feasible measured topk-1 trials by steps (first measurement each), and trials left out."""
    by_steps: dict[int, TrialRecord] = {}
    left_out = []
    for r in records:
        if r.status != MEASURED or not r.feasible or r.effective is None:
            continue
        if r.effective.eagle_topk != 1:
            left_out.append(r.number)
            continue
        by_steps.setdefault(int(r.effective.num_steps), r)
    return by_steps, left_out


def _figure(attrs: dict, c: int, single_for_1: bool) -> tuple[str, float | None]:
    if single_for_1:
        return "single_tok_per_s", attrs.get("single_tok_per_s")
    return f"tok_per_s@{c}", attrs.get(f"tok_per_s@{c}")


def build_policy(study_name: str, records: Sequence[TrialRecord], baseline: dict | None) -> AdaptivePolicy:
    """Choose the steps per measured concurrency. Raises :class:`PickError` when the study has no
    baseline or no feasible topk-1 measurement, or when drafting never beat the baseline."""
    if not baseline:
        raise PickError(f"study {study_name} has no measured baseline; run `tuner study run` first")
    by_steps, left_out = topk1_measurements(records)
    if not by_steps:
        raise PickError(f"study {study_name} has no feasible topk-1 measurement; SGLang's adaptive "
                        f"mode runs --speculative-eagle-topk 1 only (add topk 1 to the search space)")
    levels = sorted({int(k.split("@")[1]) for k in baseline if k.startswith("tok_per_s@")
                     and baseline[k] is not None})
    thresholds = []
    plan = [(c, False) for c in levels]
    if 1 not in levels and baseline.get("single_tok_per_s") is not None:
        plan.insert(0, (1, True))
    for c, single in plan:
        name, base = _figure(baseline, c, single)
        measured = [StepsMeasurement(0, float(base), None)] if base else []
        for steps, r in sorted(by_steps.items()):
            _, v = _figure(r.attrs, c, single)
            if v is not None:
                measured.append(StepsMeasurement(steps, float(v), r.number))
        if len(measured) < 2:
            continue  # nothing to choose between at this concurrency
        measured.sort(key=lambda m: (-m.tok_per_s, m.steps))
        thresholds.append(Threshold(c, name, measured))
    if not thresholds:
        raise PickError(f"study {study_name}: no concurrency has both a baseline and a topk-1 figure")
    policy = AdaptivePolicy(study_name, thresholds, left_out)
    if policy.candidate_steps() == [0]:
        raise PickError(f"study {study_name}: no topk-1 setting beat the baseline at any measured "
                        f"concurrency; serve without speculative decoding")
    return policy


def study_policy(study) -> AdaptivePolicy:
    """The adaptive policy of a stored study."""
    from .study import find_baseline

    base = find_baseline(study)
    return build_policy(study.study_name, load_records(study), None if base is None else base.attrs)


def policy_lines(policy: AdaptivePolicy) -> list[str]:
    """One line per threshold, for people: batch sizes, chosen steps and the margin it won by."""
    lines = []
    for t in policy.thresholds:
        best, runner = t.best, t.measured[1]
        who = "baseline" if best.trial is None else f"trial {best.trial}"
        lines.append(f"batch size >= {t.batch_size}: steps {best.steps} ({who}, {best.tok_per_s:.1f} tok/s at "
                     f"{t.figure}; next best: steps {runner.steps}, {runner.tok_per_s:.1f})")
    return lines


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
