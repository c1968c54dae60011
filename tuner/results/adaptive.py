"""SGLang's adaptive speculative policy (``--speculative-adaptive-config FILE``) from a study.

The file format and SGLang's rules for it live in :mod:`tuner.sglang.adaptive`. How this module
chooses: a threshold per measured concurrency C (the sweep's aggregate tok/s at C; the
single-request tok/s for batch size 1 when the sweep has no C=1). Candidates are the study's
feasible topk-1 measurements (effective (s, 1, s+1), first measurement of each) plus the baseline as
steps 0; the steps with the highest measured tok/s win (ties: fewer steps).
"""

from __future__ import annotations

from typing import Callable, Sequence

from ..engine.limits import SLO_ATTR, broken
from ..engine.records import MEASURED, TrialRecord, counts_text, load_records, merge_repeats
from ..sglang.adaptive import AdaptivePolicy, StepsMeasurement, Threshold
from ..sglang.rules import SpecConfig
from .pareto import PickError


def topk1_measurements(records: Sequence[TrialRecord]) -> tuple[dict[int, TrialRecord], list[int]]:
    """Feasible measured topk-1 trials by steps (the first setting measured at each, at the mean of
    its readings: :func:`tuner.engine.records.merge_repeats`), and trials left out."""
    by_steps: dict[int, TrialRecord] = {}
    left_out = []
    for r in merge_repeats(list(records)):
        if r.status != MEASURED or not r.feasible or r.effective is None:
            continue
        if r.effective.eagle_topk != 1:
            left_out.append(r.number)
            continue
        by_steps.setdefault(int(r.effective.num_steps), r)
    return by_steps, left_out


def _broken_limits(records: Sequence[TrialRecord]) -> str:
    """``e2e_p99_ms@32 broken by 3 of 3`` over ``records``: each limit they break, by how many (the
    lossless check counts as ``bench.lossless``)."""
    counts: dict[str, int] = {}
    for r in records:
        keys = {f"{c['limit']}@{c['concurrency']}" for c in broken(r.attrs.get(SLO_ATTR))}
        if r.attrs.get("lossless_flag") and r.attrs.get("lossless_enforced"):
            keys.add("bench.lossless")
        for key in keys:
            counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{k} broken by {n} of {len(records)}" for k, n in sorted(counts.items()))


def _no_topk1_reason(study_name: str, records: Sequence[TrialRecord]) -> str:
    """Why there is no feasible topk-1 measurement, with what to do. When the study's limits rule
    out every measured setting, or every topk-1 one, adding topk 1 to the space would not help:
    the message names the limits broken instead."""
    measured = [r for r in records if r.status == MEASURED and r.effective is not None]
    topk1 = [r for r in measured if r.effective.eagle_topk == 1]
    if not measured:  # nothing measured at all: no search space's fault (QA: "add topk 1 to the search
        # space" was said of a study whose every trial was pruned, or that held none)
        return (f"study {study_name} has no measured trial yet ({counts_text(records) or 'no trials'}); "
                f"run `tuner study run` (or --add-trials N) first")
    if not any(r.feasible for r in measured):
        return (f"no measured setting of study {study_name} meets its SLOs ({_broken_limits(measured)}), "
                f"so none can go into an adaptive policy; measure more settings (tuner study run "
                f"--add-trials N) or, if they are out of this server's reach, create a study with looser "
                f"slo limits under a new name")
    if topk1 and not any(r.feasible for r in topk1):
        return (f"no topk-1 setting of study {study_name} meets its SLOs ({_broken_limits(topk1)}), and "
                f"SGLang's adaptive mode runs --speculative-eagle-topk 1 only; measure more topk-1 settings "
                f"(tuner study run --add-trials N) or export one static setting that meets them (--pick)")
    return (f"study {study_name} has no feasible topk-1 measurement; SGLang's adaptive "
            f"mode runs --speculative-eagle-topk 1 only (add topk 1 to the search space)")


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
        raise PickError(_no_topk1_reason(study_name, records))
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


def study_policy(study, unreadable: Callable[[str], None] | None = None) -> AdaptivePolicy:
    """The adaptive policy of a stored study. :class:`ConfigError` when SGLang would switch adaptive
    speculation off with the study's own server arguments (attention DP, multi-layer EAGLE, two-batch
    overlap, PD multiplexing): the policy would be ignored, with one warning line in the log.
    ``unreadable``: as :func:`tuner.engine.study.config_from_study`'s."""
    from ..config.yamlfile import ConfigError
    from ..engine.baseline import find_baseline
    from ..engine.study import config_from_study
    from ..server.command import merged_server_args
    from ..sglang.adaptive import adaptive_unsupported_reason

    config, space, _ = config_from_study(study, unreadable=unreadable)
    reason = adaptive_unsupported_reason(SpecConfig(1, 1, 2), merged_server_args(config.server, space.config.fixed))
    if reason is not None:
        raise ConfigError("--adaptive", "", f"SGLang 0.5.23 switches adaptive speculation off on this study's "
                                            f"servers: {reason} (adaptive_spec_params.py); the policy would never run")
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

