"""GPU memory from ``nvidia-smi``: what a launch waits on after stopping a server.

Absent or failing ``nvidia-smi`` (the simulator, a CPU machine) means "unknown", never an error.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import time

log = logging.getLogger("tuner.server")

NVIDIA_SMI = "nvidia-smi"


def _query(nvidia_smi: str, query: str, *, nounits: bool = True, warn_exit: bool = False) -> str | None:
    """``nvidia-smi --query-gpu=QUERY --format=csv,noheader[,nounits]``'s output; None where it is
    absent, fails to run (logged) or exits non-zero (logged with ``warn_exit``). Never raises."""
    exe = shutil.which(nvidia_smi)
    if exe is None:
        return None
    form = "csv,noheader,nounits" if nounits else "csv,noheader"
    try:
        out = subprocess.run([exe, f"--query-gpu={query}", f"--format={form}"], capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("nvidia-smi failed: %s", exc)
        return None
    if out.returncode != 0:
        if warn_exit:
            log.warning("nvidia-smi exited %d: %s", out.returncode, out.stderr.strip()[:200])
        return None
    return out.stdout


def gpu_memory_used_mib(nvidia_smi: str = NVIDIA_SMI) -> list[int] | None:
    """Memory used on each GPU (MiB) from ``nvidia-smi``; None where it is absent or fails."""
    out = _query(nvidia_smi, "memory.used", warn_exit=True)
    if out is None:
        return None
    try:
        return [int(float(x)) for x in out.split()]
    except ValueError:
        log.warning("unexpected nvidia-smi output: %r", out[:200])
        return None


def wait_gpu_memory_released(before_mib: list[int] | None, timeout_s: float, *,
                             tolerance_mib: int = 1024, nvidia_smi: str = NVIDIA_SMI) -> bool | None:
    """Wait until every GPU uses at most what it used before the launch (+ ``tolerance_mib``).

    None (and a log line) where nvidia-smi is absent; False when the deadline passes first.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        now = gpu_memory_used_mib(nvidia_smi)
        if now is None:
            log.info("nvidia-smi not available; not waiting for GPU memory to be released")
            return None
        base = before_mib if before_mib and len(before_mib) == len(now) else [0] * len(now)
        limit = [b + tolerance_mib for b in base]
        if all(used <= lim for used, lim in zip(now, limit)):
            return True
        if time.monotonic() >= deadline:
            log.warning("GPU memory not released after %.0f s: %s MiB used (before launch: %s)",
                        timeout_s, now, before_mib)
            return False
        time.sleep(1.0)


def gpu_inventory(nvidia_smi: str = NVIDIA_SMI) -> list[dict] | None:
    """Each GPU's ``name``, ``compute_cap`` (e.g. ``"9.0"``), ``memory_total_mib`` and
    ``memory_free_mib`` from ``nvidia-smi``; None where it is absent or fails (never raises)."""
    out = _query(nvidia_smi, "name,compute_cap,memory.total,memory.free")
    if out is None:
        return None
    gpus = []
    for line in out.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 4:
            return None
        try:
            gpus.append({"name": parts[0], "compute_cap": parts[1], "memory_total_mib": int(float(parts[2])),
                         "memory_free_mib": int(float(parts[3]))})
        except ValueError:
            return None
    return gpus


def gpu_indices_by_uuid(nvidia_smi: str = NVIDIA_SMI) -> dict[str, str] | None:
    """Each GPU's UUID (``GPU-8f3c...``) -> its index (``"0"``) from ``nvidia-smi --query-gpu=
    index,uuid``; None where it is absent, fails or answers something else (never raises)."""
    out = _query(nvidia_smi, "index,uuid", nounits=False)
    if out is None:
        return None
    found = {}
    for line in out.strip().splitlines():
        index, _, uuid = (p.strip() for p in line.partition(","))
        if not index.isdigit() or not uuid.startswith("GPU-"):
            log.warning("unexpected nvidia-smi output: %r", out[:200])
            return None
        found[uuid] = index
    return found or None
