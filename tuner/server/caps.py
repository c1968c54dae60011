"""What a study's own request cap and decode CUDA-graph sizes do to the benchmark levels above them.

The launcher pins ``--max-running-requests`` and ``--cuda-graph-max-bs-decode`` to the study's largest
concurrency unless the study sets them (:func:`tuner.server.command.pin_server_args`); a value of the
study's own below that level is warned about at each launch, with what it does and the value to set.
An objective at a concurrency the request cap never runs is refused when the study file loads instead
(:mod:`tuner.config.running_cap`).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..sglang.arg_types import argparse_int, decode_graph_max_bs
from ..sglang.parallel import running_requests_cap
from ..sglang.rules import flag_name


def _decode_graphs_off(given: Mapping[str, Any]) -> bool:
    """Whether the server arguments turn decode CUDA graphs off altogether (then no size is below anything)."""
    return bool(given.get("disable_cuda_graph") or given.get("disable_decode_cuda_graph")
                or given.get("cuda_graph_backend_decode") == "disabled")


def caps_below(given: Mapping[str, Any], attn_dp: int, max_concurrency: int) -> list[str]:
    """The warnings for the server arguments ``given`` (underscore names, what ``server.extra_args`` sets
    laid over them) on ``attn_dp`` attention-DP workers against the study's largest concurrency: each
    says what the levels above the value get and the fix. QA (qa226): "requests above it queue (or run
    without CUDA graphs)" named neither which nor what to set, and a decode size list went unwarned."""
    warnings = []
    value = argparse_int(given.get("max_running_requests"))
    if value is not None:
        # each attention-DP worker runs max(1, N // attn_dp_size) (mem_cache/kv_cache_configurator.py
        # line 3128, resolve_max_num_reqs); the rest wait in the scheduler's queue
        runs = running_requests_cap(value, attn_dp)
        if runs < max_concurrency:
            said = f"{value}" if runs == value else f"{value} (SGLang runs {runs} at once on {attn_dp} attention-DP workers)"
            need = -(-max_concurrency // attn_dp) * attn_dp
            warnings.append(f"{flag_name('max_running_requests')} {said} is below the largest benchmark concurrency "
                            f"{max_concurrency}: requests above it wait in SGLang's queue, so those levels measure "
                            f"{runs} running; raise it to {need} or leave it out (the tuner then sets it)")
    older = argparse_int(given.get("cuda_graph_max_bs"))  # an older SGLang's flag, given in server.extra_args
    if older is not None and older < max_concurrency:
        warnings.append(f"--cuda-graph-max-bs {older} is below the largest benchmark concurrency {max_concurrency}: "
                        f"decode batches above it run without CUDA graphs; raise it to {max_concurrency}")
    # the decode graphs SGLang 0.5.23 captures: --cuda-graph-max-bs-decode, and a decode size list
    # (cuda_graph_bs_decode, cuda_graph_config's bs) whose largest entry is the cap whatever max_bs says
    # (arg_types.decode_graph_max_bs: cuda_graph_hook.py parse_cuda_graph_config, memory_hook.py 201-207)
    graph = decode_graph_max_bs(dict(given))
    if graph is not None and graph < max_concurrency and not _decode_graphs_off(given):
        by_lists = given.get("cuda_graph_bs_decode") is not None or given.get("cuda_graph_config") is not None
        said = (f"the largest decode CUDA-graph batch, {graph} (SGLang captures up to the largest "
                "cuda_graph_bs_decode entry, else cuda_graph_config's decode max_bs),") if by_lists else \
            f"{flag_name('cuda_graph_max_bs_decode')} {graph}"
        fix = f"give sizes up to {max_concurrency}" if by_lists else f"raise it to {max_concurrency}"
        warnings.append(f"{said} is below the largest benchmark concurrency {max_concurrency}: decode batches "
                        f"above it run without CUDA graphs; {fix}")
    return warnings
