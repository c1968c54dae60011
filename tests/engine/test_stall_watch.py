""":class:`tuner.engine.stall.StallWatch` on a real ticking thread: a gap of a few seconds is a
stall only when the requests allow an answer read that late (``answers_waited_s``); a gap past
``STALLED_S`` always is. The gap is made by starving the ticking thread of the GIL."""

import sys
import time

import pytest

from tuner.engine import stall
from tuner.engine.stall import StallWatch, TunerStalled


def starve_ticks(seconds: float) -> None:
    """Keep the GIL in this thread for ``seconds``: the ticking thread cannot run meanwhile."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(seconds + 5)
    try:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            pass
    finally:
        sys.setswitchinterval(before)


def test_a_short_gap_is_a_stall_only_when_the_answers_could_have_waited_as_long():
    assert stall.SHOWN_S < 3.0 < stall.STALLED_S
    with StallWatch(tick_s=0.1) as watch:
        time.sleep(0.3)
        starve_ticks(3.0)
        time.sleep(0.3)  # the thread ticks again: the gap is recorded, not still open
        assert watch.longest_s >= stall.SHOWN_S, watch.longest_s
        watch.check(answers_waited_s=0.0)  # no request could have waited 2 s outside the server
        watch.check(answers_waited_s=stall.SHOWN_S / 2)
        with pytest.raises(TunerStalled):
            watch.check(answers_waited_s=stall.SHOWN_S)


def test_no_gap_is_no_stall_whatever_the_requests_allow():
    with StallWatch(tick_s=0.1) as watch:
        time.sleep(0.5)
        watch.check(answers_waited_s=60.0)


def test_the_gap_still_open_counts_before_the_thread_ticks_again():
    """After a pause the caller may run before the ticking thread does: the open gap counts."""
    with StallWatch(tick_s=0.1) as watch:
        time.sleep(0.3)
        before = sys.getswitchinterval()
        sys.setswitchinterval(10)
        try:
            end = time.monotonic() + 3.0
            while time.monotonic() < end:
                pass
            recorded = watch.longest_s  # the ticking thread has not run since the gap began
            with pytest.raises(TunerStalled):
                watch.check(answers_waited_s=stall.SHOWN_S)
        finally:
            sys.setswitchinterval(before)
        assert recorded < stall.SHOWN_S, recorded
