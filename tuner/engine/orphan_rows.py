"""Rows a deleted study left behind in an SQLite storage, removed before a study is created.

SQLite enforces no foreign keys unless a connection asks (``PRAGMA foreign_keys``), and Optuna's
``delete_study`` removes a study through SQLAlchemy's ORM cascade: it reads the study's rows, then
deletes the rows it read. A running worker's write that lands in between -- an attribute of its
trial: Optuna checks that the trial exists, then inserts, in two statements
(``RDBStorage._set_trial_attr_without_commit``) -- outlives the deletion as a row naming a trial
that no longer exists. SQLite gives the next rows the freed ids (a rowid is the largest plus one),
so a study created under the same name adopted the deleted study's measurement on one of its
queued trials (QA: `tuner study delete --force` and `create` while a worker recorded, one run of a
loaded full suite). :func:`drop_orphan_rows` deletes every row whose study or trial is gone, in one
transaction, before a study is created. PostgreSQL enforces the foreign keys (such a write fails
there): nothing to do.
"""

from __future__ import annotations


def drop_orphan_rows(storage) -> int:
    """Delete, in ``storage`` (an Optuna ``RDBStorage`` on SQLite; any other is left alone), the
    rows whose study or trial no longer exists: first trials and study rows of a missing study, then
    trial rows of a missing trial. Returns how many rows went. Raises what the database raises."""
    import sqlalchemy as sa
    from optuna.storages._rdb import models

    engine = getattr(storage, "engine", None)
    if engine is None or engine.dialect.name != "sqlite":
        return 0
    by_study = (models.StudyDirectionModel, models.StudyUserAttributeModel, models.StudySystemAttributeModel,
                models.TrialModel)
    by_trial = (models.TrialUserAttributeModel, models.TrialSystemAttributeModel, models.TrialParamModel,
                models.TrialValueModel, models.TrialIntermediateValueModel, models.TrialHeartbeatModel)
    studies = sa.select(models.StudyModel.study_id)
    trials = sa.select(models.TrialModel.trial_id)
    gone = 0
    with engine.begin() as conn:
        for model in by_study:
            gone += conn.execute(sa.delete(model).where(model.study_id.is_not(None),
                                                        model.study_id.not_in(studies))).rowcount
        for model in by_trial:
            gone += conn.execute(sa.delete(model).where(model.trial_id.is_not(None),
                                                        model.trial_id.not_in(trials))).rowcount
    return gone
