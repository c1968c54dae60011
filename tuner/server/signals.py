"""Ctrl-C, SIGTERM, SIGHUP and SIGUSR1/SIGUSR2 while servers run: stop them on the way out, kill them on
a second signal.

:func:`stop_on_signals` installs this process's handlers of those signals (:data:`STOPPING`) for the length of a block
(blocks nest: the CLI's around a run, the backend's around one server). The handler never stops a
server itself: it raises, so the interrupted code unwinds at once and the servers are stopped by
their owners' ``finally`` and by the block's exit, with the handler still installed, so that a
second signal during a long SIGTERM grace can SIGKILL their groups. :data:`live_servers` is the
registry of servers this process started and has not stopped (:class:`tuner.server.launcher.ServerProcess`
adds and removes itself), for a block that names no server.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Protocol


class ServerProcess(Protocol):
    """What a signal needs of a server (:class:`tuner.server.launcher.ServerProcess` has it; this
    module does not import the launcher, which imports it)."""

    pid: int | None
    stop_grace_s: float
    url: str
    proc: Any
    returncode: int | None
    _stopped: bool

    def stop(self) -> None: ...

    def kill(self) -> None: ...

log = logging.getLogger("tuner.server")

#: How long after a swallowed interrupt (:meth:`_SignalState.unraisable`) it is raised again: enough
#: for the hook to return; short beside a person's reaction to a Ctrl-C.
REDELIVER_AFTER_S = 0.01


class _LiveServers:
    """The servers started in this process and not yet stopped (thread-safe)."""

    def __init__(self):
        self._servers: set = set()
        self._lock = threading.Lock()

    def add(self, server) -> None:
        with self._lock:
            self._servers.add(server)

    def discard(self, server) -> None:
        with self._lock:
            self._servers.discard(server)

    def snapshot(self) -> list:
        with self._lock:
            return list(self._servers)


live_servers = _LiveServers()



#: ``on_signal(kind, info)``: ``kind`` is ``"stopping"`` (the first SIGINT/SIGTERM: the servers are
#: about to be stopped, gracefully) or ``"killing"`` (another signal while stopping: their process
#: groups get SIGKILL now); ``info`` has ``signal`` (its name) and ``servers``: ``[{"pid",
#: "grace_s", "url"}]``. Called from the signal handler: it must return at once and take no lock
#: the interrupted code may hold (hand the work to another thread).
OnSignal = Callable[[str, dict], None]


class _SignalState:
    """The handlers of this process while any :func:`stop_on_signals` block is active (nested
    blocks share them: the outermost installs, the inner ones add servers and callbacks)."""

    def __init__(self):
        self.depth = 0
        self.previous: dict[int, Any] = {}
        self.servers: list[tuple[ServerProcess, ...]] = []  #: per active block; () means every live server
        self.callbacks: list[OnSignal] = []
        self.received: int | None = None  #: the first signal, once one arrived
        self.holding = 0  #: depth of :func:`signals_held` blocks
        self.held: int | None = None  #: a signal held until the outermost hold ends
        #: the exception a handler raised last, and its signal (:meth:`unraisable` knows it by this)
        self.raised: tuple[BaseException, int] | None = None
        self.again: int | None = None  #: a signal whose exception Python swallowed: raised once more
        self.previous_hook: Callable | None = None  #: ``sys.unraisablehook`` before ours
        self.redelivering = False  #: :meth:`_redeliver` sent ``again``: the next handler call is ours
        self.timer: threading.Timer | None = None  #: :meth:`_redeliver`'s, while ``again`` waits
        #: guards ``again``/``redelivering`` between the handler and the timer; reentrant, as a handler
        #: may run inside another (a signal during the first's Python code)
        self.again_lock = threading.RLock()

    def targets(self) -> list[ServerProcess]:
        if any(not group for group in self.servers):
            return live_servers.snapshot()
        return list({srv for group in self.servers for srv in group if not srv._stopped})

    def notify(self, kind: str, signum: int, targets: list[ServerProcess]) -> None:
        info = {"signal": signal.Signals(signum).name,
                "servers": [{"pid": srv.pid, "grace_s": srv.stop_grace_s, "url": srv.url} for srv in targets]}
        for cb in list(self.callbacks):
            try:
                cb(kind, info)
            except Exception:  # noqa: BLE001 - a display problem must not stop the server's stop
                log.exception("signal callback failed")

    def handler(self, signum, frame):
        with self.again_lock:  # the timer's check-and-send (:meth:`_redeliver`) is not cut in two
            first, ours = self.again, self.redelivering
            self.again, self.redelivering = None, False
            if first is not None and self.timer is not None:
                self.timer.cancel()
        if first is not None:
            if not ours:
                # A person's signal came before our own (:meth:`unraisable`): it is the second one.
                # QA: it was taken for ours, raised the swallowed first, and the server was left to its
                # whole SIGTERM grace; "Ctrl-C again" did not kill it.
                self.kill_targets(signum)
            self.interrupt(first)
            return
        targets = self.live_targets()
        if self.received is None:
            # First signal: say so and unwind at once; the servers are stopped on the way out (by
            # their owners' `finally`, and by stop_on_signals' exit), not here in the handler, so
            # the process stays responsive to a second signal during a long SIGTERM grace.
            self.received = signum
            self.notify("stopping", signum, targets)
            self.interrupt(signum)
            return
        if not self.kill_targets(signum):
            # Nothing left to kill: this one interrupts whatever the cleanup is waiting for.
            self.interrupt(signum)

    def live_targets(self) -> list[ServerProcess]:
        return [srv for srv in self.targets() if srv.proc is not None and srv.returncode is None]

    def kill_targets(self, signum: int) -> bool:
        """Another signal while stopping: kill the groups now (the stop under way sees them gone).
        False when no server is left to kill."""
        targets = self.live_targets()
        if not targets:
            return False
        self.notify("killing", signum, targets)
        for srv in targets:
            srv.kill()
        return True

    def interrupt(self, signum: int) -> None:
        """Raise for ``signum`` now, or, inside :func:`signals_held`, when the hold ends (a second
        signal during the same hold raises at once: whoever insists is not kept waiting)."""
        if self.holding and self.held is None:
            self.held = signum
            return
        exc = _exception(signum)
        self.raised = (exc, signum)
        raise exc

    def unraisable(self, unraisable) -> None:
        """``sys.unraisablehook`` while the handlers are installed. A handler's exception raised
        while the interrupted code was inside a weakref callback or a ``__del__`` (garbage
        collection runs them anywhere) is one Python cannot pass on: it prints "Exception ignored
        in ..." and drops it. The run then went on as if no Ctrl-C had come, and the second Ctrl-C
        killed the server under a trial it failed as crashed (QA: seen in full test runs). Our own
        is raised once more instead, through the handler: the same signal sent to the main thread
        by a timer thread (:meth:`_redeliver`), a moment after this hook returns (from here, the
        main thread ran the handler inside the hook, where an exception is dropped too); the main
        thread runs it at its next instruction, outside the callback, or inside another one, which
        comes back here. A signal from outside that comes first is the second one: it kills the
        servers, as it would have, and raises the first. Anything else goes to the hook before ours."""
        if self.raised is not None and unraisable.exc_value is self.raised[0]:
            with self.again_lock:
                self.again, self.redelivering = self.raised[1], False
                self.raised = None
                self.timer = threading.Timer(REDELIVER_AFTER_S, self._redeliver)
                self.timer.daemon = True
                self.timer.start()
            return
        (self.previous_hook or sys.__unraisablehook__)(unraisable)

    def _redeliver(self) -> None:
        """The timer's half of :meth:`unraisable`: only while our handlers are installed (once the
        outermost block has ended, its exit raised the interrupt itself). A real signal to the main
        thread, not ``_thread.interrupt_main``: that one only sets a flag, which a main thread
        waiting in a system call (the suite's asyncio loop in ``epoll_wait``, a ``sleep``) reads
        when the wait ends. QA: until then the next Ctrl-C was taken for this one."""
        with self.again_lock:
            if self.again is None or self.depth == 0 or self.redelivering:
                return
            self.redelivering = True
            signal.pthread_kill(threading.main_thread().ident, self.again)


#: The signals :func:`stop_on_signals` stops the servers on. SIGUSR1 and SIGUSR2 are what a batch
#: scheduler sends ahead of a job's time limit (Slurm's ``--signal=USR1@120``; ``scancel --signal``),
#: for the job to wrap up before SIGTERM and, KillWait later, SIGKILL.
STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)


def _installable(sig: int) -> bool:
    """SIGINT and SIGTERM always; SIGHUP unless it is ignored (``nohup``: the caller asked the tuner to
    outlive its terminal); SIGUSR1 and SIGUSR2 only at their default action (ignored, or handled by
    whoever started the tuner in this process, they are left as they are). QA: SIGHUP kept its default
    action, which ended the tuner at once, silently, and left its server running; SIGUSR1 and SIGUSR2
    (Slurm's ``--signal=USR1@120``) did the same and left the trial under way RUNNING until the next
    run reaped it; run as PID 1 (a container) they were ignored instead."""
    if sig in (signal.SIGUSR1, signal.SIGUSR2):
        return signal.getsignal(sig) is signal.SIG_DFL
    return sig != signal.SIGHUP or signal.getsignal(sig) is not signal.SIG_IGN


def _exception(signum: int) -> BaseException:
    return KeyboardInterrupt() if signum == signal.SIGINT else SystemExit(128 + signum)


_SIGNALS = _SignalState()


@contextmanager
def stop_on_signals(*servers: ServerProcess, on_signal: OnSignal | None = None) -> Iterator[None]:
    """While active, SIGINT, SIGTERM, SIGHUP (unless ignored, as under ``nohup``), SIGUSR1 and SIGUSR2
    (at their default action: see :func:`_installable`) stop ``servers`` (default: every server this
    process started and has not stopped).

    The first signal calls ``on_signal("stopping", info)`` at once and raises ``KeyboardInterrupt``
    (SIGINT) or ``SystemExit(128 + signum)`` (SIGTERM: 143, SIGHUP: 129, SIGUSR1: 138, SIGUSR2: 140); leaving the block then stops the servers
    (SIGTERM to each group, ``stop_grace_s``, SIGKILL), with the handlers still in place. A second
    signal during that stop SIGKILLs the groups at once (``on_signal("killing", info)``); one more
    with nothing left to kill raises again. The previous handlers come back when the outermost block
    exits. Blocks nest (the CLI's around the run, the backend's around one server). Only the main
    thread can install handlers; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    state = _SIGNALS
    first = state.depth == 0
    if first:
        state.received = state.raised = state.again = None
        state.redelivering = False
        state.previous = {}
    state.depth += 1
    state.servers.append(tuple(servers))
    if on_signal is not None:
        state.callbacks.append(on_signal)
    try:
        if first:
            # Installed inside the ``try``, each handler recorded before it is: a signal landing
            # between two installs (our handler raises there) leaves through the ``finally``, which
            # puts back every handler changed. QA (qa185): installed before the ``try``, a SIGINT
            # there left the tuner's handler in place and the block's state at depth 0 for good.
            state.previous_hook, sys.unraisablehook = sys.unraisablehook, state.unraisable
            for sig in STOPPING:
                if _installable(sig):
                    state.previous[sig] = signal.getsignal(sig)
                    signal.signal(sig, state.handler)
        yield
    finally:
        try:
            if state.received is not None:
                for srv in (servers or state.targets()):
                    srv.stop()
        finally:
            state.servers.pop()
            if on_signal is not None:
                state.callbacks.remove(on_signal)
            state.depth -= 1
            if state.depth == 0:
                for sig, old in state.previous.items():
                    signal.signal(sig, old if old is not None else signal.SIG_DFL)
                state.previous = {}
                sys.unraisablehook, state.previous_hook = state.previous_hook, None
                with state.again_lock:
                    pending, state.again, state.redelivering = state.again, None, False
                    if state.timer is not None:
                        state.timer.cancel()
                if pending is not None:  # swallowed, and the block ended before it came again
                    raise _exception(pending)


def raised_by_signal(exc: BaseException) -> bool:
    """Whether ``exc`` is the exception the handler of :func:`stop_on_signals` raised last: a signal's
    ``KeyboardInterrupt`` or ``SystemExit``, not a ``sys.exit`` of the code it interrupted (one that
    already said how it stopped)."""
    return _SIGNALS.raised is not None and _SIGNALS.raised[0] is exc


@contextmanager
def signals_held() -> Iterator[None]:
    """A few storage writes that must not be cut in two (a trial asked for and named with its
    worker; a trial failed and its setting queued again): a SIGINT/SIGTERM that
    :func:`stop_on_signals` would raise inside the block is raised when the block ends instead. A
    second one during the same block raises at once (the block may be waiting out a storage outage,
    and the user insists). Outside :func:`stop_on_signals` (no handler of ours), or off the main
    thread, this does nothing."""
    state = _SIGNALS
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    state.holding += 1
    try:
        yield
    finally:
        state.holding -= 1
        held, state.held = (state.held, None) if state.holding == 0 else (None, state.held)
    if held is not None:
        raise _exception(held)
