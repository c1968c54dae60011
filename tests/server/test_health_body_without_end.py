"""The readiness probe reads at most ``MAX_HEALTH_BYTES`` of a health answer (SGLang's is empty): one
without end was read whole until the probe's timeout, up to 10 s at loopback speed (QA: GBs). A real
server on 127.0.0.1 (:mod:`support.endless_body`) whose body is 96 MiB."""

from __future__ import annotations

from support.endless_body import MIB, EndlessBody

from tuner.server.health import answer_status


def test_a_health_answer_without_end_is_no_answer_and_is_not_read_whole():
    with EndlessBody() as srv:
        status = answer_status(srv.url + "/health", 5.0)
    assert status is None  # not a whole answer: the server is not ready on it
    # the bound (health.MAX_HEALTH_BYTES, 1 MiB), and what loopback's socket buffers hold besides
    assert len(srv.sent) == 1 and srv.sent[0] <= 1 * MIB + 24 * MIB, srv.sent
