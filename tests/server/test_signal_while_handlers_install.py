"""A signal that lands while :func:`tuner.server.signals.stop_on_signals` installs its handlers (the
outermost block; `tuner study run` enters it as the command starts): the handler already installed
raises there, and the block must still put back every handler it changed. Installed before the
block's ``try``, a SIGINT there left the tuner's SIGINT handler installed for good after the block
had ended, its state at depth 0 (QA, qa185).

The signal is a real SIGINT to this process, sent the moment the block's SIGINT handler is
installed (``signal.signal`` wrapped), so the tuner's handler raises between two installs."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from tuner.server import signals as signals_module
from tuner.server.signals import raised_by_signal, stop_on_signals


def test_a_signal_between_two_installs_leaves_every_handler_as_it_was(monkeypatch):
    before = {sig: signal.getsignal(sig) for sig in signals_module.STOPPING}
    hook = sys.unraisablehook
    real = signal.signal
    sent = []

    def install(sig, handler):
        old = real(sig, handler)
        if sig == signal.SIGINT and handler == signals_module._SIGNALS.handler and not sent:
            sent.append(sig)
            os.kill(os.getpid(), signal.SIGINT)  # the handler just installed raises here
        return old

    monkeypatch.setattr(signal, "signal", install)
    try:
        with pytest.raises(KeyboardInterrupt) as stopped, stop_on_signals():
            pytest.fail("the block's body ran: the SIGINT did not land while it installed its handlers")
        monkeypatch.undo()
        assert sent == [signal.SIGINT] and raised_by_signal(stopped.value)
        after = {sig: signal.getsignal(sig) for sig in signals_module.STOPPING}
        assert after == before, after
        assert sys.unraisablehook is hook and signals_module._SIGNALS.depth == 0
    finally:
        for sig, old in before.items():  # never leave this process with the tuner's handlers
            real(sig, old if old is not None else signal.SIG_DFL)
        sys.unraisablehook = hook
