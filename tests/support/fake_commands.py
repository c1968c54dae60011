"""A stand-in command (``nvidia-smi`` and the like) that counts its calls: a Python script written to
``folder/name`` whose body sees ``n``, the number of calls before this one, and ``sys``."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path


def counting_command(folder: Path, name: str, body: str) -> tuple[Path, Path]:
    """Write the script (``body``: its lines after the call count, dedented) and make it executable;
    returns ``(script, counter)``, the counter file holding the number of calls made."""
    counter = folder / f"{name}.calls"
    script = folder / name
    script.write_text(f"#!{sys.executable}\nimport pathlib, sys\np = pathlib.Path({str(counter)!r})\n"
                      "n = int(p.read_text()) if p.exists() else 0\np.write_text(str(n + 1))\n"
                      + textwrap.dedent(body))
    script.chmod(0o755)
    return script, counter
