"""Shared by the tests of a PostgreSQL that refuses a study's database for good (closed to
connections, left invalid by a DROP, a pg_hba.conf reject line, SSL the server lacks): such a refusal
is no outage, so ``tuner study run`` and ``tuner study status`` each stop at once, exit 2, in one line
with its fix, where they used to wait out the whole patience ("does not answer", exit 75) or say
"run it again once the storage answers"."""

from __future__ import annotations

import optuna
import sqlalchemy as sa
from click.testing import CliRunner, Result

from tuner.cli import cli
from tuner.engine.storage import open_storage

#: Set by each test: before the fixes, 30 s of waiting, then exit 75.
PATIENCE_S = "30"


def study_database(url: str, study: str) -> str:
    """Create the study ``study`` (Optuna's, one objective) in the database of ``url``; its database's name."""
    storage = open_storage(url)
    optuna.create_study(study_name=study, storage=storage, directions=["maximize"])
    storage.engine.dispose()
    return sa.engine.make_url(url).database


def superuser(pg_cluster):
    """An engine of the cluster's superuser on its socket (autocommit, no pool): what an administrator runs."""
    return sa.create_engine(f"postgresql+psycopg2://postgres@/postgres?host={pg_cluster.dir}/sock&port="
                            f"{pg_cluster.port}", isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)


def run_and_status(study: str, url: str) -> tuple[Result, Result]:
    """``tuner study run --study STUDY`` and ``tuner study status --study STUDY`` on ``url``, in-process."""
    return tuple(CliRunner().invoke(cli, ["study", command, "--study", study, "--storage", url])
                 for command in ("run", "status"))


def assert_refused_at_once(results, *words: str) -> None:
    """Each of ``results``: exit 2, one line, holding every one of ``words``, never an outage's wording."""
    for result in results:
        assert result.exit_code == 2, result.output
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1, result.output
        assert all(w in lines[0] for w in words), result.output
        assert "does not answer" not in result.output and "run it again once" not in result.output, result.output
