"""The simulator's argument parser: SGLang's argparse behaviour for SGLang's flags, one line for a
bad value of the simulator's own (``--sim-*``), and the bounded number types those flags take.
:func:`tuner.sim.args.build_parser` builds on it."""

from __future__ import annotations

import argparse
import json
import math
import re

from ..sglang.arg_types import (human_readable_int, json_list_type, parse_cuda_graph_backend_arg,
                                parse_cuda_graph_config_arg)

#: The profile the simulator plays without ``--sim-profile``.
DEFAULT_PROFILE = "k2.6-tp8-pcie"
#: The fix said with a bad value for each simulator flag (:class:`SimArgumentParser`).
SIM_FLAG_FIX = {
    "--sim-profile": f"give a shipped profile name (e.g. {DEFAULT_PROFILE}) or a profile YAML file",
    "--sim-speedup": "give a finite number above 0, e.g. 20 (the wall clock runs 20x faster than model time)",
    "--sim-load-seconds": "give finite wall seconds, 0 or more, e.g. 0.5",
    "--sim-noise": "give a finite relative jitter, 0 or more, e.g. 0.02 (without it: 0, no jitter)",
    "--sim-seed": "give an integer, e.g. 0",
    "--sim-crash-after-requests": "give a whole number of requests, 1 or more",
    "--sim-hang-on-start": "it is a switch: give it bare, without a value",
    "--sim-fail-startup": "give the message to print as the start-up failure",
}


class SimArgumentParser(argparse.ArgumentParser):
    """SGLang's parser for SGLang's flags: a bad value prints argparse's usage block and message and
    exits 2, as ``sglang.launch_server`` does. A simulator flag (``--sim-*``, the tuner's own) is
    one line naming it and the fix (:data:`SIM_FLAG_FIX`), exit 2: its usage block is the whole
    of SGLang's (hundreds of lines), which buries the line that matters."""

    def error(self, message: str):
        m = re.fullmatch(r"argument (--sim-[\w-]+): (.*)", message, re.S)
        if m and m.group(1) in SIM_FLAG_FIX:
            self.exit(2, f"error: {m.group(1)}: {m.group(2)}; {SIM_FLAG_FIX[m.group(1)]}\n")
        m = re.fullmatch(r"ambiguous option: (--sim-[^ =]*)(?:=\S*)? could match (.*)", message, re.S)
        if m:
            self.exit(2, f"error: {m.group(1)}: ambiguous, could match {m.group(2)}; write the flag out\n")
        super().error(message)


def bounded_number(kind: type, minimum: float, inclusive: bool = True):
    """An argparse ``type`` for an int or float bounded below (argparse turns errors into exit 2)."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {kind.__name__} value: {text!r}") from None
        if not math.isfinite(value):  # nan passes every bound; an inf speedup or load never ends
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
        if value < minimum or (value == minimum and not inclusive):
            raise argparse.ArgumentTypeError(f"must be {'>=' if inclusive else '>'} {minimum:g}, got {text}")
        return value

    return parse


#: The argparse ``type`` of each kind of SGLang's table (:mod:`tuner.sglang.server_args`) that is
#: not text or a float: ``json`` is SGLang's own ``json.loads``, so argparse says "invalid loads value";
#: the CUDA-graph ones SGLang's own (:mod:`tuner.sglang.arg_types`), which say what is wrong.
PARSED_TYPES = {"int": int, "human_int": human_readable_int, "json": json.loads, "json_list": json_list_type,
                "cuda_graph_config": parse_cuda_graph_config_arg,
                "cuda_graph_backend": parse_cuda_graph_backend_arg}
#: Kinds whose argparse ``type`` returns the text, so argparse checks the option's choices on it.
TEXT_TYPES = ("str", "cuda_graph_backend")
