"""The number types of every numeric flag: one spelling of a number, ASCII, and its bounds.

Python's ``int()`` and ``float()``, which click's INT and FLOAT call, also take other scripts' digits
(``'１６'``, ``'١٦'``), ``_`` between digits (``'1_6'``) and spaces around: each would be read as a
number its writer did not see typed (QA: ``--concurrency １６`` ran at 16). Every numeric flag takes
ASCII digits only, as ``--pick TRIAL`` does (:func:`tuner.results.pareto.trial_number`) and as a study
file's objectives do (``speedup@３２`` is refused); the error gives the number in ASCII to paste.
"""

from __future__ import annotations

import math
import re

import click

#: An integer as a flag takes it: an optional minus, then ASCII digits.
_INT = re.compile(r"-?[0-9]+")
#: A decimal number: an optional minus, ASCII digits with at most one point, an optional exponent.
_FLOAT = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def ascii_problem(text: str, kind: str) -> str | None:
    """Why ``text`` is not an ``kind`` ("integer" or "number") in ASCII digits, with the fix, or None.
    Text that Python reads in no spelling is left to the caller's own message."""
    pattern = _INT if kind == "integer" else _FLOAT
    if pattern.fullmatch(text):
        return None
    try:
        value = int(text) if kind == "integer" else float(text)
    except ValueError:
        return None  # not a number at all: click's (or the caller's) own words
    return f"{text!r}: write the {kind} in ASCII digits, as {value!r}"


class AsciiInt(click.IntRange):
    """An integer flag in ASCII digits, within ``min``..``max`` (either may be None)."""

    name = "integer"

    def convert(self, value, param, ctx):
        if isinstance(value, str):
            problem = ascii_problem(value, "integer")
            if problem:
                self.fail(problem, param, ctx)
        return super().convert(value, param, ctx)


class FiniteFloat(click.FloatRange):
    """A float flag in ASCII digits that refuses NaN and infinity (click's FloatRange lets NaN through
    every bound: ``--min-speedup-c32 nan`` would filter out every trial, silently)."""

    name = "finite number"

    def convert(self, value, param, ctx):
        if isinstance(value, str):
            problem = ascii_problem(value, "number")
            if problem and value.strip().lower().lstrip("+-") not in ("nan", "inf", "infinity"):
                self.fail(problem, param, ctx)
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def spec_flag(param: str) -> AsciiInt:
    """The type of ``--num-steps``, ``--topk`` or ``--draft-tokens`` (SGLang's ``param``): an ASCII
    integer of at most the largest value a search space may give (:data:`tuner.config.space.
    PARAM_MAXIMUM`; SGLang 0.5.23 states no maximum, ``arg_groups/fields/spec.py``, but its own grid
    stops far below). No minimum: ``tuner space check`` says what SGLang does with 0 or a negative
    value (it fails, and the line says how), and ``tuner launch`` refuses it by the same rules
    (QA: ``--num-steps 99999999999999999999`` was "valid")."""
    from ..config.space import PARAM_MAXIMUM

    return AsciiInt(max=PARAM_MAXIMUM[param])


#: The three speculative flags as ``tuner space check`` and ``tuner launch`` take them: the tuner's
#: short name, SGLang's own spelling (``server_args.py``'s ``--speculative-*``), and the argument.
SPECULATIVE_FLAGS = (
    ("--num-steps", "speculative_num_steps", "num_steps"),
    ("--topk", "speculative_eagle_topk", "topk"),
    ("--draft-tokens", "speculative_num_draft_tokens", "draft_tokens"),
)


def speculative_options(command):
    """Give ``command`` the three speculative flags, each under the tuner's short name and SGLang's
    own (``--num-steps`` or ``--speculative-num-steps``): a flag copied from a server's launch line
    works as it is (QA: ``tuner space check eagle3 --speculative-num-steps 3 ...`` was "No such
    option"). None when not given: SGLang then chooses all three."""
    for short, param, dest in reversed(SPECULATIVE_FLAGS):
        sglang = "--" + param.replace("_", "-")
        command = click.option(short, sglang, dest, type=spec_flag(param), default=None,
                               help=f"SGLang's {sglang}.")(command)
    return command
