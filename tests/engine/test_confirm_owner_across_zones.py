"""Whose is a confirmation companion from before companions carried their study's id: judged by
time, against the study's ``created_at`` (UTC), by readers in any time zone (``TZ`` of the reading
process, as a PostgreSQL worker elsewhere has). Optuna 5's RDB storage keeps a trial's start as
naive UTC and hands it back as the reader's naive local time, so a reader in another zone than the
writer reads it right -- except within the hour a DST change repeats, where the zone-less local
time is ambiguous; the repeat's run id (UTC, stamped by this tuner) is not."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import datetime, timezone

import optuna
import pytest

from support.model_study import model_study_yaml
from support.zygote import start_zygote
from tuner.config.study import load_study
from tuner.engine.study import READY_ATTR, UID_ATTR, create_study

#: POSIX rule for US Pacific time (no tz database needed): 2026-11-01 01:00-02:00 happens twice.
PACIFIC = "PST8PDT,M3.2.0,M11.1.0"
#: each zone's standard offset west of UTC, as the reading process sees it (the zone is in force)
WEST = {PACIFIC: 8 * 3600, "UTC0": 0, "JST-9": -9 * 3600}

#: Reads each study (argv: zones, then URLs) in each zone of argv[1] (";"-separated: a POSIX rule
#: holds commas): the process
#: starts in the first (its TZ), and moves to each next one as a process started there would be
#: (os.environ["TZ"] and time.tzset(), which localtime and astimezone() then follow). One process per
#: test instead of one per zone and study: a new interpreter with optuna costs about a CPU second
#: (and each is a fork of the module's zygote, which imported optuna and the tuner once).
READER = """
import os, sys, time
from tuner.engine.confirm import open_confirm_study
from tuner.engine.study import open_study
for tz in sys.argv[1].split(";"):
    os.environ["TZ"] = tz
    time.tzset()
    for url in sys.argv[2:]:
        print(tz, url, time.timezone, open_confirm_study(open_study("s", url)) is not None)
"""

#: Writes a companion now into each study (argv: URL and "run" or "none", repeated), stamping a run
#: id for "run" only. time.tzset(): the process is a fork of a zygote that started in another zone;
#: it takes its TZ as a process started there does at start-up, so Optuna's naive local start time
#: is Pacific time.
WRITER = """
import sys, time, optuna
time.tzset()
from datetime import datetime, timezone
for url, how in zip(sys.argv[1::2], sys.argv[2::2]):
    c = optuna.create_study(study_name="s.confirm", storage=url, direction="maximize")
    t = c.ask()
    if how == "run":
        t.set_user_attr("run", datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-abcd")
    c.tell(t, 0.0)
"""


def _env(tz: str) -> dict:
    return {"TZ": tz, "PATH": "/usr/bin:/bin", "PYTHONWARNINGS": "ignore"}


@pytest.fixture(scope="module")
def zygote(tmp_path_factory):
    """Readers and writers are real processes of their own, forked from one that has imported optuna
    and the tuner's study modules (tests/support/zygote.py): a CPU second saved per process."""
    z = start_zygote(["optuna", "tuner.engine.confirm", "tuner.engine.study"], _env("UTC0"),
                     tmp_path_factory.mktemp("tz-zygote"))
    yield z
    z.close()


def _python(zygote, cwd, code: str, tz: str, *args: str) -> str:
    """``python -c CODE ARGS`` in zone ``tz``, a fork of ``zygote`` in ``cwd`` (its output files go there)."""
    out = zygote.run(code, list(args), _env(tz), cwd, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def _own(zygote, cwd, zones: tuple[str, ...], *urls: str) -> dict[tuple[str, str], bool]:
    """Whether a reader in each of ``zones`` takes each study's companion for the study's, by (zone,
    URL); one reader process, started in the first zone."""
    seen = {}
    for line in _python(zygote, cwd, READER, zones[0], ";".join(zones), *urls).splitlines():
        tz, url, west, own = line.split()
        assert int(west) == WEST[tz], line  # the zone is in force
        seen[tz, url] = own == "True"
    assert sorted(seen) == sorted((tz, url) for tz in zones for url in urls)
    return seen


def _study(tmp_path, created_at: str | None = None) -> str:
    url = f"sqlite:///{tmp_path / 's.db'}"
    path = tmp_path / "s.yaml"
    path.write_text(model_study_yaml("s", url, 2))
    create_study(load_study(path), url)
    if created_at is not None:
        optuna.load_study(study_name="s", storage=url).set_user_attr(READY_ATTR, created_at)
    return url


def _companion(url: str, started_utc: str, run: str | None) -> None:
    """A companion as this tuner wrote it before ids were stamped: no UID_ATTR, a run id."""
    c = optuna.create_study(study_name="s.confirm", storage=url, direction="maximize")
    t = c.ask()
    if run is not None:
        t.set_user_attr("run", run)
    c.tell(t, 0.0)
    assert UID_ATTR not in c.user_attrs
    with closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as db, db:  # Optuna keeps naive UTC
        db.execute("UPDATE trials SET datetime_start = ? WHERE study_id = ?", (started_utc, c._study_id))


def test_own_companion_measured_in_the_repeated_dst_hour_stays_the_study_s(tmp_path, zygote):
    """Created at the second 01:30 of the night (09:30 UTC), confirmed at 01:40 (09:40 UTC): read in
    Pacific time, Optuna's start came back as a bare 01:40, which ``astimezone`` took for the first
    01:40 (08:40 UTC), before the study: its own measurements were another study's (and ``study
    confirm`` deleted them)."""
    url = _study(tmp_path, "2026-11-01T09:30:00+00:00")
    _companion(url, "2026-11-01 09:40:00.000000", "20261101T094000Z-1a2b")
    assert _own(zygote, tmp_path, (PACIFIC, "UTC0"), url) == {(PACIFIC, url): True, ("UTC0", url): True}


def test_a_companion_measured_before_the_study_is_another_s_in_every_zone(tmp_path, zygote):
    url = _study(tmp_path, "2026-11-01T09:30:00+00:00")
    _companion(url, "2026-11-01 08:20:00.000000", "20261101T082000Z-1a2b")
    own = _own(zygote, tmp_path, (PACIFIC, "UTC0", "JST-9"), url)
    assert not any(own.values()), own


def test_writer_and_reader_in_different_zones_agree(tmp_path, zygote):
    """Two processes, as workers of one PostgreSQL storage in different zones: a companion written
    now from Pacific time is the (earlier created) study's when read in Tokyo or UTC, by its run id
    and, for a trial without one (another tool's), by Optuna's start time."""
    born = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    urls = {}
    for how in ("run", "none"):
        (tmp_path / how).mkdir()
        urls[how] = _study(tmp_path / how, born)
    _python(zygote, tmp_path, WRITER, PACIFIC, urls["run"], "run", urls["none"], "none")
    own = _own(zygote, tmp_path, ("JST-9", "UTC0"), urls["run"], urls["none"])
    assert all(own.values()), own
