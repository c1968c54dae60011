"""A stand-in SGLang server (:mod:`support.standin_server`, honest otherwise) whose ``/server_info``
changes once it has answered ``/generate`` requests: another process answering on the port mid-suite
(a supervisor's restart with other arguments, a driver update and relaunch at night), which ``tuner
bench`` and a study read ``/server_info`` of only at the start.

``CHANGE_AFTER`` (environment, default 1): the number of ``/generate`` answers after which
``/server_info`` says ``CHANGE`` (default: none, an honest server) instead: ``model`` (another ``model_path``), ``spec`` (other
speculative flags: ``speculative_num_steps`` one more), ``scale`` (twice its ``sim_speedup``),
``autoregressive`` (``speculative_algorithm`` null) or ``live`` (only what SGLang changes while it
runs: ``internal_states``' throughput and the simulator's ``sim_timekeeping``, which must not count).

``STANDIN_MODES`` (as :mod:`support.standin_server` reads it, ``KEY=MODE,...``) picks launches that
run another SGLang release all along: mode ``release`` says ``version`` ``0.5.24+sim``, not
``0.5.23+sim`` (an upgrade landed between the baseline's launch and this one's).

Run: ``python changing_server.py --host 127.0.0.1 --port 0 [the simulator's flags]``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from standin_server import StandIn, mode_for, parse  # noqa: E402
from standin_server import serve as standin_serve  # noqa: E402


class Changing(StandIn):
    def server_info(self) -> dict:
        info = super().server_info()
        if self.mode == "release":
            info["version"] = "0.5.24+sim"
        info["internal_states"] = [{"last_gen_throughput": float(self.generated),
                                    **{k: info[k] for k in info if k.startswith("speculative_")}}]
        if self.generated < int(os.environ.get("CHANGE_AFTER", "1")):
            return info
        change = os.environ.get("CHANGE", "")
        state = info["internal_states"][0]
        if change == "model":
            info["model_path"] = info["served_model_name"] = "other/model"
        elif change == "spec" and info["speculative_num_steps"] is not None:  # a trial's server only
            info["speculative_num_steps"] = state["speculative_num_steps"] = info["speculative_num_steps"] + 1
        elif change == "scale":
            info["sim_speedup"] = 2 * info["sim_speedup"]
        elif change == "autoregressive":
            for k in [k for k in info if k.startswith("speculative_")]:
                info[k] = state[k] = None
        elif change == "live":
            info["sim_timekeeping"] = {"deliveries": self.generated, "max_lag_wall_ms": 1.0}
        return info


async def serve(args) -> None:
    await standin_serve(args, mode_for(args, os.environ.get("STANDIN_MODES", "")), Changing, "changing server")


if __name__ == "__main__":
    asyncio.run(serve(parse(sys.argv[1:])))
