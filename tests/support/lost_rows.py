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


#: the one queued setting of :func:`seeded_study`
SEED = {"speculative_num_steps": 3, "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 4}


def seeded_study(folder, name: str):
    """A study of 3 launches through the performance model in an SQLite file in ``folder``, created,
    its one seed :data:`SEED` queued; returns its config."""
    from support.model_study import model_study_yaml

    from tuner.config.study import load_study
    from tuner.engine.study import create_study

    path = folder / f"{name}.yaml"
    path.write_text(model_study_yaml(name, f"sqlite:///{folder / name}.db", 3, noise=0.01, seed=1)
                    + "default_seed_trials: false\nseed_trials:\n  - " + str(SEED).replace("'", "") + "\n")
    config = load_study(path)
    create_study(config, config.storage)
    return config


def counting_backend() -> CountingBackend:
    """A :class:`CountingBackend` on the PCIe profile and the quick suite, its count emptied."""
    from tuner.config.suite import load_suite

    backend = CountingBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=1)
    backend.launches = []
    return backend


def warned(events: list, text: str) -> list[str]:
    """The messages of the ``warning`` events (``(kind, info)`` pairs) that hold ``text``."""
    return [info["message"] for kind, info in events if kind == "warning" and text in info["message"]]
