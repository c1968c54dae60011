"""Commits a database acknowledged and then forgot, made on a real SQLite file by deleting rows
(what an immediate PostgreSQL restart with asynchronous commits, or a failover to a replica behind
its primary, does to the newest commits), and a performance-model backend that counts launches."""

from __future__ import annotations

import sqlalchemy as sa

from tuner.engine.backends import ModelBackend


class CountingBackend(ModelBackend):
    """The performance model, counting the launches of every setting (workers in one process share
    it); reset ``launches`` per test."""

    launches: list = []

    def measure(self, spec, label, record, **kwargs):
        if spec is not None:
            self.launches.append(spec.server_args())
        return super().measure(spec, label, record, **kwargs)


def forget_running_attr(url: str, key: str) -> None:
    """Delete the user attribute ``key`` of every RUNNING trial (a claim, a launching mark)."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("DELETE FROM trial_user_attributes WHERE key = :k AND trial_id IN "
                                 "(SELECT trial_id FROM trials WHERE state = 'RUNNING')"), {"k": key})
    finally:
        engine.dispose()


def lose_the_running_trials(url: str) -> list[int]:
    """Delete every RUNNING trial with all its rows; returns their ids."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            ids = [r[0] for r in conn.execute(sa.text("SELECT trial_id FROM trials WHERE state = 'RUNNING'"))]
            for t in ids:
                for table in ("trial_params", "trial_system_attributes", "trial_user_attributes",
                              "trial_heartbeats", "trial_intermediate_values", "trial_values"):
                    conn.execute(sa.text(f"DELETE FROM {table} WHERE trial_id = :t"), {"t": t})
                conn.execute(sa.text("DELETE FROM trials WHERE trial_id = :t"), {"t": t})
        return ids
    finally:
        engine.dispose()
