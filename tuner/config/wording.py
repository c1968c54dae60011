"""Words of the lines the tuner prints, shared by every layer that prints them."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` with ``noun`` in its number: ``counted(1, "setting")`` is ``"1 setting"``, 0 or 2 take
    the plural (``noun + "s"`` unless ``plural`` is given)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
