"""``tuner.engine.interrupted.release_interrupted`` frees what interrupted frames held without a word
from their finalizers: what a Ctrl-C or SIGHUP cut short mid-way (an event loop interrupted in its
``__init__``) may fail as it is freed, and Python's default hook printed "Exception ignored in: ...
Traceback ... AttributeError" on the way out of `study run` (QA: the SIGHUP test, once in five
suites). The hook and the warnings are the caller's again afterwards."""

from __future__ import annotations

import sys
import warnings

from tuner.engine.interrupted import release_interrupted


class HalfBuilt:
    """Stands for an object cut short in its ``__init__``: its finalizer fails."""

    def __del__(self):
        raise AttributeError("'HalfBuilt' object has no attribute '_signal_handlers'")


def _interrupted_holding_half_built():
    held = HalfBuilt()  # noqa: F841 - held by the frame the interrupt passes through
    raise KeyboardInterrupt


def test_the_finalizers_of_what_the_interrupt_cut_short_say_nothing(monkeypatch):
    said = []
    monkeypatch.setattr(sys, "unraisablehook", said.append)
    try:
        _interrupted_holding_half_built()
    except KeyboardInterrupt:
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            release_interrupted()
    assert said == [] and warned == []
    assert sys.unraisablehook == said.append  # the caller's hook is back
    broken = HalfBuilt()  # a finalizer failing after the release is reported as ever
    del broken
    assert len(said) == 1 and isinstance(said[0].exc_value, AttributeError)
