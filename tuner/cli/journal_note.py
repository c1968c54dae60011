"""The line that tells a worker's user where its unstored measurements wait (the journal)."""

from __future__ import annotations

from pathlib import Path

from ..config.wording import counted


def journal_note(name: str, folder: Path) -> str:
    """What a worker that gives up on its storage leaves behind, and how it gets stored."""
    from ..engine.journal import Journal

    entries = Journal(Path(folder).parent).entries(name)
    if not entries:
        return f"nothing measured is waiting (journal {folder} is empty)"
    trials = ", ".join(f"{_kind(e['finish']['study'])} {e['finish']['number']}" for _, e in entries)
    folders = " and ".join(str(f) for f in dict.fromkeys(p.parent for p, _ in entries))  # the fallback's too
    return (f"{counted(len(entries), 'measurement')} journaled in {folders} ({trials}): the next "
            f"`tuner study run` of study {name} with this workdir stores them first, without measuring again")


def _kind(study: str) -> str:
    """What a journal entry of the Optuna study ``study`` measured: the study's ``baseline`` (``NAME.baseline``),
    a ``confirmation`` (``NAME.confirm``, numbered as `tuner study confirm` numbers them; QA: a journaled
    confirmation was said as "trial 3", another setting's number in the study itself), else a ``trial``."""
    from ..config.study import BASELINE_SUFFIX, CONFIRM_SUFFIX

    return ("baseline" if study.endswith(BASELINE_SUFFIX) else "confirmation" if study.endswith(CONFIRM_SUFFIX)
            else "trial")
