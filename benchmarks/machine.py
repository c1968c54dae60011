"""What the machine was doing while a benchmark ran: timing figures on a shared 2-core machine
mean little without the load next to them.

    from machine import load_line
    print(load_line("before"))   # "load average before: 0.84 0.97 1.12 (1, 5, 15 min), 2 cores"
"""

from __future__ import annotations

import os


def load_line(when: str) -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {when}: {one:.2f} {five:.2f} {fifteen:.2f} (1, 5, 15 min), {os.cpu_count()} cores"
