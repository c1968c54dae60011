"""``/server_info`` and ``/model_info`` bodies, shaped as SGLang 0.5.23's.

``/server_info`` (http_server.py ``server_info`` -> utils/common.py ``build_server_info``) is
``ServerArgs.resolved_dict()`` (every field, SGLang's names and order: :mod:`tuner.sglang.server_args`),
``launch_command``, the scheduler's init info (``status``, ``max_total_num_tokens``,
``max_req_input_len``, ``startup_time``), ``kv_events``, ``internal_states`` (one dict per DP rank:
the resolved args plus live state, scheduler_components/internal_state.py), ``version`` and
``frontend``. The simulator adds ``sim_profile``, ``sim_speedup`` (model seconds per wall second)
and ``sim_timekeeping`` (whether it kept up with model time: :mod:`tuner.sim.streaming`).

Resolved here, as SGLang resolves them from the model and the GPUs: ``context_length`` (the
profile's ``context_length_tokens``), ``mem_fraction_static`` and ``cuda_graph_max_bs_decode``
(the profile's defaults), ``max_running_requests`` (SGLang's rules, or from memory), the
speculative flags (SGLang's rewrites), ``tokenizer_path`` and ``served_model_name``. Fields SGLang
resolves from hardware the simulator does not model (attention and sampling backends, chunked
prefill size, ...) keep their defaults.
"""

from __future__ import annotations

import shlex
import sys

from .args import SGLANG_VERSION, LaunchPlan

SIM_VERSION = f"{SGLANG_VERSION}+sim"


def resolved_server_args(plan: LaunchPlan, model) -> dict:
    """The launch plan's server args with the profile-dependent values resolved."""
    rt = model.profile.runtime
    args = dict(plan.server_args)
    args["context_length"] = args.get("context_length") or rt.context_length_tokens
    args["mem_fraction_static"] = args.get("mem_fraction_static") or rt.default_mem_fraction_static
    args["cuda_graph_max_bs_decode"] = args.get("cuda_graph_max_bs_decode") or rt.default_cuda_graph_max_bs
    return args


def kv_capacity_tokens(model, args: dict) -> int:
    """KV-cache tokens left after the weights and workspace (SGLang's ``max_total_num_tokens``)."""
    p = model.profile
    budget = p.hardware.gpu_memory_gb * 1e9 * args["mem_fraction_static"]
    free = budget - p.model.total_weights_gb * 1e9 / p.hardware.tp_size - p.runtime.workspace_mb * 1e6
    return max(0, int(free / (p.model.kv_kb_per_token * 1e3)))


def server_info_body(service) -> dict:
    args = dict(service.resolved)
    engine, stats = service.engine, service.engine.stats
    state = dict(args)  # the resolved args: max_running_requests as given (or 48), as SGLang's
    # internal_state.py _add_topology: the scheduler's own cap, per DP worker (mem_cache/
    # kv_cache_configurator.py line 3128: max(1, N // attn_dp_size)); QA (qa226): the simulator reported the
    # whole server's cap under both keys (8 for --max-running-requests 12 on 8 attention-DP workers,
    # where SGLang reports 12 and 1)
    attn_dp = max(1, int(args.get("attn_dp_size") or 1))
    cap = service.max_running_requests
    state.update({
        "world_size": args.get("tp_size", 1),
        "startup_time": service.startup_time,
        "effective_max_running_requests_per_dp": cap // attn_dp if cap is not None else None,
        "last_gen_throughput": 0.0,
    })
    if service.plan.speculative:
        state["avg_spec_accept_length"] = stats.avg_spec_accept_length
    capacity = kv_capacity_tokens(service.model, args)
    return {
        **args,
        "launch_command": shlex.join(["python", "-m", "sglang.launch_server", *sys.argv[1:]]),
        "status": "ready" if service.ready else "starting",
        "max_total_num_tokens": capacity,
        # managers/tp_worker.py get_worker_info: max_req_len - 5 (tuner.sim.context)
        "max_req_input_len": service.limits.max_req_input_len,
        "startup_time": service.startup_time,
        "hicache_object_layout": None,
        "kv_events": None,
        "internal_states": [state],
        "version": SIM_VERSION,
        "frontend": "python",
        "sim_profile": service.profile_name,
        "sim_speedup": service.speedup,
        "sim_timekeeping": service.timekeeping.as_dict(),
        "sim_running_requests": len(engine.running),
    }


def model_info_body(service) -> dict:
    """http_server.py ``model_info``. ``tokenizer_path`` is what an independent client should load;
    the simulator has no tokenizer, and counts a text prompt's tokens from its characters
    (:meth:`tuner.sim.model.PerfModel.prompt_tokens`; ``tuner_sim`` says so, for clients that read it)."""
    args = service.resolved
    return {
        "model_path": args["model_path"], "served_model_name": service.model_name,
        "tokenizer_path": args["tokenizer_path"], "is_generation": True,
        "preferred_sampling_params": args.get("preferred_sampling_params"), "weight_version": "default",
        "load_format": args.get("load_format"), "reasoning_parser": args.get("reasoning_parser"),
        "tool_call_parser": args.get("tool_call_parser"),
        "disaggregation_mode": args.get("disaggregation_mode"),
        "has_image_understanding": False, "has_audio_understanding": False,
        "model_type": None, "architectures": None,
        "tuner_sim": {
            "tokenizer": "none: prompt tokens are counted as one a CJK character plus round(other "
                         f"characters / {service.model.profile.runtime.chars_per_token:g}); output token "
                         "ids are synthetic (ids 1000+), each one word with a leading space",
            "offline_clients": "point a client's tokenizer option at any local Hugging Face "
                               "tokenizer folder (--tokenizer PATH); token counts come from the "
                               "server's meta_info/usage, not from the client's tokenizer",
        },
    }
