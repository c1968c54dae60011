"""A storage URL with ``?options=-csearch_path%3D...`` (a schema of the study's own) through a real
PgBouncer, which refuses that startup parameter unless told to ignore it: one line with the fix, at
once, from a reading command and from a running worker's patient open.

QA (qa176): `tuner study create` said "FATAL: unsupported startup parameter: options; run it again once
the storage answers (`tuner study run` waits for it)", and `tuner study run` waited out its whole
patience (600 s) for a refusal no wait ends.
"""

import pytest
from support.pgbouncer import pgbouncer

from tuner.config.yamlfile import ConfigError
from tuner.engine.storage import open_storage


def test_a_startup_parameter_pgbouncer_refuses_is_one_line_at_once(pg_url, tmp_path, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "5")  # without the fix: "did not answer for 5 s"
    with pgbouncer(pg_url, "transaction", tmp_path) as via:
        url = via + "?options=-csearch_path%3Dtuner"
        for patient in (False, True):
            with pytest.raises(ConfigError) as refused:
                open_storage(url, patient=patient)
            message = str(refused.value)
            assert "unsupported startup parameter: options" in message, message
            assert ("refuses the URL's options= parameter: drop it from the URL and set the schema on the role "
                    "instead (ALTER ROLE ... SET search_path = SCHEMA)") in message, message
            assert "run it again once the storage answers" not in message, message
            assert len(message.splitlines()) == 1, message
            assert via.split("@")[0].split(":")[-1] not in message  # the password
