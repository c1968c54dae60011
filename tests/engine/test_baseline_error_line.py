"""The line a failed baseline stops the run with names its server log once. QA: a hung baseline said
``... the server stopped answering (log: .../baseline/server.log); log: .../baseline/server.log``:
the hang's message (and a failed launch's) names the log already."""

from __future__ import annotations

from types import SimpleNamespace

from tuner.engine.baseline import BaselineError


def test_a_failed_baseline_names_its_log_once():
    log = "/srv/studies/x/baseline/server.log"
    hung = SimpleNamespace(failure_class="hung", log_path=log,
                           failure_message=f"GET /v1/models got no answer 3 times in a row (log: {log})")
    line = str(BaselineError(hung))
    assert line.startswith("the autoregressive baseline failed (hung): GET /v1/models"), line
    assert line.count(log) == 1, line
    other = SimpleNamespace(failure_class="request_errors", log_path=log,
                            failure_message="3 of 41 requests failed")
    assert str(BaselineError(other)).endswith(f"3 of 41 requests failed; log: {log}")
