"""SGLang 0.5.23's launch checks of server arguments that are neither parallelism nor speculation.

``ServerArgs.check_server_args`` (``arg_groups/validation_hook.py`` lines 172-330), which SGLang's Engine
runs after ``resolve_once`` and before anything loads (``entrypoints/engine.py`` line 1165), at every
launch, the autoregressive baseline's too. The parallel ones (nodes, pipeline parallelism, DP replicas,
chunked prefill against the page size) are :func:`tuner.sglang.parallel.launch_check_refusal`'s, which
runs these in SGLang's order; a study refuses them when its file loads
(:class:`tuner.config.study.ServerSettings`), the simulator at its launch (:mod:`tuner.sim.args`).
QA (qa226): ``served_model_name: kimi:k2``, ``enable_torch_compile`` with ``disable_cuda_graph_padding``,
``schedule_conservativeness: -1``, ``retraction_policy: priority`` alone and ``enable_priority_scheduling``
with ``schedule_policy: lpm`` were each created, and the simulator started with them.
"""

from __future__ import annotations

#: ``utils/runai_utils.py`` SUPPORTED_SCHEMES: object-storage model URIs, whose names may hold a colon
_OBJECT_STORAGE = ("s3://", "gs://", "az://")

#: the server arguments each check reads, in SGLang's order (a refusal names the ones given)
PADDING_ARGS = ("disable_cuda_graph_padding", "enable_torch_compile")
NAME_ARGS = ("served_model_name",)
SCHEDULING_ARGS = ("tokenizer_worker_num", "detokenizer_worker_num", "enable_priority_scheduling",
                   "schedule_policy", "retraction_policy", "schedule_conservativeness")


def padding_refusal(args: dict) -> str | None:
    """validation_hook.py line 187: no ``--disable-cuda-graph-padding`` with ``--enable-torch-compile``."""
    if args.get("disable_cuda_graph_padding") and args.get("enable_torch_compile"):
        return ("AssertionError: --disable-cuda-graph-padding is incompatible with --enable-torch-compile. "
                "Remove --disable-cuda-graph-padding or --enable-torch-compile.")
    return None


def served_name_refusal(args: dict) -> str | None:
    """validation_hook.py line 214: the served model name (``served_model_name``, else the model path:
    serving_hook.py line 642) holds no ':' (LoRA's ``model:adapter`` syntax), unless it is an
    object-storage URI."""
    name = args.get("served_model_name")
    if name is None or str(name).lower().startswith(_OBJECT_STORAGE) or ":" not in str(name):
        return None
    return ("AssertionError: served_model_name cannot contain a colon (':') character. The colon is reserved for "
            f"the 'model:adapter' syntax used in LoRA adapter specification. Invalid value: '{name}'")


def scheduling_refusal(args: dict) -> str | None:
    """validation_hook.py lines 273-316, in their order: tokenizer and detokenizer workers at least 1,
    priority scheduling on the ``fcfs`` or ``lof`` policy only, the ``priority`` retraction policy only
    with priority scheduling, ``schedule_conservativeness`` not negative. Unset: SGLang's defaults."""
    def number(name: str, default: float) -> float:
        value = args.get(name)
        return default if value is None else float(value)

    if number("tokenizer_worker_num", 1) <= 0:
        return "AssertionError: Tokenizer worker num must >= 1"
    if number("detokenizer_worker_num", 1) <= 0:
        return "AssertionError: Detokenizer worker num must >= 1"
    priority = bool(args.get("enable_priority_scheduling"))
    policy = args.get("schedule_policy") or "fcfs"
    if priority and policy not in ("fcfs", "lof"):
        return (f"AssertionError: To use priority scheduling, schedule_policy must be 'fcfs' or 'lof'. "
                f"'{policy}' is not supported.")
    if args.get("retraction_policy") == "priority" and not priority:
        return "ValueError: --retraction-policy priority requires --enable-priority-scheduling"
    if number("schedule_conservativeness", 1.0) < 0:
        return "AssertionError: schedule_conservativeness must be non-negative"
    return None
