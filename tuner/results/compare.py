"""Two studies side by side (``tuner study compare A B``): two nodes, two SGLang versions, two
workloads. Reads storage only.

What is compared: the hardware (backend, simulator profile, model, TP size, the attention backend
every launch ran: the study's stored decision, or for a study an older tuner made, which stored
none, the backend its launches ran, :func:`tuner.engine.facts.older_study_backend`), the SGLang version the
servers reported, the workload (suite: prompts, lengths, concurrencies; API; objectives), the
baselines' figures, both Pareto fronts, the best value of each objective, and every effective
setting measured (feasibly) in both, with B's speedup over A's; a setting measured more than once
stands for the mean of its readings, as on the front (:func:`tuner.engine.records.merge_repeats`). Differences that make figures
not comparable as they stand (another suite, down to its prompt texts, dataset and temperature; other
objectives; another backend; another search space; other server arguments) are listed as
``warnings``.
"""

from __future__ import annotations

from typing import Any

from ..engine.records import load_records, merge_repeats
from ..engine.study import CONFIG_ATTR, SPACE_ATTR, SUITE_ATTR
from .catalog import study_summary
from .status import front_records


def _label(e) -> str:
    return f"{e.num_steps},{e.eagle_topk},{e.num_draft_tokens}"


def study_side(study, storage_label: str) -> dict[str, Any]:
    """One study's half of the comparison."""
    from ..engine.baseline import find_baseline

    attrs = study.user_attrs
    config = attrs.get(CONFIG_ATTR) or {}
    server = config.get("server") or {}
    suite = attrs.get(SUITE_ATTR) or {}
    summary = study_summary(study, storage_label)
    records = load_records(study)
    baseline = find_baseline(study)
    base = {} if baseline is None else {k: v for k, v in baseline.attrs.items()
                                        if k == "single_tok_per_s" or k.startswith("tok_per_s@")}
    # one record per setting, at the mean of its readings (as the front, status and export read it)
    measured = {r.attrs.get("effective_key"): r for r in merge_repeats(records)}
    front = sorted(front_records(records), key=lambda r: -r.values[0])
    best = {}
    for i, name in enumerate(summary["objectives"]):
        if measured:
            r = max(measured.values(), key=lambda r: (r.values[i], -r.number))
            best[name] = {"trial": r.number, "setting": _label(r.effective), "value": r.values[i]}
    return {
        "study": study.study_name,
        "storage": storage_label,
        "hardware": {"backend": server.get("backend"), "profile": _profile(server),
                     "model_path": server.get("model_path"), "draft_model_path": server.get("draft_model_path"),
                     "tp_size": server.get("tp_size"), **_attention(attrs)},
        "sglang_versions": summary["sglang_versions"],
        "workload": {"suite": suite.get("name"), "prompts": [p.get("name") for p in suite.get("prompts") or []],
                     "single_lengths": (suite.get("single") or {}).get("lengths"),
                     "concurrencies": (suite.get("sweep") or {}).get("concurrencies"),
                     "sweep_max_tokens": (suite.get("sweep") or {}).get("max_tokens"),
                     "api": (config.get("bench") or {}).get("api"), "stream": (config.get("bench") or {}).get("stream"),
                     "objectives": summary["objectives"]},
        "counts": summary["counts"],
        "baseline": base,
        "front": [{"trial": r.number, "setting": _label(r.effective), "values": r.values,
                   "single_tok_per_s": r.attrs.get("single_tok_per_s"),
                   "tok_per_s": {k.split("@")[1]: v for k, v in r.attrs.items() if k.startswith("tok_per_s@")}}
                  for r in front],
        "best": best,
        "_measured": measured,
        "_suite": suite,
        "_space": attrs.get(SPACE_ATTR) or {},
        "_server": _current_server(config),
    }


def _baseline_warning(side: str, study) -> list[str]:
    """A warning when a study's baseline launch failed or cannot be read
    (:func:`tuner.engine.baseline.baseline_problem`, as status says it): its baseline rows are then
    empty (QA, qa199: a study whose baseline launch failed as oom showed empty rows, and no line said
    why). A study not run yet says so in its trial counts, and gets none."""
    from ..engine.baseline import baseline_problem

    problem = baseline_problem(study)  # None while a baseline stands, or none ran
    return [] if problem is None else [f"{side}'s baseline: {problem}; its baseline rows are empty"]


def compare_studies(a, b, storage_a: str = "", storage_b: str = "") -> dict[str, Any]:
    """The comparison of studies ``a`` and ``b`` (Optuna studies made by tuner), JSON-safe."""
    sa, sb = study_side(a, storage_a), study_side(b, storage_b)
    warnings = []
    diff = [k for k in sa["workload"] if sa["workload"][k] != sb["workload"][k]]
    diff += [k for k in _suite_differences(sa["_suite"], sb["_suite"]) if not _SHOWN.get(k, set()) & set(diff)]
    if diff:
        warnings.append(f"the workloads differ ({', '.join(diff)}): figures measure different things")
    kinds = {"sim": "the simulated server", "sglang": "SGLang", "model": "no server (backend model)"}
    ka, kb = sa["hardware"]["backend"], sb["hardware"]["backend"]
    if ka != kb:
        warnings.append(f"A ran on {kinds.get(ka, ka)}, B on {kinds.get(kb, kb)}: figures of the simulator and "
                        "the model backend are model time, SGLang's wall time")
    space_diff = _space_differences(sa["_space"], sb["_space"])
    if space_diff:
        warnings.append(f"the search spaces differ ({', '.join(space_diff)}): each front and best is over its own "
                        "settings; the settings measured in both compare alike")
    args_diff = _server_differences(sa["_server"], sa["_space"], sb["_server"], sb["_space"])
    if args_diff:
        warnings.append(f"the servers ran with other arguments ({', '.join(args_diff)}): figures measure "
                        "different servers")
    for side, study in (("A", a), ("B", b)):
        warnings += _baseline_warning(side, study)
    same_objectives = sa["workload"]["objectives"] == sb["workload"]["objectives"]
    common = []
    for key in sa["_measured"].keys() & sb["_measured"].keys():
        ra, rb = sa["_measured"][key], sb["_measured"][key]
        common.append({"setting": _label(ra.effective), "trial_a": ra.number, "trial_b": rb.number,
                       "values_a": ra.values, "values_b": rb.values,
                       "ratio_b_over_a": [vb / va if va else None for va, vb in zip(ra.values, rb.values)]
                       if same_objectives else None})
    common.sort(key=lambda c: [-(v or 0) for v in c["values_a"]])
    baseline_ratio = {k: sb["baseline"][k] / v for k, v in sa["baseline"].items() if v and sb["baseline"].get(k)}
    for side in (sa, sb):
        side.pop("_measured")
        for key in ("_suite", "_space", "_server"):
            side.pop(key)
    return {"a": sa, "b": sb, "common": common, "baseline_ratio_b_over_a": baseline_ratio,
            "same_objectives": same_objectives, "warnings": warnings}


#: a stored suite's key (dotted) and the workload fields that already name a difference in it
_SHOWN = {"suite.name": {"suite"}, "suite.prompts": {"prompts"}, "suite.single.lengths": {"single_lengths"},
          "suite.sweep.concurrencies": {"concurrencies"}, "suite.sweep.max_tokens": {"sweep_max_tokens"}}
#: suite keys that shape no figure: a request past `timeout_s` fails (it is not measured slower), and
#: warm-up requests are sent before the measurement and never counted
_NOT_MEASURED = {"timeout_s", "warmup"}


def _suite_differences(a: dict, b: dict, prefix: str = "suite") -> list[str]:
    """The dotted keys in which two stored suites differ (one level into a mapping: ``suite.sweep.repeats``).

    The workload fields name the suite, its prompts by name, lengths and concurrencies only; two
    suites alike in those may still send other requests (the same prompt names over other text,
    another dataset, a sampling temperature), and their figures then measure different things. Each
    is read by this tuner's schema first (:func:`tuner.engine.stored_forms.current_suite`): a key an
    older tuner did not store is its default, not a difference."""
    if prefix == "suite":
        from ..engine.stored_forms import current_suite

        a, b = current_suite(a) or {}, current_suite(b) or {}
    out = []
    for key in sorted(set(a) | set(b), key=str):
        if key in _NOT_MEASURED or a.get(key) == b.get(key):
            continue
        if prefix == "suite.dataset" and key == "path" and a.get("sha256") and a.get("sha256") == b.get("sha256"):
            continue  # the same file's bytes in another folder (a copy on each node) draw the same requests
        va, vb = a.get(key), b.get(key)
        if prefix == "suite" and isinstance(va, dict) and isinstance(vb, dict):
            out += _suite_differences(va, vb, f"{prefix}.{key}")
        else:
            out.append(f"{prefix}.{key}")
    return out


def _current_server(config: dict) -> dict:
    """The stored config's ``server`` as this tuner reads it (an older tuner's lacks keys added since,
    and may hold a value in another spelling, ``mem_fraction_static: "0.85"``, launched as 0.85)."""
    from ..engine.stored_forms import current_config

    return (current_config(config).get("server") or {}) if config else {}


def _space_differences(a: dict, b: dict) -> list[str]:
    """The search-space parts two stored spaces differ in: ``algorithm`` and each flag's range
    (``params.speculative_eagle_topk``); its ``fixed`` arguments are the server's
    (:func:`_server_differences`). Both read by this tuner's schema first (an older tuner's stored
    space lacks keys added since: their defaults, not differences)."""
    from ..engine.stored_forms import current_space

    a, b = current_space(a) or {}, current_space(b) or {}
    out = ["algorithm"] if a.get("algorithm") != b.get("algorithm") else []
    pa, pb = a.get("params") or {}, b.get("params") or {}
    return out + [f"params.{k}" for k in sorted(set(pa) | set(pb), key=str) if pa.get(k) != pb.get(k)]


def _server_differences(server_a: dict, space_a: dict, server_b: dict, space_b: dict) -> list[str]:
    """The SGLang arguments every launch of A and of B passed, where they differ: ``server.args``
    with the space's ``fixed`` (one launch line: a key in either is the same argument), the raw
    ``extra_args``, and ``env`` by name (its values may be secrets: never shown). The server's and
    the space's stored forms are read by this tuner's schema first, as for the suite."""
    from ..engine.stored_forms import current_space

    space_a, space_b = current_space(space_a) or {}, current_space(space_b) or {}

    def args(server: dict, space: dict) -> dict:
        # a number written as text ("0.85") is the number SGLang holds, as the export writes it
        from .export import _as_held

        merged = {**(space.get("fixed") or {}), **(server.get("args") or {})}
        return {k: _as_held(k, v) for k, v in merged.items()}

    aa, ab = args(server_a, space_a), args(server_b, space_b)
    out = [k for k in sorted(set(aa) | set(ab), key=str) if aa.get(k) != ab.get(k)]
    if (server_a.get("extra_args") or []) != (server_b.get("extra_args") or []):
        out.append("extra_args")
    ea, eb = server_a.get("env") or {}, server_b.get("env") or {}
    return out + [f"env {k}" for k in sorted(set(ea) | set(eb), key=str) if ea.get(k) != eb.get(k)]


#: ``attention_decision`` of a study that stored its attention backend
STORED = "stored"
#: whose backend an older study's launches ran (``attention_pinned_by_tuner`` false / true), as said
WHOSE = {False: "its own", True: "the tuner's pin"}


def _attention(attrs: dict) -> dict[str, str | bool | None]:
    """The attention backend every launch ran, as the record's ``hardware`` carries it:

    * ``attention_backend``: the backend; None when not known (another tool's attributes);
    * ``attention_stored``: true when the study stored its decision, false for a study an older
      tuner made (none stored: the backend its launches ran, as run and launch read it; no model
      facts needed), None when not known;
    * ``attention_pinned_by_tuner``: for such an older study, whether that backend is the tuner's
      pin (true) or its own ``server.args.attention_backend`` (false); None otherwise;
    * ``attention_decision``: the same said in words, kept for readers of the JSON before the two
      fields above (:data:`STORED`, or ``not stored (older study): `` and :data:`WHOSE`'s words).

    Readers render from the structured fields, never from the words."""
    from ..config.space import SearchSpaceConfig
    from ..config.study import study_from_dict
    from ..config.yamlfile import parse_model
    from ..engine.facts import ATTENTION_ATTR, older_study_backend
    from ..engine.study import SPACE_ATTR

    stored = attrs.get(ATTENTION_ATTR)
    if isinstance(stored, dict):
        return {"attention_backend": stored.get("backend"), "attention_decision": STORED,
                "attention_stored": True, "attention_pinned_by_tuner": None}
    try:
        space = parse_model(SearchSpaceConfig, attrs[SPACE_ATTR], "<stored search space>")
        backend, pinned = older_study_backend(study_from_dict(attrs[CONFIG_ATTR]), space)
    except (KeyError, TypeError, ValueError):  # (ConfigError is a ValueError) another tool's attributes
        return {"attention_backend": None, "attention_decision": None, "attention_stored": None,
                "attention_pinned_by_tuner": None}
    return {"attention_backend": backend, "attention_decision": f"not stored (older study): {WHOSE[bool(pinned)]}",
            "attention_stored": False, "attention_pinned_by_tuner": bool(pinned)}


def _profile(server: dict) -> str | None:
    """The simulator profile (backend sim), or the model's profile or landscape (backend model)."""
    if server.get("backend") == "sim":
        return (server.get("sim") or {}).get("profile")
    if server.get("backend") == "model":
        model = server.get("model") or {}
        return model.get("profile") or model.get("landscape")
    return None
