"""SGLang's adaptive speculative decoding: its flag rules and its policy file format.

What SGLang 0.5.23 does with ``--speculative-adaptive --speculative-adaptive-config FILE``
(``srt/speculative/adaptive_spec_params.py``, ``AdaptiveSpeculativeParams``; flag handling in
``srt/arg_groups/speculative_hook.py``, ``_maybe_disable_adaptive`` / ``_init_adaptive_speculative_params``):

* Top-level keys that are digit strings are batch-size thresholds; every other key is ignored by the
  threshold lookup (merged into each slot's knobs, where only SGLang's own knob names are read).
  Each threshold has ``candidate_steps``: a non-empty list of ints >= 0, 0 meaning no drafting.
* Before every decode step the running batch size is rounded up to the next captured CUDA-graph
  batch size, and the slot used is the largest threshold at or below it (the smallest threshold
  when the batch is below all of them).
* Within a slot SGLang moves between the candidates by an EMA of accepted draft length. With one
  candidate per threshold -- what :class:`AdaptivePolicy` writes -- the steps are fixed per batch size.
* Only EAGLE/EAGLE3 with ``--speculative-eagle-topk 1`` (otherwise SGLang logs "speculative_adaptive
  disabled" and runs static params); draft tokens are always steps + 1; ``--speculative-num-steps``
  must be one of the candidates of some threshold, or SGLang raises ``ValueError`` at launch.

The simulator uses :func:`adaptive_candidate_steps` and :func:`resolve_adaptive` to accept and refuse
as SGLang does; :mod:`tuner.results.adaptive` builds an :class:`AdaptivePolicy` from a study.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from .rules import SpecConfig

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



def adaptive_candidate_steps(config: dict) -> list[int]:
    """The union of every batch-size slot's ``candidate_steps`` of an adaptive config (JSON).

    Mirrors ``adaptive_spec_params.py`` (``_load_adaptive_config``): keys that are not digit strings
    are skipped; each slot needs a non-empty list of non-negative ints; at least one slot.
    Raises ``ValueError`` with SGLang's message.
    """
    steps: set[int] = set()
    for key, entry in config.items():
        if not key.isdigit():
            continue
        values = entry.get("candidate_steps") if isinstance(entry, dict) else None
        if not isinstance(values, list) or not values or not all(
                isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in values):
            raise ValueError(f"BS {key}: candidate_steps must be a list of non-negative ints, got {values!r}")
        steps.update(values)
    if not steps:
        raise ValueError("speculative_adaptive_config must contain at least one integer-string BS key, "
                         'e.g. {"1": {"candidate_steps": [1,3,7]}}. ' f"Got keys: {list(config.keys())}")
    return sorted(steps)


def adaptive_unsupported_reason(requested: SpecConfig, server_args: dict | None = None) -> str | None:
    """Why SGLang switches adaptive speculation off for this setting and these server arguments
    (``adaptive_spec_params.py``, ``adaptive_unsupported_reason``, in its order), or None. Attention
    data parallelism counts when it runs more than one rank: ``attn_dp_size`` > 1
    (``runtime_context.py``, ``attn_dp_enabled_of``), or the deprecated ``enable_dp_attention`` with
    ``dp_size`` > 1, which SGLang's resolution turns into ``attn_dp_size``."""
    args = server_args or {}
    if requested.eagle_topk is not None and requested.eagle_topk != 1:
        return f"speculative_eagle_topk={requested.eagle_topk} (only topk=1 is supported)"
    if int(args.get("attn_dp_size") or 1) > 1 or (args.get("enable_dp_attention") and int(args.get("dp_size") or 1) > 1):
        return "attention DP is not supported (adaptive tier decisions are not synchronized across DP ranks)"
    for flag, why in (("enable_multi_layer_eagle", "MultiLayerEagleWorkerV2 does not implement adaptive"),
                      ("enable_two_batch_overlap", "adaptive state swap would discard the TboAttnBackend wrapper"),
                      ("enable_pdmux", "adaptive state swap does not update decode_attn_backend_group")):
        if args.get(flag):
            return f"{flag}=True is not supported ({why})"
    return None


def resolve_adaptive(requested: SpecConfig, candidate_steps: list[int],
                     server_args: dict | None = None) -> tuple[SpecConfig, str | None]:
    """SGLang's handling of ``--speculative-adaptive`` (speculative_hook.py, ``_maybe_disable_adaptive``
    and ``_init_adaptive_speculative_params``), applied before the rules of :func:`resolve`.

    Returns the setting to resolve further and, when adaptive is switched off
    (:func:`adaptive_unsupported_reason`), SGLang's warning: the server then runs the static
    setting. Raises ``ValueError`` when num_steps is not among the candidate steps, as SGLang does.
    """
    reason = adaptive_unsupported_reason(requested, server_args)
    if reason is not None:
        return requested, f"speculative_adaptive disabled: {reason}. Falling back to static speculative params."
    steps = requested.num_steps
    if steps is None:
        steps = candidate_steps[len(candidate_steps) // 2]
    if steps not in candidate_steps:
        raise ValueError(f"--speculative-num-steps={steps} is not in the adaptive config candidate_steps "
                         f"{candidate_steps}. Pass one of those values.")
    return SpecConfig(steps, 1, steps + 1), None


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
