"""The contract of :func:`tuner.server.ports.port_taken`, the one bind behind ``port_free``,
``ensure_port_free``, the launcher's check before a launch and ``tuner doctor``'s port line: None for
a port a server could bind now, else the :class:`PortInUseError` to say, told from that same bind
(a held port is in use; a privileged one, EACCES, is said so: tests/server/test_privileged_port.py)."""

import socket

import pytest

from tuner.server.ports import PortInUseError, ensure_port_free, port_free, port_taken


def test_a_held_port_is_in_use_and_a_released_one_free():
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        taken = port_taken("127.0.0.1", port)
        assert isinstance(taken, PortInUseError) and (taken.host, taken.port) == ("127.0.0.1", port)
        assert str(taken) == f"port {port} on 127.0.0.1 is in use by another process; set server.port to a free port or 0"
        assert not port_free("127.0.0.1", port)
        with pytest.raises(PortInUseError) as raised:
            ensure_port_free("127.0.0.1", port)
        assert str(raised.value) == str(taken)
    assert port_taken("127.0.0.1", port) is None and port_free("127.0.0.1", port)
    ensure_port_free("127.0.0.1", port)

