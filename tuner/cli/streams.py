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
