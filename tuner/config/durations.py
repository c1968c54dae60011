"""Durations as the tuner's files and flags write them: ``budget.timeout``, ``bench.trial_timeout``
and ``--timeout`` take ``8h``, ``45m``, ``1h30m`` or a YAML number of seconds (:func:`parse_duration`);
the ``*_s`` / ``*_seconds`` keys take a number of seconds only, and a duration with a unit there says
the number to write (:func:`seconds_only`). A module of its own so that the study file and the suite
file (``timeout_s``), which the study imports, both read them."""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

from .yamlfile import MAX_DURATION_S, ConfigError


_DURATION_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0}
# One match over the whole text, each unit at most once and in the order h, m, s: a findall of
# "number unit" parts rescanned a long run of digits from every start (16,000 digits took 12 s).
# ASCII digits only, as every numeric flag (tuner.cli.numbers): Python's \d and float() also take
# other scripts' digits, so "８h" was a budget of 8 hours (QA).
_DURATION = re.compile(r"(?:([0-9]+(?:\.[0-9]+)?)h)?(?:([0-9]+(?:\.[0-9]+)?)m)?(?:([0-9]+(?:\.[0-9]+)?)s)?")
#: An ISO 8601 duration of days and time (``PT8H``, ``P1DT2H``, ``PT1H30M``), lowercased: refused with
#: the same time in this parser's units (its ``m`` before the ``T`` would be months)
_ISO_DURATION = re.compile(r"p(?:([0-9]+(?:\.[0-9]+)?)d)?(?:t(?:([0-9]+(?:\.[0-9]+)?)h)?"
                           r"(?:([0-9]+(?:\.[0-9]+)?)m)?(?:([0-9]+(?:\.[0-9]+)?)s)?)?")


def parse_duration(value: Any, source: str = "", key: str = "") -> float | None:
    """``8h``, ``45m``, ``90s``, ``1h30m``, ``2.5h`` or a YAML number of seconds -> seconds.

    Every number in a string needs its unit, each unit at most once and in the order h, m, s:
    ``1h30`` is an error (it would otherwise be read as 1 h 30 s or 1 h 30 min, depending on whom
    you ask), and so is a bare ``"90"``. ``None`` stays None. The result is finite, positive and
    at most :data:`MAX_DURATION_S`.
    """
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value):  # YAML's .nan and .inf: no bound check would catch them
            raise ConfigError(source, key, f"must be a finite number, got {value!r}")
        if value <= 0:
            raise ConfigError(source, key, "must be positive")
        return _at_most_a_year(float(value), value, source, key)
    text = re.sub(r"\s+", "", str(value).lower())
    whole = _DURATION.fullmatch(text)
    parts = [(n, u) for n, u in zip(whole.groups(), "hms") if n is not None] if whole else []
    if not parts:
        hint = ""
        m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)h([0-9]+)", text)
        iso = _ISO_DURATION.fullmatch(text)
        ascii_text = "".join(str(int(c)) if c.isdecimal() else c for c in text)  # int("８") is 8
        if ascii_text != text and _DURATION.fullmatch(ascii_text) and ascii_text:
            hint = f" (write the digits in ASCII: {ascii_text})"
        elif m:
            hint = f" (write {m.group(1)}h{m.group(2)}m for {m.group(2)} minutes)"
        elif iso and any(iso.groups()):  # ISO 8601 (Kubernetes, Java, .NET write PT8H): say it in our units
            days, hours, minutes, secs = (Decimal(n or 0) for n in iso.groups())
            seconds = days * 86400 + hours * 3600 + minutes * 60 + secs
            if seconds == 0:
                raise ConfigError(source, key, "must be positive")
            _at_most_a_year(float(seconds), value, source, key)  # no hint the next try refuses
            hint = f" (an ISO 8601 duration: write {_written(seconds)})"
        elif re.fullmatch(r"[0-9]+(?:\.[0-9]+)?d", text):  # days: no unit here, but say how to write them
            days = Decimal(text[:-1])
            if days == 0:
                raise ConfigError(source, key, "must be positive")
            _at_most_a_year(float(days * 86400), value, source, key)
            hint = f" (write {_plain(days * 24)}h for {_plain(days)} day{'' if days == 1 else 's'})"
        elif re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", text):
            if float(text) == 0:  # no unit makes it one: say what is wrong, not "add a unit"
                raise ConfigError(source, key, "must be positive")
            hint = f" (give a unit: {text}s, {text}m or {text}h)"
        raise ConfigError(source, key, f"expected a duration with a unit on every number, such as 8h, 45m, "
                          f"90s or 1h30m, got {value!r}{hint}")
    seconds = sum(float(n) * _DURATION_UNITS[u] for n, u in parts)
    if seconds <= 0:
        raise ConfigError(source, key, "must be positive")
    return _at_most_a_year(seconds, value, source, key)


def _written(seconds: Decimal) -> str:
    """``seconds`` as :func:`parse_duration` reads it: ``26h``, ``1h30m``, ``90.5s``."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = ((hours, "h"), (minutes, "m"), (secs, "s"))
    return "".join(f"{_plain(n)}{unit}" for n, unit in parts if n) or "0s"


def _plain(number: Decimal) -> str:
    """``number`` in the digits :func:`parse_duration` reads (``0.0000001``, ``8784``), exactly: never
    an exponent (QA, qa174: ``PT0.0000001S`` was told to write ``1e-07s``, which is refused)."""
    text = format(number, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _at_most_a_year(seconds: float, value: Any, source: str, key: str) -> float:
    if seconds > MAX_DURATION_S:
        raise ConfigError(source, key, f"{value!r} is longer than a year (the most a study may give: "
                                       "366 days); check the unit")
    return seconds


def _duration_checked(value: Any) -> Any:
    """A field validator's check of a duration: ``value`` unchanged, or the expected forms."""
    try:
        parse_duration(value)
    except ConfigError as exc:
        raise ValueError(exc.message) from None  # pydantic names the key
    return value


def seconds_only(value: Any) -> Any:
    """A ``*_s`` / ``*_seconds`` key's check before its type's (a YAML number of seconds): a duration
    with a unit (``20m``, ``1h``), which the budget and trial timeouts take, is refused saying the
    number of seconds to write (QA: ``startup_timeout_s: 20m`` said only "input should be a valid
    number, got '20m'"). Anything else is left to the type's own check."""
    if isinstance(value, str) and re.search(r"[hms]", value.lower()):
        try:
            seconds = parse_duration(value)
        except ConfigError:
            return value
        raise ValueError(f"takes a YAML number of seconds, not a duration with a unit: write {seconds:g} "
                         f"for {value!r}")
    return value
