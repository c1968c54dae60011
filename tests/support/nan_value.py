"""A NaN objective value stored as Optuna's own ``storage.set_trial_state_values(..., [nan, ...])``
writes it into an SQLite storage: SQLite keeps NULL, which Optuna's reader asserts on."""

from __future__ import annotations

import sqlite3


def store_nan(config, study_name: str, number: int) -> None:
    """Trial ``number`` of ``study_name`` (in ``config.storage``, SQLite) gets a NaN first objective value."""
    db = sqlite3.connect(config.storage.removeprefix("sqlite:///"))
    with db:
        db.execute("UPDATE trial_values SET value = ? WHERE objective = 0 AND trial_id = (SELECT trial_id "
                   "FROM trials JOIN studies USING (study_id) WHERE study_name = ? AND number = ?)",
                   (float("nan"), study_name, number))
    assert db.execute("SELECT count(*) FROM trial_values WHERE value IS NULL").fetchone() == (1,)
    db.close()
