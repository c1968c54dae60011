"""A Ctrl-C that lands while garbage collection runs a ``__del__`` or a weakref callback
(tuner.server.signals, ``_SignalState.unraisable``): Python cannot raise the handler's
KeyboardInterrupt from there, prints "Exception ignored in ..." and drops it. QA: a full test run
saw `tuner study run` go on after its first Ctrl-C (the notice printed, nothing stopped), and the
second one killed the server under a trial then failed as crashed; the run never exited. The
interrupt is now raised once more, outside the callback."""

import os
import signal
import sys
import time

import pytest

from tuner.server.signals import stop_on_signals


class _SignalledWhenCollected:
    """Sends this process ``signum`` from its ``__del__`` and lets the handler run there."""

    def __init__(self, signum: int):
        self.signum = signum

    def __del__(self):
        os.kill(os.getpid(), self.signum)
        for _ in range(1000):  # the handler runs at one of these calls, inside __del__
            time.sleep(0)


def _wait_for_the_interrupt():
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        time.sleep(0.001)


@pytest.mark.parametrize("signum, raised", [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, SystemExit)])
def test_an_interrupt_swallowed_in_a_finalizer_is_raised_again(signum, raised):
    heard = []
    hook = sys.unraisablehook
    with pytest.raises(raised) as caught:
        with stop_on_signals(on_signal=lambda kind, info: heard.append(kind)):
            _SignalledWhenCollected(signum)  # collected at once: its __del__ runs here
            _wait_for_the_interrupt()
    assert heard == ["stopping"]  # one signal: said once, raised (again) once
    if raised is SystemExit:
        assert caught.value.code == 128 + signum
    assert sys.unraisablehook is hook  # the hook before the block is back


def test_an_interrupt_swallowed_as_the_block_ends_is_raised_by_its_exit():
    with pytest.raises(KeyboardInterrupt):
        with stop_on_signals():
            _SignalledWhenCollected(signal.SIGINT)  # the block ends at once, before the re-raise
    time.sleep(0.05)  # the timer, if it had not fired, finds the block gone and does nothing


def test_other_unraisable_exceptions_still_reach_the_hook_before(monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(type(u.exc_value)))

    class Broken:
        def __del__(self):
            raise ValueError("not ours")

    with stop_on_signals():
        Broken()
    assert seen == [ValueError]


def test_the_raise_again_wakes_a_main_thread_waiting_in_a_system_call(monkeypatch):
    """The suite's asyncio loop waits in ``epoll_wait``. QA: the interrupt raised again waited for
    the wait to end, and the next Ctrl-C was taken for it (the server then had its whole grace)."""
    import select
    import threading

    from tuner.server import signals

    monkeypatch.setattr(signals, "REDELIVER_AFTER_S", 0.3)  # the main thread is in select() by then
    r, w = os.pipe()
    woken = threading.Event()

    def watchdog():  # ends the wait if nothing else does: the test then fails, not hangs
        if not stopped.wait(30):
            woken.set()
            os.write(w, b"x")

    stopped = threading.Event()
    threading.Thread(target=watchdog, daemon=True).start()
    try:
        with pytest.raises(KeyboardInterrupt):
            with stop_on_signals():
                _SignalledWhenCollected(signal.SIGINT)
                select.select([r], [], [])
        assert not woken.is_set(), "the interrupt came only when the watchdog ended the wait"
    finally:
        stopped.set()
        os.close(r)
        os.close(w)


class _Server:
    """What the handler needs of a server; :meth:`kill` is remembered."""

    pid, stop_grace_s, url, proc, returncode, _stopped = 4242, 120.0, "http://127.0.0.1:1", object(), None, False

    def __init__(self):
        self.killed = 0

    def stop(self):
        self._stopped = True

    def kill(self):
        self.killed += 1


def test_a_signal_from_outside_before_the_raise_again_is_the_second_one(monkeypatch):
    from tuner.server import signals

    monkeypatch.setattr(signals, "REDELIVER_AFTER_S", 30)  # the person's signal comes first
    heard, server = [], _Server()
    with pytest.raises(KeyboardInterrupt):
        with stop_on_signals(server, on_signal=lambda kind, info: heard.append(kind)):
            _SignalledWhenCollected(signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)  # "Ctrl-C again"
            _wait_for_the_interrupt()
    assert heard == ["stopping", "killing"] and server.killed == 1
    signals._SIGNALS.timer.join(5)  # cancelled: it does not send the first one a third time
    assert not signals._SIGNALS.timer.is_alive()
