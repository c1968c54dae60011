"""The time a study was created (``created_at``, :data:`tuner.engine.study.READY_ATTR`) as readers
parse it: ``tuner.engine.confirm`` compares it with a confirmation companion's trials (one from
before companions carried their study's id is judged by time; every reader of the confirmation,
status, export, confirm, opens it so). This tuner writes ``2026-12-01T10:00:00+00:00``; a study
migrated or made by another tool may hold other ISO 8601 forms, which Python 3.10's
``datetime.fromisoformat`` refuses (ValueError, seen with 3.10.13) and 3.11 accepts (``Z``, a
fraction of other than 3 or 6 digits as PostgreSQL prints it, ``+0000``, ``+01``); a time without
a zone raised TypeError on any Python (compared with Optuna's zoned start times)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from tuner.engine.asktell import parse_utc, utc_now

TEN = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)

#: forms Python 3.10's fromisoformat refuses ("Invalid isoformat string"), and the instant each means
REFUSED_BY_310 = {
    "2026-12-01T10:00:00Z": TEN,
    "2026-12-01T10:00:00.123Z": TEN + timedelta(microseconds=123000),
    "2026-12-01T11:00:00.12+01:00": TEN + timedelta(microseconds=120000),  # PostgreSQL trims the fraction
    "2026-12-01 11:00:00.1234+01": TEN + timedelta(microseconds=123400),  # PostgreSQL's text: hour-only offset
    "2026-12-01T10:00:00+0000": TEN,
}


@pytest.mark.parametrize("text", sorted(REFUSED_BY_310))
def test_iso_forms_python_3_10_refuses_parse_to_their_instant(text):
    assert parse_utc(text) == REFUSED_BY_310[text]


def test_this_tuner_s_form_a_time_without_zone_and_nonsense():
    assert parse_utc(utc_now()).tzinfo is not None
    assert parse_utc("2026-12-01T10:00:00+00:00") == TEN
    assert parse_utc("2026-12-01T10:00:00") == TEN  # no zone: UTC, as every stored time is
    for bad in ("yesterday", "", None, 12, "2026-13-01T10:00:00Z"):
        assert parse_utc(bad) is None, bad


def test_an_older_companion_of_a_study_with_such_a_time_is_judged_not_a_traceback(tmp_path):
    """A confirmation companion without its study's id (from before ids were stamped) is judged by
    the study's created_at: one with no zone ended readers in a TypeError (comparing a zoned time
    with one without), one that is no time in a ValueError. Without a zone it is UTC; one that
    is no time cannot say the companion is another's (as a missing one)."""
    import optuna

    from tuner.engine.confirm import open_confirm_study
    from tuner.engine.study import READY_ATTR, UID_ATTR, create_study, open_study
    from tuner.config.study import load_study
    from support.model_study import model_study_yaml

    path = tmp_path / "s.yaml"
    path.write_text(model_study_yaml("s", "sqlite:///s.db", 2))
    config = load_study(path)
    create_study(config, config.storage)
    study = open_study("s", config.storage)
    companion = optuna.create_study(study_name="s.confirm", storage=config.storage)
    companion.enqueue_trial({})
    companion.ask()  # started now: after the study was created
    created = datetime.now(timezone.utc) - timedelta(hours=1)
    for stored, own in ((created.replace(tzinfo=None).isoformat(timespec="seconds"), True),  # no zone: UTC
                        ((created + timedelta(hours=2)).replace(tzinfo=None).isoformat(), False),  # made later
                        ("not a time", True)):
        study.set_user_attr(READY_ATTR, stored)
        study = open_study("s", config.storage)
        assert UID_ATTR not in companion.user_attrs
        assert (open_confirm_study(study) is not None) is own, stored
