"""A SIGTERM that lands while SQLAlchemy's pool resets a connection it takes back (``_finalize_fairy``
in sqlalchemy/pool/base.py): the pool logs the exception ("Exception during reset or similar", with
its traceback) and raises it again. The stop went on, but the user read a traceback on a clean stop
(QA, qa185: 1 run in 40 of SIGTERM fuzzed over a ``server.backend: model`` run). Now a signal's own
exception is not logged there; another one still is.

The signal is a real SIGTERM to this process, sent from a profile hook as the pool's ``_reset`` is
called, so the tuner's handler raises in it."""

from __future__ import annotations

import logging
import os
import signal
import sys

import optuna
import pytest

from tuner.engine.interrupted import POOL_LOGGERS, QUIET_SIGNAL
from tuner.engine.storage import open_storage
from tuner.server.signals import stop_on_signals


def test_a_sigterm_in_the_pools_reset_is_not_logged_as_its_error(tmp_path, caplog):
    storage = open_storage(f"sqlite:///{tmp_path / 'q.db'}", patient=True)
    study = optuna.create_study(study_name="q", storage=storage)
    landed = []

    def hook(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "_reset" and "sqlalchemy" in frame.f_code.co_filename:
            sys.setprofile(None)
            landed.append(frame.f_code.co_filename)
            os.kill(os.getpid(), signal.SIGTERM)  # the tuner's handler raises here

    caplog.set_level(logging.DEBUG, logger="sqlalchemy.pool")
    with pytest.raises(SystemExit) as stopped, stop_on_signals():
        sys.setprofile(hook)
        try:
            study._storage.get_study_user_attrs(study._study_id)  # a read, its connection taken back
        finally:
            sys.setprofile(None)
    assert stopped.value.code == 143 and landed, landed
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]

    other = logging.LogRecord(POOL_LOGGERS[0], logging.ERROR, __file__, 1, "Exception during reset or similar",
                              None, (ValueError, ValueError("a real one"), None))
    assert QUIET_SIGNAL.filter(other)  # any other exception there is still logged
