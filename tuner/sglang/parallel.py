"""SGLang 0.5.23's data-parallel layout, as its argument handling resolves and checks it.

``arg_groups/parallel_hook.py``: ``handle_deprecated_dp_attention`` first (``--enable-dp-attention
--dp-size N`` is ``--attn-dp-size N``, unless that is given), then ``handle_data_parallelism``:
an attention-DP width of at least 1, no DP replicas beside attention DP, and a width that divides
``--tp-size`` (a bare ``assert``: the server exits with an ``AssertionError`` and no message). The
simulator raises these (:mod:`tuner.sim.args`); a study refuses them when its file loads
(:class:`tuner.config.study.ServerSettings`), since every launch, the baseline's too, would fail.
"""

from __future__ import annotations

from dataclasses import dataclass

from .launch_checks import padding_refusal, scheduling_refusal, served_name_refusal


@dataclass(frozen=True)
class DataParallelLayout:
    """The layout SGLang runs: ``attn_dp_size``, ``dp_size``, and ``error``, the exception SGLang
    raises for it (``"ValueError: ..."``, ``"AssertionError: "``), or None when it starts."""

    attn_dp_size: int
    dp_size: int
    error: str | None = None

    def reported(self, args: dict | None = None) -> dict:
        """The fields ``/server_info`` reports (``enable_dp_attention`` true while attention DP runs:
        ``ServerArgs.resolved_dict``). With attention DP and the server arguments ``args`` (underscore
        names) also what ``handle_data_parallelism`` rewrites (``arg_groups/parallel_hook.py`` lines
        313-334): ``schedule_conservativeness`` times 0.3 and ``chunked_prefill_size`` per DP rank,
        ``// attn_dp_size`` (when given; unset, SGLang sizes it from GPU memory first). QA: with
        ``--attn-dp-size 2 --chunked-prefill-size 8192`` SGLang 0.5.23 reports 4096 and 0.3, the
        simulator reported 8192 and 1.0."""
        out = {"attn_dp_size": self.attn_dp_size, "dp_size": self.dp_size,
               "enable_dp_attention": self.attn_dp_size > 1}
        if self.attn_dp_size > 1 and self.error is None and args is not None:
            conservativeness = args.get("schedule_conservativeness")
            out["schedule_conservativeness"] = (1.0 if conservativeness is None else float(conservativeness)) * 0.3
            if args.get("chunked_prefill_size") is not None:
                out["chunked_prefill_size"] = int(args["chunked_prefill_size"]) // self.attn_dp_size
        return out


def data_parallel_layout(args: dict, tp_size: int) -> DataParallelLayout:
    """The layout of server arguments ``args`` (underscore names; unset: SGLang's defaults, 1 and
    1) on a tensor-parallel group of ``tp_size``; see the module docstring."""
    attn_dp, dp = (int(1 if args.get(k) is None else args[k]) for k in ("attn_dp_size", "dp_size"))
    if args.get("enable_dp_attention") and attn_dp == 1:
        attn_dp, dp = dp, 1
    error = None
    if attn_dp < 1:
        error = f"ValueError: --attn-dp-size must be positive (got {attn_dp})."
    elif attn_dp > 1 and dp > 1:
        error = (f"ValueError: --dp-size {dp} with --attn-dp-size {attn_dp}: data-parallel replicas combined "
                 "with attention data parallelism are not supported.")
    elif attn_dp > 1 and tp_size % attn_dp != 0:
        error = "AssertionError: "
    return DataParallelLayout(attn_dp, dp, error)


def lm_head_layout(args: dict, layout: DataParallelLayout, tp_size: int) -> tuple[dict, str | None]:
    """The LM-head flags SGLang 0.5.23 resolves once the DP layout stands (``handle_data_parallelism``
    runs these after its checks above; ``arg_groups/overrides.py``): ``(reported, error)``, the values
    ``/server_info`` reports and the exception it raises (``"AssertionError: ..."``) or None.

    ``_data_parallelism_defaults`` (line 1367): one DP rank in all (``dp_size * attn_dp_size`` 1) turns
    ``enable_dp_lm_head`` off; ``_tp_lm_head_all_to_all_default`` (line 1400): unset, the TP LM-head
    all-to-all is on for a pure attention-DP decode node only; ``_dp_lm_head_validation`` (line 1422):
    either flag needs attention DP, the all-to-all not with ``enable_dp_lm_head`` and ``tp_size ==
    attn_dp_size``, ``attn_cp_size`` 1. QA: ``--dp-size 2 --enable-dp-lm-head`` (DP replicas, no
    attention DP) started the simulator; SGLang: "--enable-dp-lm-head requires attention DP
    (--attn-dp-size)." (An elastic-EP scale joiner's own exceptions are not mirrored.)"""
    attn_dp, dp = layout.attn_dp_size, layout.dp_size
    attn_cp = int(args.get("attn_cp_size") or 1)
    dp_lm_head = bool(args.get("enable_dp_lm_head")) and dp * attn_dp != 1
    all_to_all = args.get("enable_tp_lm_head_all_to_all")
    if all_to_all is None:
        all_to_all = (args.get("disaggregation_mode") == "decode" and attn_dp > 1 and tp_size == attn_dp
                      and attn_cp == 1 and not dp_lm_head)
    reported = {"enable_dp_lm_head": dp_lm_head, "enable_tp_lm_head_all_to_all": bool(all_to_all)}
    error = None
    if dp_lm_head and attn_dp <= 1:
        error = "AssertionError: --enable-dp-lm-head requires attention DP (--attn-dp-size)."
    elif all_to_all and attn_dp <= 1:
        error = "AssertionError: --enable-tp-lm-head-all-to-all requires attention DP (--attn-dp-size)."
    elif all_to_all and dp_lm_head:
        error = ("AssertionError: --enable-tp-lm-head-all-to-all uses a TP-sharded LM head and is "
                 "incompatible with --enable-dp-lm-head.")
    elif all_to_all and tp_size != attn_dp:
        error = ("AssertionError: --enable-tp-lm-head-all-to-all currently requires tp_size == attn_dp_size, "
                 f"got tp_size={tp_size}, attn_dp_size={attn_dp}.")
    elif all_to_all and attn_cp != 1:
        error = f"AssertionError: --enable-tp-lm-head-all-to-all currently requires attn_cp_size == 1, got {attn_cp}."
    return reported, error


def running_requests_cap(max_running_requests: int, attn_dp_size: int) -> int:
    """How many requests a server given ``--max-running-requests N`` runs at once over its
    ``attn_dp_size`` attention-DP workers: each sizes its pool for ``max(1, N // attn_dp_size)``
    (``mem_cache/kv_cache_configurator.py`` line 3128, ``resolve_max_num_reqs``), so 0 or a negative
    number is one request at a time per worker, not "no limit", and N = 12 on 8 workers runs 8.
    SGLang reports N as given. (DP replicas, ``dp_size``, each take N whole.)"""
    return attn_dp_size * max(1, int(max_running_requests) // attn_dp_size)


def launch_check_refusal(args: dict, tp_size: int, speculative_algorithm: str | None) -> str | None:
    """What SGLang 0.5.23's launch checks refuse in the resolved server arguments ``args`` (underscore
    names; ``page_size`` and ``chunked_prefill_size`` as resolved, None: not known) on ``tp_size`` GPUs:
    ``"AssertionError: its message"``, or None. ``ServerArgs.check_server_args``
    (``arg_groups/validation_hook.py`` lines 172-245), which its Engine runs after ``resolve_once`` and
    before anything loads (``entrypoints/engine.py`` line 1165), in its order: ``(tp_size * pp_size) %
    nnodes``; pipeline parallelism with speculative decoding (``check_pipeline_parallel_compat``: EAGLE
    only, and then on a disaggregated prefill node only; ``SGLANG_ENABLE_PP_SPEC`` is not mirrored); DP
    replicas across nodes; ``chunked_prefill_size`` a multiple of ``page_size`` unless chunked prefill is
    off (<= 0) or the node is a disaggregated decode node; and, at their places in that order, the checks
    of the other arguments (:mod:`tuner.sglang.launch_checks`). QA (qa194): SGLang refused ``--chunked-prefill-size
    1000`` on trtllm_mha's page of 64 and ``--nnodes 3`` at tp 1, the simulator started."""
    def num(name: str, default: int) -> int:
        value = args.get(name)
        return default if value is None else int(value)

    pp, nnodes, mode = num("pp_size", 1), num("nnodes", 1), args.get("disaggregation_mode") or "null"
    if (tp_size * pp) % nnodes != 0:
        return "AssertionError: tp_size must be divisible by number of nodes"
    # then, in check_server_args' order, its checks of the other arguments (tuner.sglang.launch_checks)
    refused = padding_refusal(args)
    if refused is not None:
        return refused
    if pp > 1 and speculative_algorithm is not None:
        if speculative_algorithm.upper() not in ("EAGLE", "NEXTN") or args.get("enable_multi_layer_eagle"):
            return ("AssertionError: Pipeline parallelism currently only supports EAGLE (non-multi-layer) "
                    "speculative decoding")
        if mode != "prefill":
            return ("AssertionError: PP + speculative decoding (MTP) is only supported on prefill nodes "
                    "(disaggregation-mode=prefill)")
    if num("dp_size", 1) > 1 and nnodes != 1:
        return ("AssertionError: multi-node data-parallel replicas are not supported; use attention DP "
                "(--attn-dp-size) across nodes")
    refused = served_name_refusal(args)
    if refused is not None:
        return refused
    chunk, page = args.get("chunked_prefill_size"), args.get("page_size")
    if chunk is not None and page and int(chunk) > 0 and mode != "decode" and int(chunk) % int(page) != 0:
        return "AssertionError: chunked_prefill_size must be divisible by page_size"
    return scheduling_refusal(args)
