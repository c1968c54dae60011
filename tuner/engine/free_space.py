"""How much free space the workdir's disk must have before a run (``tuner doctor``'s ``workdir`` check,
which ``tuner study run`` runs first): :data:`MIN_FREE_DISK_GIB`, or ``TUNER_MIN_FREE_GIB``."""

from __future__ import annotations

import math
import os

from ..config.yamlfile import ConfigError

#: The least free space (GiB) on the workdir's disk by default: server logs need room.
MIN_FREE_DISK_GIB = 1.0


def min_free_gib() -> float:
    """The least free space (GiB) the workdir check wants: ``TUNER_MIN_FREE_GIB`` (a node whose
    scratch disk is small, a test that fills a small disk on purpose; 0: no minimum), else
    :data:`MIN_FREE_DISK_GIB`. Raises :class:`ConfigError` naming the variable for a value that is
    no number of GiB >= 0."""
    raw = os.environ.get("TUNER_MIN_FREE_GIB", "").strip()
    if not raw:
        return MIN_FREE_DISK_GIB
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0:
        raise ConfigError("environment", "TUNER_MIN_FREE_GIB", f"{raw!r} is not a number of GiB >= 0; unset it "
                          f"for the default ({MIN_FREE_DISK_GIB:g})")
    return value
