"""What a name that heads tables and report lines may hold: a landscape table's ``name``
(:mod:`tuner.config.landscape`) and a simulator profile's (:mod:`tuner.sim.profile`), which also
names the landscape table written from it."""

from __future__ import annotations


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot head a table or a report line, or None: a control character (a newline, a
    tab) in it, once stripped, would split them (QA: a table named ``'line1\\n## fake'`` split the
    benchmark's progress lines and table heading in two). Surrounding whitespace is allowed."""
    control = next((c for c in name.strip() if ord(c) < 0x20 or ord(c) == 0x7F), None)
    if control is None:
        return None
    return f"holds the control character {control!r}; a name is one line of printable text"
