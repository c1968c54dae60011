"""The line a worker leaves when it gives up on its storage names each journaled measurement as what it
is: the study's baseline, a trial, or a confirmation (`tuner study confirm` keeps those in the companion
study ``NAME.confirm``, numbered on their own). QA (qa148): a confirmation journaled during an outage was
said as "trial 3", while the study's own trial 3 is another setting. Real journal files in a workdir."""

from __future__ import annotations

from tuner.cli.journal_note import journal_note
from tuner.engine.journal import Journal


def test_each_journaled_measurement_is_named_as_what_it_is(tmp_path, monkeypatch):
    monkeypatch.setattr("tuner.engine.journal.fallback_folder", lambda: tmp_path / "fallback")
    journal = Journal(tmp_path / "wd")
    for study, number in (("s.baseline", 0), ("s", 3), ("s.confirm", 3)):
        journal.write({"finish": {"study": study, "number": number}}, f"{study}-{number}")
    note = journal_note("s", tmp_path / "wd" / "journal")
    assert note.startswith("3 measurements journaled in ")
    listed = note.split("(", 1)[1].split(")", 1)[0].split(", ")
    assert sorted(listed) == ["baseline 0", "confirmation 3", "trial 3"], note
