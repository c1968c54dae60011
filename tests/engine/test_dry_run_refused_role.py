"""``tuner study run --dry-run`` with ``TUNER_STORAGE`` a PostgreSQL role that may not use the study.

QA (qa159): a role with no rights on another role's tables, or refused CONNECT on the database, got
the plan and exit 0 from the dry run, where the real run exits 2 at once ("cannot open: ...
permission denied ..."); the README says the dry run refuses what a run would refuse. Now the dry
run says the run's line, exit 2. A storage that does not answer (an outage, which a run waits out)
still gets the plan: the dry run shows the file's commands.

The session's own server (support.pg.PgCluster, tests/engine's fixture ``pg_cluster``): its superuser
makes the roles and revokes CONNECT.
"""

import socket
import uuid

import sqlalchemy as sa
from click.testing import CliRunner
from sqlalchemy.engine import make_url

from support.model_study import one_launch_study
from tuner.cli import cli
from tuner.engine.storage import driver_url

PASSWORD = "s3cr#t/pw"
STUDY = one_launch_study("demo")


def _dry_run(study, url):
    return CliRunner().invoke(cli, ["study", "run", "--dry-run", str(study)], env={"TUNER_STORAGE": url},
                              catch_exceptions=False)


def _as_owner(owner_url, sql):
    owner = sa.create_engine(driver_url(owner_url), isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with owner.connect() as conn:
            conn.execute(sa.text(sql))
    finally:
        owner.dispose()


def test_dry_run_refuses_a_role_the_run_refuses_and_shows_the_plan_in_an_outage(pg_cluster, tmp_path):
    tag = uuid.uuid4().hex[:8]
    owner_url = pg_cluster.database(user=f"owner_{tag}", password=PASSWORD)
    other_url = pg_cluster.database(user=f"other_{tag}", password=PASSWORD)
    database = make_url(owner_url).database
    study = tmp_path / "demo.yaml"
    study.write_text(STUDY)
    made = CliRunner().invoke(cli, ["study", "create", str(study)], env={"TUNER_STORAGE": owner_url},
                              catch_exceptions=False)
    assert made.exit_code == 0, made.output
    theirs = make_url(other_url).set(database=database).render_as_string(hide_password=False)
    shown = make_url(theirs).render_as_string(hide_password=True)
    role = f"other_{tag}"

    tables = _dry_run(study, theirs)
    assert tables.exit_code == 2, tables.output
    assert tables.stdout == ""
    assert tables.stderr.strip().splitlines() == [
        f"error: storage: {shown}: cannot open: InsufficientPrivilege: permission denied for table version_info; "
        f"the role {role} has no rights on the study's tables (another role's): use the URL of the role that "
        f"created the study, or have it run GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public "
        f"TO {role}; GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}"]
    run = CliRunner().invoke(cli, ["study", "run", str(study)], env={"TUNER_STORAGE": theirs},
                             catch_exceptions=False)
    # the run refuses it before anything is written too, at its preflight (doctor's storage check makes a
    # run's writes on the study's tables since QA qa190), with the same fix
    assert run.exit_code == 1, run.output
    assert run.stderr.startswith(f"error: fail  storage: {shown}: InsufficientPrivilege: permission denied for table "), \
        run.stderr
    assert tables.stderr.split("; ", 1)[1].strip() in run.stderr, run.stderr

    _as_owner(owner_url, f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}; "
                         f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}; "
                         f'REVOKE CONNECT ON DATABASE "{database}" FROM PUBLIC')
    connect = _dry_run(study, theirs)
    assert connect.exit_code == 2, connect.output
    assert connect.stdout == ""
    lines = connect.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: storage: {shown}: cannot open: "), lines
    assert lines[0].endswith(
        f'permission denied for database "{database}"; the role {role} may not connect to {database}: use the URL '
        f"of a role that may (the one that created the study), or have its owner run GRANT CONNECT ON DATABASE "
        f"{database} TO {role}"), lines
    assert PASSWORD not in connect.output + tables.output

    _as_owner(owner_url, f'GRANT CONNECT ON DATABASE "{database}" TO {role}')
    granted = _dry_run(study, theirs)  # the grants were enough: the plan
    assert granted.exit_code == 0, granted.output
    assert "# study demo, storage" in granted.stdout

    with socket.socket() as sock:  # a port nothing listens on: connection refused, an outage
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    down = _dry_run(study, make_url(theirs).set(port=port).render_as_string(hide_password=False))
    assert down.exit_code == 0, down.output
    assert "# study demo, storage" in down.stdout
