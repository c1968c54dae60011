"""What a name that heads tables and report lines may hold: a landscape table's ``name``
(:mod:`tuner.config.landscape`) and a simulator profile's (:mod:`tuner.sim.profile`), which also
names the landscape table written from it; and :func:`shown`, how any text from a user's file is
printed on a terminal line."""

from __future__ import annotations

import unicodedata


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


#: Unicode categories :func:`shown` escapes: controls (Cc: NUL, CR, ESC, ...), format characters (Cf:
#: the bidirectional embeddings, overrides and isolates U+202A-202E and U+2066-2069, the marks
#: U+200E/U+200F, zero-width characters, U+FEFF), line and paragraph separators (Zl, Zp) and lone
#: surrogates (Cs: a JSON "\ud800", which no terminal encoding can print). The zero-width joiners
#: U+200C/U+200D are Cf too, and are escaped on purpose although Persian text and emoji sequences use
#: them: in an error line a key ``pro\u200dmpt`` that printed as ``prompt: unknown key`` would hide
#: the very character at fault.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def shown(text: object) -> str:
    """``text`` as one terminal line shows it faithfully: every character that would drive the
    terminal, break the line, or reorder or hide the text around it (Trojan Source, CVE-2021-42574)
    written as its Python escape (``\x1b``, ``\u202e``, ``\U000e0001``); the rest as it is (CJK,
    accents, single emoji; the joiner inside an emoji sequence is escaped, see :data:`_HIDDEN`). The
    one helper for text from user files -- dataset rows, YAML keys and values, file names -- wherever
    it reaches an error line, a table or a status line (QA: a key holding U+202E printed raw reversed
    the rest of its error line). Escaped text is left as it is, so
    applying it twice changes nothing."""
    text = str(text)
    if all(unicodedata.category(c) not in _HIDDEN for c in text):
        return text
    return "".join(c if unicodedata.category(c) not in _HIDDEN
                   else (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}" if ord(c) < 0x10000
                         else f"\\U{ord(c):08x}") for c in text)
