"""What a name that heads tables and report lines may hold: a landscape table's ``name``
(:mod:`tuner.config.landscape`) and a simulator profile's (:mod:`tuner.sim.profile`), which also
names the landscape table written from it."""

from __future__ import annotations


def control_char(text: str) -> str | None:
    """The first character of ``text`` that breaks or drives a line it is printed in, or None: a C0
    control (a newline, a tab, ESC), DEL, a C1 control (U+0080-U+009F: U+009B starts a terminal's
    escape sequence as ESC [ does) or Unicode's line and paragraph separators (U+2028, U+2029)."""
    return next((c for c in text if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in "\u2028\u2029"), None)


def name_problem(name: str, *, whole: bool = False) -> str | None:
    """Why ``name`` cannot head a table or a report line, or None: a control character (a newline, a
    tab) in it, once stripped, would split them (QA: a table named ``'line1\\n## fake'`` split the
    benchmark's progress lines and table heading in two). C1 controls count too (U+009B is a
    terminal's escape sequence start, as ESC [ is), and so do Unicode's line and paragraph separators
    (U+2028, U+2029), which break a line as a newline does. Surrounding whitespace is allowed, unless
    ``whole``: a label printed as it is (a prompt's name), where a trailing newline breaks the line too."""
    control = control_char(name if whole else name.strip())
    if control is None:
        return None
    return f"holds the control character {control!r}; a name is one line of printable text"
