"""A study's ``max_running_requests`` against the concurrencies its objectives name.

SGLang 0.5.23 runs at most ``--max-running-requests N`` requests at once: each attention-DP worker sizes
its request pool for ``max(1, N // attn_dp_size)`` (``mem_cache/kv_cache_configurator.py`` line 3128,
``resolve_max_num_reqs``), each DP replica (``dp_size``) takes N whole, and the requests above the cap
wait in the scheduler's queue. A study whose objective is ``speedup@32`` on a server capped at 16 would
store, as its concurrency-32 figure, what 16 requests at a time give, for every trial and the baseline
alike: the throughput objective would name a concurrency the server never ran. :func:`running_cap_problem`
says so when the study file loads, before anything is written. (A sweep level above the cap that no
objective names is warned of at each launch: :func:`tuner.server.command.pin_server_args`.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..sglang.arg_types import argparse_int

#: SGLang's source of the cap, as the refusal names it
CAP_SOURCE = "mem_cache/kv_cache_configurator.py, resolve_max_num_reqs"


def requests_at_once(max_running_requests: int, attn_dp_size: int, dp_size: int) -> int:
    """The most requests a server given ``--max-running-requests`` runs at once over ``dp_size``
    replicas of ``attn_dp_size`` attention-DP workers each (see the module docstring)."""
    from ..sglang.parallel import running_requests_cap

    return max(1, dp_size) * running_requests_cap(max_running_requests, attn_dp_size)


def least_max_running_requests(concurrency: int, attn_dp_size: int, dp_size: int) -> int:
    """The smallest ``--max-running-requests`` that runs ``concurrency`` requests at once."""
    workers = max(1, attn_dp_size) * max(1, dp_size)
    return -(-concurrency // workers) * max(1, attn_dp_size)


def running_cap_problem(args: Mapping[str, Any], tp_size: int,
                        objectives: list[tuple[str, int]]) -> str | None:
    """Why the server arguments ``args`` (underscore names: the space's ``fixed``, the study's
    ``server.args`` and what ``server.extra_args`` sets, as a launch's command line has them) run fewer
    requests at once than an objective's concurrency (``objectives``: ``(name, concurrency)`` pairs):
    the reason and the fix; None when ``max_running_requests`` is unset (the launcher pins it), is no
    number (its own check says so), or is large enough."""
    from ..sglang.parallel import data_parallel_layout

    value = argparse_int(args.get("max_running_requests"))
    if value is None:
        return None
    try:
        layout = data_parallel_layout(dict(args), tp_size)
    except (TypeError, ValueError):  # a layout that is no numbers: its own check says so
        return None
    if layout.error is not None:  # a layout SGLang refuses: the study's DP check says so
        return None
    cap = requests_at_once(value, layout.attn_dp_size, layout.dp_size)
    above = [(name, c) for name, c in objectives if c > cap]
    if not above:
        return None
    name, c = max(above, key=lambda item: item[1])
    need = max(least_max_running_requests(c2, layout.attn_dp_size, layout.dp_size) for _, c2 in above)
    workers = ""
    if layout.attn_dp_size > 1:
        workers = f" ({max(1, value // layout.attn_dp_size)} on each of {layout.attn_dp_size} attention-DP workers)"
    elif layout.dp_size > 1:
        workers = f" ({value} on each of {layout.dp_size} DP replicas)"
    return (f"max_running_requests {args['max_running_requests']}: SGLang 0.5.23 runs at most {cap} requests "
            f"at once{workers} and queues the rest ({CAP_SOURCE}), so the objective {name} would store what "
            f"{cap} running requests give as its concurrency-{c} figure; raise it to {need} or more, leave "
            f"it out (the tuner then sets it to the study's largest concurrency), or choose objectives at a "
            f"concurrency of {cap} or less")
