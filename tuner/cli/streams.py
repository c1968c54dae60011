"""A standard stream pointed at /dev/null: what the CLI does with a stream the caller closed
(``tuner ... >&-``), a pipe whose reader went away (``| head``) or a disk that filled under stdout, so
that later writes, the interpreter's last flush and a server inheriting the descriptor go nowhere
instead of failing or landing in another file."""

from __future__ import annotations

import os


def devnull_at(fd: int) -> None:
    """File descriptor ``fd`` is /dev/null from now on, whatever it was or if it was closed (read-only
    for 0, write-only otherwise). ``OSError`` when /dev/null cannot be opened."""
    null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)  # the lowest free number
    if null != fd:
        os.dup2(null, fd)
        os.close(null)


#: The error handler :func:`escape_unencodable` registers (:mod:`codecs`).
ESCAPE = "tuner-escape"


def _escape(exc: UnicodeError):
    """What a character the terminal's encoding lacks is written as: a lone surrogate of PEP 383 (a
    file name's byte Python could not decode) as that byte, as ``surrogateescape`` does; any other
    as its escape (``\\u0939``), as ``backslashreplace`` does. One character at a time."""
    import codecs

    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    char = exc.object[exc.start]
    if "\udc80" <= char <= "\udcff":
        return bytes([ord(char) - 0xDC00]), exc.start + 1
    return codecs.backslashreplace_errors(UnicodeEncodeError(exc.encoding, exc.object, exc.start,
                                                             exc.start + 1, exc.reason))


def escape_unencodable() -> None:
    """Standard output writes a character its encoding lacks escaped (:func:`_escape`), never raising.

    Why: Python writes stdout in the locale's encoding, ``strict`` (``surrogateescape`` under the C
    locale), so under a terminal that is not UTF-8 (``LANG=en_US.ISO-8859-1``; ``LC_ALL=C
    PYTHONUTF8=0``: ASCII) a Hindi suite name or dataset category ended ``tuner study status`` in a
    ``UnicodeEncodeError`` traceback (QA, qa157) after half its lines. stderr needs nothing: Python
    writes it ``backslashreplace`` already. A UTF-8 stdout is left as it is."""
    import codecs
    import io
    import sys

    stream = sys.stdout
    if not isinstance(stream, io.TextIOWrapper):
        return
    try:
        if codecs.lookup(stream.encoding).name in ("utf-8", "utf-16", "utf-32"):
            return
        codecs.register_error(ESCAPE, _escape)
        stream.reconfigure(errors=ESCAPE)
    except (LookupError, ValueError, OSError):
        return  # an encoding Python does not know, or a stream that cannot change: left as it is
