"""What a measurement must meet besides its objectives: the study's latency SLOs, and the lossless
check of its greedy outputs against the baseline's.

Pure functions of a measurement's figures (a :class:`tuner.bench.SuiteResult`, or anything without
request records, which then has no latency or goodput figures) and of trial attributes:

* :func:`slo_checks`: every limit of ``slo:`` judged on the stored latency percentiles
  (attribute ``latency_ms@C``: ``{"ttft_p99": ms, ...}``, :meth:`tuner.bench.SuiteResult.summary`): the measured figure, the limit and the relative excess. A limit whose
  figure was not measured counts as broken (excess 1.0: nothing shows it holds).
* :func:`extra_constraints`: the checks as Optuna constraints, one per limit, named
  ``slo:KEY@C`` with value ``measured / limit - 1`` (positive: broken, by that share), plus
  ``lossless`` when the study enforces the lossless check. Optuna's samplers rank infeasible trials
  by the sum of the positive values (``samplers/_tpe/sampler.py``, ``_get_infeasible_trial_score``),
  so a trial that misses a limit by 5% teaches the sampler less "avoid" than one that misses by 80%,
  and both rank below every feasible trial. The engine's own ``measured`` constraint (1.0 for a
  trial that measured nothing) stays beside them.
* :func:`goodput_attrs`: ``goodput@C`` (good requests/s) and ``goodput_tok_per_s@C`` at every
  concurrency with limits, from the request records (SGLang's ``benchmark/goodput.py`` definition).
* :func:`lossless_attrs`: the share of single requests whose output equals the baseline's, with
  temperature 0 only (with sampling, outputs differ by design).
"""

from __future__ import annotations

from typing import Any, Sequence

from ..config.slo import SLO, parse_limit

SLO_ATTR = "slo_checks"
LOSSLESS_CONSTRAINT = "lossless"
#: baseline attribute holding its single-request outputs (``{"PROMPT@LEN": text}``)
OUTPUTS_ATTR = "single_outputs"


def slo_checks(attrs: dict[str, Any], slo: Sequence[SLO]) -> list[dict[str, Any]]:
    """Each limit against the figure in ``attrs``: ``{concurrency, limit, limit_ms, measured_ms,
    ok, excess}`` (``excess`` = measured / limit - 1; 1.0 when the figure is missing)."""
    out = []
    for entry in slo:
        c = entry.concurrency
        for key, limit in entry.limits.items():
            measured = measured_ms(attrs, key, c)
            if measured is None:
                out.append({"concurrency": c, "limit": key, "limit_ms": limit, "measured_ms": None,
                            "ok": False, "excess": 1.0})
                continue
            excess = measured / limit - 1.0
            out.append({"concurrency": c, "limit": key, "limit_ms": limit, "measured_ms": measured,
                        "ok": measured <= limit, "excess": excess})
    return out


def measured_ms(attrs: dict[str, Any], key: str, concurrency: int) -> float | None:
    """The stored figure an SLO key names (``ttft_p99_ms`` at C -> ``latency_ms@C["ttft_p99"]``)."""
    return (attrs.get(f"latency_ms@{concurrency}") or {}).get(key.removesuffix("_ms"))


def broken(checks: Sequence[dict] | None) -> list[dict]:
    return [c for c in checks or [] if not c["ok"]]


def check_text(check: dict) -> str:
    """``ttft_p99_ms@32 2310 > 2000 (+15.5%)`` for people."""
    where = f"{check['limit']}@{check['concurrency']}"
    if check["measured_ms"] is None:
        return f"{where}: not measured (limit {check['limit_ms']:g})"
    sign = ">" if not check["ok"] else "<="
    return (f"{where} {check['measured_ms']:.0f} {sign} {check['limit_ms']:g}"
            f" ({check['excess'] * 100:+.1f}%)")


def extra_constraints(attrs: dict[str, Any]) -> dict[str, float]:
    """Optuna constraints from a trial's stored checks (see the module docstring)."""
    out = {f"slo:{c['limit']}@{c['concurrency']}": float(c["excess"]) for c in attrs.get(SLO_ATTR) or []}
    if attrs.get("lossless_enforced"):
        share, floor = attrs.get("lossless_share"), attrs.get("lossless_min_share")
        if share is not None and floor is not None:
            out[LOSSLESS_CONSTRAINT] = float(floor - share) if share < floor else -1.0
    return out


def goodput_attrs(figures, slo: Sequence[SLO]) -> dict[str, float]:
    """``goodput@C``, ``goodput_tok_per_s@C`` and ``slo_attainment@C`` where the figures have the
    request records to count good requests (a :class:`tuner.bench.SuiteResult`)."""
    out: dict[str, float] = {}
    if not hasattr(figures, "goodput"):
        return out
    for entry in slo:
        limits: dict[str, float] = {}
        for key, value in entry.limits.items():
            metric, _ = parse_limit(key)
            # A request is judged on its own figure, whatever the percentile: the limit value is
            # the bound (SGLang's --goodput ttft:X tpot:Y e2el:Z); the tightest one per metric wins.
            limits[metric] = min(value, limits.get(metric, value))
        got = figures.goodput(entry.concurrency, limits)
        if got is None:
            continue
        c = entry.concurrency
        out[f"goodput@{c}"] = got["requests_per_s"]
        out[f"goodput_tok_per_s@{c}"] = got["tok_per_s"]
        out[f"slo_attainment@{c}"] = got["good"] / got["requests"] if got["requests"] else 0.0
    return out


def baseline_outputs(figures) -> dict[str, str]:
    """The baseline's single-request outputs, stored with it so any worker can compare."""
    if not hasattr(figures, "records") or _temperature(figures) != 0:
        return {}
    from ..bench.lossless import single_outputs

    return single_outputs(figures)


def lossless_attrs(figures, baseline_attrs: dict | None, min_share: float, enforce: bool) -> dict[str, Any]:
    """The lossless check's attributes (empty when it does not apply: sampling, no records, no
    baseline outputs). Of the baseline's stored outputs only text counts: an attribute that is no
    mapping of text (edited by hand) compares nothing (:func:`usable_outputs`)."""
    outputs = usable_outputs((baseline_attrs or {}).get(OUTPUTS_ATTR))
    if not outputs or not hasattr(figures, "records") or _temperature(figures) != 0:
        return {}
    from ..bench.lossless import compare_outputs

    check = compare_outputs(outputs, figures)
    if check is None:
        return {}
    attrs = check.to_attrs()
    attrs.update(lossless_min_share=min_share, lossless_flag=check.share < min_share,
                 lossless_enforced=enforce)
    return attrs


def usable_outputs(stored) -> dict[str, str]:
    """The baseline's stored single-request outputs (``{"PROMPT@LEN": text}``, as
    :func:`baseline_outputs` writes them) that can be compared: the entries whose output is text, of
    a mapping; ``{}`` for anything else. QA (qa191): the baseline's ``single_outputs`` edited to
    ``"abc"`` ended every later run in AttributeError after its first trial's whole suite, that
    measurement lost (the trial interrupted, measured again by the next run, and lost again)."""
    if not isinstance(stored, dict):
        return {}
    return {k: v for k, v in stored.items() if isinstance(k, str) and isinstance(v, str)}


def _temperature(figures) -> float:
    suite = getattr(figures, "suite", None) or {}
    return float(suite.get("temperature", 0.0) or 0.0)
