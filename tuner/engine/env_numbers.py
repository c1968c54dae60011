"""Numbers the tuner reads from its environment (``TUNER_*``: tests shorten the heartbeat and the
patience; a node with a small scratch disk lowers the free space a run wants). An unset or blank
variable is its default; any other value is a number in its range, or a :class:`ConfigError` that
names the variable and its default."""

from __future__ import annotations

import math
import os
from typing import Callable

from ..config.yamlfile import ConfigError

#: The least free space (GiB) on the workdir's disk by default (``tuner doctor``'s ``workdir`` check,
#: which ``tuner study run`` runs first): server logs need room.
MIN_FREE_DISK_GIB = 1.0


def number_from_env(var: str, default, parse: Callable, valid: Callable, wanted: str):
    """``$var`` read with ``parse`` (``int``, ``float``), else ``default``; a value ``parse`` cannot
    read or ``valid`` refuses raises :class:`ConfigError` saying it is not ``wanted``."""
    raw = os.environ.get(var, "").strip()
    if not raw:
        return default
    try:
        value = parse(raw)
    except ValueError:
        value = None
    if value is None or not valid(value):
        raise ConfigError("environment", var, f"{raw!r} is not {wanted}; unset it for the default ({default:g})")
    return value


def seconds_from_env(var: str, default: int) -> int:
    """A whole number of seconds > 0 from ``$var``, else ``default``."""
    return number_from_env(var, default, int, lambda v: v > 0, "a whole number of seconds > 0")


def min_free_gib() -> float:
    """The least free space (GiB) the workdir check wants: ``TUNER_MIN_FREE_GIB`` (a number >= 0;
    0: no minimum), else :data:`MIN_FREE_DISK_GIB`."""
    return number_from_env("TUNER_MIN_FREE_GIB", MIN_FREE_DISK_GIB, float,
                           lambda v: math.isfinite(v) and v >= 0, "a number of GiB >= 0")
