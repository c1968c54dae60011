"""Ports: is one free, pick a free one, wait until one is released, and who listens on one.

A port counts as free when an HTTP server could bind it now (``SO_REUSEADDR``: a TIME_WAIT
leftover does not count as busy). Who listens is psutil's table of TCP sockets, which names the
process holding each (by its open files), so a stranger on "our" port is never mistaken for our
server.
"""

from __future__ import annotations

import errno
import random
import re
import shlex
import socket
import time

import psutil

from .procs import escapees, group_members


class PortInUseError(RuntimeError):
    """The configured port is taken by a process the tuner did not start: before the launch (nothing
    was launched), or while the server started (it could not bind; ``when`` says so). ``privileged``:
    no process holds it, the port is below ``ip_unprivileged_port_start`` and this user may not bind
    it (the bind's EACCES, :func:`port_taken`). QA (qa157): a non-root user's ``server.port: 80`` was
    said to be "in use by another process" with nothing listening there."""

    def __init__(self, host: str, port: int, when: str = "", *, privileged: bool = False):
        self.host, self.port = host, port
        if privileged and not when:
            super().__init__(f"port {port} on {host} is a privileged port (below {unprivileged_start()}, "
                             f"net.ipv4.ip_unprivileged_port_start), which this user may not bind; set "
                             f"server.port to a port from {unprivileged_start()} up, or 0")
            return
        when = f" ({when})" if when else ""
        super().__init__(f"port {port} on {host} is in use by another process{when}; "
                         f"set server.port to a free port or 0")


def unprivileged_start() -> int:
    """The first port any user may bind (``ip_unprivileged_port_start``; 1024 if unreadable)."""
    try:
        with open("/proc/sys/net/ipv4/ip_unprivileged_port_start", encoding="ascii") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return 1024


#: A server that could not bind its port: uvicorn's "[Errno 98] error while attempting to bind on
#: address ...: address already in use" (SGLang's http_server.py runs uvicorn), the simulator's own.
_ADDRESS_IN_USE = re.compile(r"address already in use", re.I)


def bind_refused(log_text: str, host: str, port: int) -> bool:
    """Whether a server that exited while starting could not bind ``port`` because another process
    holds it: its log says "address already in use" and the port is not free now (a log that says
    so of another port, NCCL's say, leaves ours free)."""
    return bool(_ADDRESS_IN_USE.search(log_text)) and not port_free(host, port)


class ServerPortClashError(PortInUseError):
    """A port SGLang takes for itself, not ``--port`` (its ``nccl_port``, the TCPStore of
    ``torch.distributed``; with DP attention the ports it derives from ``--port``), was held by
    another process at every launch: not the setting's failure."""

    def __init__(self, host: str, port: int | None, what: str, launches: int, log_path: str):
        self.host, self.port = host, port
        RuntimeError.__init__(self, (
            f"SGLang could not take a port of its own ({what}) at {launches} launches: address already in use "
            f"(log: {log_path}); free it, or leave SGLang's port flags (nccl_port, dist_init_addr) unset "
            f"and server.port 0"))


#: SGLang 0.5.23's failures over a port of its own that another process holds, each naming the port:
#: ``wait_port_available``'s ValueError ("nccl_port at 25731 is not available in 30 seconds",
#: ``srt/utils/network.py``, called by ``PortArgs.init_new`` in ``srt/server_args.py`` for the
#: DP-attention ports it derives from --port, and nccl_port); torch's TCPStore on nccl_port ("The server
#: socket has failed to listen on any local network address. port: 25731, ... name: EADDRINUSE"); a
#: ZMQ bind ("ZMQError: Address already in use (addr='tcp://127.0.0.1:51234')").
_OWN_PORT_CLASH = re.compile(
    r"\b(?P<name>\w*port\w*) at (?P<p1>\d+) is not available in \d+ seconds"
    r"|failed to listen on any local network address\.?(?:\s*port:\s*(?P<p2>\d+))?[^\n]*EADDRINUSE"
    r"|Address already in use \(addr='tcp://[^']*?:(?P<p3>\d+)'\)", re.I)


def own_port_clash(region: str) -> tuple[str, int | None] | None:
    """``(what, port)`` when ``region`` (where a server failed: the last traceback and final lines,
    :func:`tuner.server.failures.failure_region`) shows SGLang failing over a port of its own that
    another process holds; None otherwise. ``what`` names it as the log does (``nccl_port``,
    ``dist_init_port``, ``TCPStore``, ``ZMQ``); ``port`` is None when the log names none."""
    found = None
    for m in _OWN_PORT_CLASH.finditer(region):
        found = m
    if found is None:
        return None
    if found.group("p1"):
        return f"{found.group('name')} {found.group('p1')}", int(found.group("p1"))
    if found.group("p3"):
        return f"ZMQ port {found.group('p3')}", int(found.group("p3"))
    port = found.group("p2")
    return (f"TCPStore port {port}" if port else "a TCPStore port"), int(port) if port else None


def _bind_probe(host: str, port: int, reuse: bool = True) -> socket.socket:
    """Bind as an HTTP server would (SO_REUSEADDR: a TIME_WAIT leftover does not count as busy;
    ``reuse=False``: it does)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if reuse:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    return sock


def port_taken(host: str, port: int) -> PortInUseError | None:
    """Why a server could not bind ``host:port`` now, from one bind (:func:`_bind_probe`): the
    :class:`PortInUseError` to raise or say, ``privileged`` when the bind was refused for want of
    privilege (EACCES) rather than held by a process (EADDRINUSE); None when it could bind. Any other
    bind error is raised."""
    try:
        _bind_probe(host, port).close()
    except OSError as exc:
        if exc.errno in (errno.EADDRINUSE, errno.EACCES):
            return PortInUseError(host, port, privileged=exc.errno == errno.EACCES)
        raise
    return None


def port_free(host: str, port: int) -> bool:
    """Whether a server could bind ``host:port`` now (:func:`port_taken`)."""
    return port_taken(host, port) is None


#: Where :func:`pick_free_port` looks first: below the kernel's ephemeral range (32768 up by default)
#: and SGLang's default --port (30000), above Ray's worker ports (10002-19999 by default). It holds
#: SGLang 0.5.23's own window for its nccl_port (22000-29999, ``get_free_port_below_ephemeral``):
#: SGLang takes only a port that binds when it picks it, so a server listening is never in its way,
#: and two picks meet only if they fall on one port of 10,000 within the same seconds.
PICK_WINDOW = (20000, 29999)
PICK_ATTEMPTS = 64


def ephemeral_low() -> int:
    """The first port of the kernel's ephemeral range (``ip_local_port_range``; 32768 if unreadable)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def pick_free_port(host: str) -> int:
    """A port free on ``host`` now, for a server that binds it only later (port 0 in the study).

    Outside the kernel's ephemeral range, as SGLang picks its own late-bound nccl_port
    (``srt/server_args.py`` ``PortArgs.init_new``: "The scheduler child binds this later; keep it out
    of the ephemeral range"): SGLang binds ``--port`` only after loading the model, minutes later, and
    meanwhile an ephemeral port is handed to every ``connect()`` and ``bind(0)`` on the node, its own
    included (ZMQ's ``bind_to_random_port`` on 127.0.0.1 in ``shm_broadcast.py``, the TCPStore
    clients, NCCL), each a relaunch and a model load lost. A random port of :data:`PICK_WINDOW` that
    binds without ``SO_REUSEADDR`` (so not one in TIME_WAIT either); the OS's choice if none of
    :data:`PICK_ATTEMPTS` does, or the window is not below the ephemeral range."""
    low, high = PICK_WINDOW[0], min(PICK_WINDOW[1], ephemeral_low() - 1)
    if high - low + 1 >= PICK_ATTEMPTS:
        for port in random.sample(range(low, high + 1), PICK_ATTEMPTS):
            try:
                _bind_probe(host, port, reuse=False).close()
                return port
            except OSError:
                continue
    with _bind_probe(host, 0) as sock:
        return sock.getsockname()[1]


def reserve_port(host: str, port: int) -> socket.socket | None:
    """Hold ``host:port`` for a server that binds it later: a socket bound with ``SO_REUSEADDR`` and
    never listening, or None when it cannot be bound. The server's own bind still succeeds (uvicorn,
    which SGLang's HTTP server runs, and aiohttp bind with ``SO_REUSEADDR``; Linux lets a listener
    share a port with a bound socket that does not listen when both set it), while every bind
    without ``SO_REUSEADDR`` is refused and the kernel hands the port to no ``connect()`` or
    ``bind(0)``: another tuner's :func:`pick_free_port`, SGLang's own nccl_port pick
    (``get_free_port_below_ephemeral``, ``reuse_addr=False``), an outgoing connection. Not
    inheritable (Python's sockets are close-on-exec): the server never holds it."""
    try:
        return _bind_probe(host, port)
    except OSError:
        return None


def ensure_port_free(host: str, port: int) -> None:
    """Raise :class:`PortInUseError` when ``host:port`` is taken (:func:`port_taken`)."""
    taken = port_taken(host, port)
    if taken is not None:
        raise taken


def wait_port_free(host: str, port: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while True:
        if port_free(host, port):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


def _listeners(port: int) -> set[int | None]:
    """The pids holding a socket that listens on TCP ``port``, IPv4 or IPv6 (None for one whose
    holder cannot be seen: another user's process)."""
    try:
        conns = psutil.net_connections(kind="tcp")
    except (psutil.AccessDenied, OSError):
        return set()
    return {c.pid for c in conns if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port}


def _command_shown(argv: list[str]) -> str:
    """A process's command line as one line of a warning: shell-quoted (an argument with a space reads
    as one), a storage password in it hidden (:func:`tuner.server.gpu_lock._without_secret`, the rule a
    GPU lock's holder line follows), every character that breaks or drives the line escaped
    (:func:`tuner.config.names.shown`), cut to 160 characters. QA (qa152): a helper started as
    ``python -c "import socket\n..."`` broke the warning over lines, and an argument's
    ``postgresql://user:password@...`` was printed as it is."""
    from ..config.names import shown
    from .gpu_lock import _without_secret

    text = shown(shlex.join(_without_secret(a) for a in argv))
    return text if len(text) <= 160 else text[:157] + "..."


def port_holders(port: int) -> str:
    """Who listens on TCP ``port`` now, for a line to the user: ``pid N (its command line)`` for each
    process seen holding it (psutil names one per socket), ``another user's process`` for one that
    cannot be seen; "" when nobody listens (or the socket table is unreadable)."""
    said = []
    for pid in sorted(_listeners(port), key=lambda p: (p is None, p or 0)):
        if pid is None:
            said.append("another user's process")
            continue
        try:
            command = _command_shown(psutil.Process(pid).cmdline())
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            command = "?"
        said.append(f"pid {pid} ({command})")
    return ", ".join(said)


def listener_owned_by_group(port: int, pgid: int, *, root: int | None = None,
                            mark: str | None = None, born_from: int | None = None) -> bool | None:
    """Whether a process of group ``pgid`` holds the socket listening on ``port``, or one of the
    group's escapees (:func:`tuner.server.procs.escapees`: outside the group, carrying the launch's
    ``mark`` or descended from ``root``, the server the tuner started): a server whose HTTP process
    left the group (``os.setsid()``, a double fork) listens on its own port, it is no stranger. QA
    (qa110): such a server was taken for another process answering on its port, launched again
    three times and the run stopped with "port ... is in use by another process".

    ``born_from``: the server's start (:func:`tuner.server.procs.escapees`).

    None when that cannot be told (the socket table is unreadable, or no listener found); the launcher
    then trusts its pre-launch port check.
    """
    holders = _listeners(port)
    if not holders:
        return None
    if any(st.pid in holders for st in group_members(pgid)):
        return True
    # Looked for only when the group holds no listener: escapees reads every process's environment.
    return any(st.pid in holders for st in escapees(pgid, root=root, mark=mark, born_from=born_from))
