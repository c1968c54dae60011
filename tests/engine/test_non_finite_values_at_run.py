"""`tuner study run` on a study holding an objective value Optuna reads back but no objective can be:
+inf (Optuna writes it as a NULL of type ``INF_POS``; its ``tell`` stores one), on SQLite and on
PostgreSQL, and a NaN on PostgreSQL (which keeps it as NaN; SQLite's NULL is test_unreadable_trials_at_run).
QA (qa125): with +inf the structured sampler took it for a reading and the run ended in scikit-learn's
``ValueError: Input y contains NaN``; a NaN on PostgreSQL stayed a COMPLETE trial every run read on,
where SQLite's run failed it. tuner/engine/unreadable_trials.py.

The study of four measured trials the first cases start from is measured once per module and storage
kind and copied into each test (the SQLite file; a PostgreSQL database made with it as its template):
each test then edits and runs its own copy, as if it had measured it itself."""

from __future__ import annotations

import shutil

import optuna
import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from optuna.trial import TrialState
from support.model_study import model_study_yaml
from support.pg import admin_sql, database_url, drop_database, new_database

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.engine.storage import driver_url
from tuner.engine.unreadable_trials import VALUES_ATTR


def _run(path, *more) -> str:
    result = CliRunner().invoke(cli, ["study", "run", str(path), *more])
    assert result.exit_code == 0 and result.exception is None, result.output
    return result.output


def _store(storage: str, number: int, value: str, value_type: str) -> None:
    """Trial ``number``'s first objective value becomes ``value`` (SQL text) of Optuna's ``value_type``."""
    engine = sa.create_engine(driver_url(storage), poolclass=sa.pool.NullPool)
    try:
        with engine.begin() as conn:
            changed = conn.execute(sa.text(
                f"UPDATE trial_values SET value = {value}, value_type = :kind WHERE objective = 0 AND trial_id = "
                "(SELECT trial_id FROM trials JOIN studies USING (study_id) WHERE study_name = 'bad' AND number = :n)"),
                {"kind": value_type, "n": number}).rowcount
    finally:
        engine.dispose()
    assert changed == 1


def _study_yaml(storage: str) -> str:
    """Study ``bad``: the performance model (noise 0.02, seed 5), a budget of six trials."""
    return model_study_yaml("bad", storage, 6, noise=0.02, seed=5)


@pytest.fixture(scope="module")
def _four_measured(tmp_path_factory, request):
    """``source(kind)``: the storage URL of study ``bad`` with four trials measured (``--n-trials 4``
    of its six), on ``kind`` (sqlite, postgresql); each measured at its first use in this module."""
    made: dict[str, str] = {}

    def source(kind: str) -> str:
        if kind not in made:
            folder = tmp_path_factory.mktemp(f"four-measured-{kind}")
            if kind == "sqlite":
                storage = f"sqlite:///{folder / 'bad.db'}"
            else:
                server = request.getfixturevalue("pg_server")
                name = new_database(server, "tuner_test_four_")
                storage = database_url(server, name)
                request.addfinalizer(lambda: drop_database(server, name))  # dropped even if the run fails
            path = folder / "bad.yaml"
            path.write_text(_study_yaml(storage))
            _run(path, "--n-trials", "4")
            if kind != "sqlite":
                _close_sessions(request.getfixturevalue("pg_server"), storage.rsplit("/", 1)[1])
            made[kind] = storage  # only once measured: a failed run is measured again, never copied
        return made[kind]

    return source


def _close_sessions(server: str, name: str) -> None:
    """End the sessions still open on database ``name``: a template must have none. They are this
    process's: the in-process run's Optuna storage keeps its pool (an engine never disposed, as a
    `tuner` process's ends with it), idle, and nothing opens that database again but as a template."""
    admin_sql(server, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                      "WHERE datname = :name AND pid <> pg_backend_pid()", {"name": name})


@pytest.fixture
def four_measured(request, tmp_path, _four_measured):
    """A copy of :func:`_four_measured`'s study on ``request.param`` (sqlite, postgresql), the
    test's own: the SQLite file copied into ``tmp_path``; a new database with the measured one as
    its template (dropped after the test)."""
    source = _four_measured(request.param)
    if request.param == "sqlite":
        shutil.copyfile(source.removeprefix("sqlite:///"), tmp_path / "bad.db")
        yield f"sqlite:///{tmp_path / 'bad.db'}"
        return
    server = request.getfixturevalue("pg_server")
    name = new_database(server, template=source.rsplit("/", 1)[1])
    try:
        yield database_url(server, name)
    finally:
        drop_database(server, name)


def _bad_value_failed_and_run_goes_on(tmp_path, storage: str, value: str, value_type: str, kept: str) -> None:
    """``storage``: study ``bad`` with four trials measured (:func:`four_measured`)."""
    path = tmp_path / "bad.yaml"
    path.write_text(_study_yaml(storage))
    before = optuna.load_study(study_name="bad", storage=driver_url(load_study(path).storage)).trials[1]
    assert before.state == TrialState.COMPLETE and before.user_attrs["status"] == "measured"
    _store(load_study(path).storage, 1, value, value_type)

    out = _run(path)  # the rest of the budget: the sampler models every reading it is given
    assert f"warning: trial 1: stored objective value of single_speedup {kept} is not a finite number: failed" \
        in " ".join(out.split()), out
    trials = optuna.load_study(study_name="bad", storage=driver_url(load_study(path).storage)).trials
    failed = trials[1]
    assert failed.state == TrialState.FAIL and failed.values is None
    assert failed.user_attrs["failure_class"] == "unreadable" and failed.user_attrs["status"] == "failed"
    # what storage held is kept, as plain JSON text where it is no finite number; figures untouched
    assert failed.user_attrs[VALUES_ATTR] == {"0": kept, "1": before.values[1]}
    assert failed.user_attrs["single_tok_per_s"] == before.user_attrs["single_tok_per_s"]
    assert [t.number for t in trials if t.state == TrialState.FAIL] == [1]
    assert "the study's budget of 6 trials is spent" in out and len(trials) > 5, out
    # a second run finds nothing more to fail: its scan comes first (tuner.engine.runner.run_study),
    # whatever the budget, so it runs on the spent one (a launch added to it cost a sampled trial)
    again = _run(path)
    assert "warning: trial" not in again and "the study's budget of 6 trials is spent" in again, again


@pytest.mark.parametrize("four_measured", ["sqlite", "postgresql"], indirect=True)
def test_an_infinite_value_is_failed_and_the_run_goes_on(tmp_path, four_measured):
    _bad_value_failed_and_run_goes_on(tmp_path, four_measured, "NULL", "INF_POS", "inf")


@pytest.mark.parametrize("four_measured", ["postgresql"], indirect=True)
def test_a_nan_on_postgresql_is_failed_as_on_sqlite(tmp_path, four_measured):
    _bad_value_failed_and_run_goes_on(tmp_path, four_measured, "'NaN'", "FINITE", "nan")


def test_a_nan_baseline_on_postgresql_is_measured_again_as_status_says(tmp_path, pg_url):
    """The same on the baseline's own study (QA: status showed it as the baseline and the run
    reused it, where SQLite's status and run measured it again)."""
    path = tmp_path / "bad.yaml"
    path.write_text(model_study_yaml("bad", pg_url, 1, noise=0.02, seed=5))
    _run(path)
    engine = sa.create_engine(driver_url(pg_url), poolclass=sa.pool.NullPool)
    try:
        with engine.begin() as conn:
            assert conn.execute(sa.text(
                "UPDATE trial_values SET value = 'NaN' WHERE objective = 0 AND trial_id = (SELECT trial_id "
                "FROM trials JOIN studies USING (study_id) WHERE study_name = 'bad.baseline' AND number = 0)")
            ).rowcount == 1
    finally:
        engine.dispose()
    status = CliRunner().invoke(cli, ["study", "status", str(path)])
    said = " ".join(status.output.split())
    assert "baseline: measured, but unreadable (value of single_tok_per_s nan is not a finite number)" in said, said
    assert "the next tuner study run measures it again" in said

    out = " ".join(_run(path, "--add-trials", "1").split())
    assert "warning: baseline (trial 0): stored objective value of single_tok_per_s nan" in out, out
    base = optuna.load_study(study_name="bad.baseline", storage=driver_url(pg_url)).trials
    assert [t.state for t in base] == [TrialState.FAIL, TrialState.COMPLETE]
    assert base[0].user_attrs[VALUES_ATTR]["0"] == "nan"


def test_a_trial_another_worker_failed_meanwhile_is_read_afresh(tmp_path):
    """Two workers starting at once: the one whose conditional UPDATE finds the trial failed by the
    other already must not sample from the COMPLETE trial with its ``inf`` its cache still holds."""
    from tuner.engine.unreadable_trials import fail_unreadable_trials

    storage = f"sqlite:///{tmp_path / 'bad.db'}"
    path = tmp_path / "bad.yaml"
    path.write_text(model_study_yaml("bad", storage, 2, noise=0.02, seed=5))
    _run(path)
    _store(storage, 1, "NULL", "INF_POS")
    late = optuna.load_study(study_name="bad", storage=storage)
    assert late.get_trials(deepcopy=False)[1].state == TrialState.COMPLETE  # read, and cached
    first = optuna.load_study(study_name="bad", storage=storage)
    assert [n for n, _ in fail_unreadable_trials(first)] == [1]
    assert fail_unreadable_trials(late) == []  # the other worker's: nothing failed by this one
    assert late.get_trials(deepcopy=False)[1].state == TrialState.FAIL
