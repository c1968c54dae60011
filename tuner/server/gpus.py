"""GPU memory from ``nvidia-smi``: what an SGLang launch waits on before it starts (its GPUs free of
other processes' memory) and after it stops (its memory released), on the server's own GPUs.
Also what a server's GPUs are (:func:`server_gpu_facts`), which a study's baseline records so that a
worker on other GPUs is refused (:mod:`tuner.engine.baseline`).

Absent or failing ``nvidia-smi`` (the simulator, a CPU machine) means "unknown", never an error.

Why one module of over 400 lines: every reading of nvidia-smi's answers (memory, the inventory, the
UUIDs, MIG instances, the topology) and of the ``CUDA_VISIBLE_DEVICES`` entries they serve keeps one
contract -- one bounded run, the driver's warnings dropped, "unknown" for anything else -- and the
entries are read once for the launcher, the lock, the doctor and the baseline's facts alike; split,
each part would restate that reading.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import time
from typing import Callable, Mapping, Sequence

from .bounded_run import run_bounded

log = logging.getLogger("tuner.server")

NVIDIA_SMI = "nvidia-smi"
#: Seconds one nvidia-smi query may take (a wedged GPU can hold it in the kernel: bounded_run).
NVIDIA_SMI_TIMEOUT_S = 30.0


#: nvidia-smi's exit status for a GPU whose infoROM is corrupted (nvidia-smi(1), RETURN VALUE: "14
#: infoROM is corrupted"): a warning of the board's firmware store; the answer that follows is whole.
INFOROM_CORRUPTED = 14
#: The driver's warnings already logged by this process.
_WARNED: set[str] = set()


def _run(nvidia_smi: str, args: list[str], *, warn_exit: bool = False) -> str | None:
    """``nvidia-smi ARGS``'s output, without the ``WARNING: ...`` lines the driver prints before it
    (logged); None where it is absent, fails to run (logged) or exits non-zero (logged with
    ``warn_exit``), except :data:`INFOROM_CORRUPTED`, whose answer is read. Never raises.
    QA (qa167): a node with one corrupted infoROM (``WARNING: infoROM is corrupted at gpu
    0000:01:00.0``, exit 14) read as no nvidia-smi: no wait for GPU memory before or after a launch,
    no hardware recorded with the baseline, nothing compared by the study's other workers."""
    exe = shutil.which(nvidia_smi)
    if exe is None:
        return None
    try:
        out = run_bounded([exe, *args], NVIDIA_SMI_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("nvidia-smi %s failed: %s", " ".join(args), exc)
        return None
    if out.returncode not in (0, INFOROM_CORRUPTED):
        if warn_exit:
            log.warning("nvidia-smi exited %d: %s", out.returncode, out.stderr.strip()[:200])
        return None
    lines = out.stdout.splitlines(keepends=True)
    warnings = [line.strip() for line in lines if line.startswith("WARNING:")]
    for warning in warnings:
        if warning not in _WARNED:  # once: the waits ask every second
            _WARNED.add(warning)
            log.warning("nvidia-smi: %s", warning)
    text = "".join(line for line in lines if not line.startswith("WARNING:")) if warnings else out.stdout
    if (warnings or out.returncode) and not text.strip():
        return None  # the warning alone, no answer: as one that failed (not "no GPU listed")
    return text


def _query(nvidia_smi: str, query: str, *, nounits: bool = True, warn_exit: bool = False) -> str | None:
    """``nvidia-smi --query-gpu=QUERY --format=csv,noheader[,nounits]``'s output (:func:`_run`)."""
    form = "csv,noheader,nounits" if nounits else "csv,noheader"
    return _run(nvidia_smi, [f"--query-gpu={query}", f"--format={form}"], warn_exit=warn_exit)


def gpu_memory_used_mib(nvidia_smi: str = NVIDIA_SMI, only: Sequence[str] | None = None) -> list[int] | None:
    """Memory used on each GPU (MiB) from ``nvidia-smi``; None where it is absent or fails.

    ``only``: just these GPUs, by nvidia-smi index (``"0"``, ``"3"``), in that order: the GPUs of one
    server (:func:`server_gpu_indices`). nvidia-smi lists every GPU of the node whatever
    ``CUDA_VISIBLE_DEVICES`` says, so without ``only`` another tuner's server on the node's other GPUs
    counts too. None when one of them is not listed (the GPUs changed)."""
    if only is None:
        out = _query(nvidia_smi, "memory.used", warn_exit=True)
        if out is None:
            return None
        try:
            return [int(float(x)) for x in out.split()]
        except ValueError:
            log.warning("unexpected nvidia-smi output: %r", out[:200])
            return None
    out = _query(nvidia_smi, "index,memory.used", warn_exit=True)
    if out is None:
        return None
    used: dict[str, int] = {}
    try:
        for line in out.strip().splitlines():
            index, _, mib = (p.strip() for p in line.partition(","))
            used[index] = int(float(mib))
    except ValueError:
        log.warning("unexpected nvidia-smi output: %r", out[:200])
        return None
    if any(i not in used for i in only):
        log.warning("nvidia-smi lists no GPU %s (it lists %s)", ",".join(i for i in only if i not in used),
                    ",".join(used) or "none")
        return None
    return [used[i] for i in only]


def entry_index(entry: str, known: Mapping[str, str] | None) -> str | None:
    """The nvidia-smi index one ``CUDA_VISIBLE_DEVICES`` entry names, or None: an index as the number
    CUDA reads (``00`` is GPU 0), a GPU UUID or a unique prefix of one by ``known`` (UUID -> index,
    :func:`gpu_indices_by_uuid`; CUDA C Programming Guide, "CUDA Environment Variables"). None for an
    entry naming no single GPU here: a MIG id, a UUID matching none or several, ``known`` None. The
    one reading of an entry for the server's GPUs, the doctor's and the GPU lock's."""
    if entry.isdecimal() and entry.isascii():
        return str(int(entry))
    if not entry.startswith("GPU-") or known is None:
        return None
    matches = {index for uuid, index in known.items() if uuid.startswith(entry)}
    return matches.pop() if len(matches) == 1 else None


def server_gpu_indices(gpus: Sequence[str] | None, nvidia_smi: str = NVIDIA_SMI) -> list[str] | None:
    """The nvidia-smi indices of a server's GPUs, ``gpus`` being its ``CUDA_VISIBLE_DEVICES`` entries
    (:func:`tuner.server.gpu_lock.visible_gpus`): an index as written, a GPU UUID (or a unique prefix
    of one) as nvidia-smi's index for it. None (every GPU of the node) when ``gpus`` is None (unset),
    or an entry names no single listed GPU (a MIG instance, a UUID nvidia-smi does not list): what
    cannot be told is watched in full, as before. Same reading of the entries as the GPU lock's."""
    if gpus is None:
        return None
    known: dict[str, str] | None = None
    indices: list[str] = []
    for gpu in gpus:
        if known is None and gpu.startswith("GPU-"):  # nvidia-smi asked only once a UUID is given
            known = gpu_indices_by_uuid(nvidia_smi)
        index = entry_index(gpu, known)
        if index is None:
            return None
        indices.append(index)
    return indices


def cuda_visible(entries: Sequence[str], listed: int, nvidia_smi: str = NVIDIA_SMI
                 ) -> tuple[list[str | None], str | None]:
    """The GPUs CUDA shows a process whose ``CUDA_VISIBLE_DEVICES`` has ``entries``
    (:func:`tuner.server.gpu_lock.visible_gpus`) on a node where nvidia-smi lists ``listed`` GPUs:
    ``(indices, stop)``, each GPU as its nvidia-smi index (None for a MIG id, or a UUID when
    nvidia-smi does not say which index it is), in the order CUDA numbers them, and the first entry
    CUDA refused (None when it took them all).

    CUDA's rule (CUDA C Programming Guide, "CUDA Environment Variables"): the devices are those of
    the list, in its order; at the first invalid entry it stops, and the ones before it are all the
    process sees (``0,2,-1,1`` is devices 0 and 2; ``-1`` and an empty value are none). Invalid here:
    an index nvidia-smi does not list, a UUID (or prefix) matching no single listed GPU, a GPU named
    a second time, anything else that is neither an index, a ``GPU-`` UUID nor a ``MIG-`` id."""
    indices: list[str | None] = []
    known: dict[str, str] | None = None
    asked = False
    for gpu in entries:
        if gpu.startswith("GPU-") and not asked:
            known, asked = gpu_indices_by_uuid(nvidia_smi), True
        index = entry_index(gpu, known)
        if index is not None and int(index) < listed:
            indices.append(index)
        elif gpu.startswith("MIG-") or (gpu.startswith("GPU-") and known is None):
            indices.append(None)  # a GPU CUDA shows whose index nvidia-smi does not tell
            continue
        else:  # an index nvidia-smi does not list, a UUID naming no single GPU, anything else
            return indices, gpu
        if indices[-1] is not None and indices[-1] in indices[:-1]:
            return indices[:-1], gpu
    return indices, None


def too_few_gpus(seen: int, listed: int, tp: int, visible: Sequence[str] | None, stop: str | None,
                 server_env: Mapping[str, str]) -> str:
    """The line for a server shown ``seen`` GPUs (:func:`cuda_visible` of ``visible``, its
    CUDA_VISIBLE_DEVICES entries; None: unset, every one of the node's ``listed``) for ``tp`` ranks."""
    if visible is None:
        return f"{seen} GPU(s) visible, tp_size is {tp}: lower server.tp_size or check CUDA_VISIBLE_DEVICES"
    where = "server.env's" if "CUDA_VISIBLE_DEVICES" in server_env else "this shell's"
    why = f"; CUDA ignores {stop!r} and all after it: no GPU nvidia-smi lists, or one named twice" if stop else ""
    return (f"{seen} GPU(s) visible to the server, of the node's {listed} (CUDA_VISIBLE_DEVICES="
            f"{','.join(visible)!r}, {where}{why}), tp_size is {tp}: lower server.tp_size or give "
            f"server.env.CUDA_VISIBLE_DEVICES {tp} GPUs")


def wait_gpu_memory_released(before_mib: list[int] | None, timeout_s: float, *,
                             tolerance_mib: int = 1024, nvidia_smi: str = NVIDIA_SMI,
                             only: Sequence[str] | None = None) -> bool | None:
    """Wait until every GPU uses at most what it used before the launch (+ ``tolerance_mib``).
    ``only``: just these GPUs (nvidia-smi indices, the order of ``before_mib``); None: every GPU.

    None (and a log line) where nvidia-smi is absent; False when the deadline passes first.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        now = gpu_memory_used_mib(nvidia_smi, only)
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


#: A GPU using more than this before a launch holds another process's memory (an idle GPU uses a few
#: MiB; the stop's tolerance is the same 1 GiB).
GPU_FREE_MIB = 1024


def wait_gpus_free(only: Sequence[str] | None, timeout_s: float, *, nvidia_smi: str = NVIDIA_SMI,
                   free_mib: int = GPU_FREE_MIB, poll_s: float = 1.0,
                   on_wait: Callable[[list[int]], None] | None = None) -> tuple[bool | None, list[int] | None]:
    """Wait until each GPU of ``only`` (nvidia-smi indices; None: every GPU) uses at most ``free_mib``.
    ``(True, used)`` once they do, ``(False, used)`` at the deadline, ``(None, None)`` where nvidia-smi
    is absent or fails (nothing to wait for). ``on_wait(used)`` is called once, when the first look
    finds one busy. Interruptible (a signal handler's exception goes through ``time.sleep``)."""
    deadline = time.monotonic() + timeout_s
    said = False
    while True:
        used = gpu_memory_used_mib(nvidia_smi, only)
        if used is None:
            return None, None
        if all(u <= free_mib for u in used):
            return True, used
        if time.monotonic() >= deadline:
            return False, used
        if not said and on_wait is not None:
            on_wait(used)
        said = True
        time.sleep(poll_s)


def gpu_inventory(nvidia_smi: str = NVIDIA_SMI) -> list[dict] | None:
    """Each GPU's ``name``, ``compute_cap`` (e.g. ``"9.0"``, always one :class:`GpuArch` reads),
    ``memory_total_mib`` and ``memory_free_mib`` from ``nvidia-smi``; None where it is absent, fails
    or answers something else, a field ``[N/A]`` or ``[Not Supported]`` included (never raises).
    QA (qa128): a compute capability of ``[N/A]`` was handed on, and ``tuner doctor``, ``study
    create`` and ``study run`` ended in GpuArch's ValueError traceback."""
    from ..sglang.hardware import GpuArch

    out = _query(nvidia_smi, "name,compute_cap,memory.total,memory.free")
    if out is None:
        return None
    gpus = []
    for line in out.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 4:
            return None
        try:
            GpuArch.parse(parts[1])
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


#: SGLang arguments that put a server's ranks elsewhere than on the first ``tp_size`` GPUs it is shown
#: (arg_groups/fields/device.py ``base_gpu_id``/``gpu_id_step``, parallel.py ``pp_size``/``dp_size``/
#: ``nnodes``): with one of them the server's GPUs are every one it is shown, as the launcher reads
#: them (tuner.server.launcher, ``moved``).
MOVED_GPU_ARGS = frozenset({"base_gpu_id", "gpu_id_step", "pp_size", "dp_size", "nnodes"})


def numbered_as_listed(env: Mapping[str, str] | None = None) -> bool:
    """Whether CUDA numbers the GPUs of a process started with ``env`` (added to this process's
    environment) as nvidia-smi's index does: with ``CUDA_DEVICE_ORDER=PCI_BUS_ID``. CUDA's default,
    ``FASTEST_FIRST``, puts the fastest GPU first (CUDA C Programming Guide, "CUDA Environment
    Variables"; SGLang and PyTorch leave it as it is): on a node mixing GPU models, CUDA's device 0
    (``CUDA_VISIBLE_DEVICES=0``, or unset) need not be nvidia-smi's GPU 0."""
    import os

    order = (env or {}).get("CUDA_DEVICE_ORDER", os.environ.get("CUDA_DEVICE_ORDER", "FASTEST_FIRST"))
    return str(order).strip().upper() == "PCI_BUS_ID"


def gpu_models_differ(nvidia_smi: str = NVIDIA_SMI) -> bool | None:
    """Whether ``nvidia-smi`` lists GPUs of more than one model (name or compute capability): where
    CUDA's default order (``FASTEST_FIRST``, :func:`numbered_as_listed`) may number them otherwise
    than nvidia-smi's index. None where it is absent, fails or answers something else."""
    out = _query(nvidia_smi, "name,compute_cap")
    if out is None:
        return None
    models = set()
    for line in out.strip().splitlines():
        name, sep, cap = line.rpartition(",")  # a name holding a comma stays whole: the capability last
        if not sep:
            return None
        models.add((name.strip(), cap.strip()))
    return len(models) > 1


def indices_unplaced(entries: Sequence[str] | None, env: Mapping[str, str] | None = None,
                     nvidia_smi: str = NVIDIA_SMI) -> bool:
    """Whether a server shown ``entries`` (its ``CUDA_VISIBLE_DEVICES`` entries; None: unset, GPUs 0
    up) with ``env`` names GPUs by an index nvidia-smi's index cannot be taken for: some entry is an
    index (or none is set), CUDA numbers them in its default order (:func:`numbered_as_listed`), and
    the node mixes GPU models (:func:`gpu_models_differ`), so CUDA's device 0 may be nvidia-smi's 1."""
    by_index = entries is None or any(entry_index(gpu, None) is not None for gpu in entries)
    return by_index and not numbered_as_listed(env) and bool(gpu_models_differ(nvidia_smi))


def server_gpu_facts(visible: Sequence[str] | None, tp_ranks: int | None,
                     nvidia_smi: str = NVIDIA_SMI, *, numbered: bool = True) -> dict | None:
    """What ``nvidia-smi`` says of the GPUs a server shown ``visible`` runs on (its
    ``CUDA_VISIBLE_DEVICES`` entries, :func:`tuner.server.gpu_lock.visible_gpus`; None: unset):
    ``name`` (the distinct names, `` + ``-joined, as nvidia-smi prints them: ``NVIDIA H100 80GB
    HBM3``), ``count``, ``memory_total_mib`` (the least of them) and ``compute_cap`` (distinct, joined
    likewise).

    Its GPUs: the first ``tp_ranks`` of ``visible``, or of the node's when unset (SGLang's TP ranks
    sit on the visible GPUs 0 up); ``tp_ranks`` None: every GPU it is shown (:data:`MOVED_GPU_ARGS`).
    None, never an error, where that cannot be told: nvidia-smi absent, failing or answering
    something else, a GPU it does not list, a MIG instance (its share of a GPU is not in these
    fields). The same reading of the entries as the launcher's.

    A MIG instance (``MIG-...``) is its whole GPU's row named with its profile, as ``nvidia-smi -L``
    lists it (``NVIDIA A100-SXM4-80GB MIG 3g.40gb``), its capability the GPU's, no memory (the
    profile's share is no ``memory.total``; :func:`mig_instances`); None where ``-L`` does not place
    it. QA (qa167): a server on a MIG instance recorded nothing, so a worker on a 1g.10gb slice
    joined a study whose baseline ran on whole GPUs, and one on whole GPUs joined a slice's, each
    judged against the other's baseline.

    ``numbered``: whether CUDA numbers the GPUs as nvidia-smi does (:func:`numbered_as_listed`). When
    it does not, on a node of GPUs that differ, GPUs named by index (or unset) cannot be placed: None,
    unless they are every GPU of the node (QA, qa174: on an A100 + H100 node under CUDA's default
    order, ``CUDA_VISIBLE_DEVICES=0`` recorded the A100 while the server ran on the H100)."""
    from ..sglang.hardware import GpuArch

    out = _query(nvidia_smi, "index,name,compute_cap,memory.total")
    if out is None:
        return None
    listed: dict[str, tuple[str, str, int]] = {}
    for line in out.strip().splitlines():
        raw = line.split(",")
        parts = [p.strip() for p in raw]
        if len(parts) < 4 or not parts[0].isdigit():
            return None
        # a name holding a comma stays whole: index first, the capability and memory last
        try:
            GpuArch.parse(parts[-2])
            listed[parts[0]] = (",".join(raw[1:-2]).strip(), parts[-2], int(float(parts[-1])))
        except ValueError:  # [N/A], [Not Supported]
            return None
    shown = None if visible is None else list(visible[:tp_ranks] if tp_ranks else visible)
    by_index = shown is None or any(entry_index(gpu, {}) is not None for gpu in shown)
    whole_node = (len(shown) if shown is not None else tp_ranks or len(listed)) >= len(listed)
    if not numbered and by_index and not whole_node and len({r[:2] for r in listed.values()}) > 1:
        return None  # CUDA's device N need not be nvidia-smi's GPU N here: which GPUs cannot be told
    migs = [gpu for gpu in shown or () if gpu.startswith("MIG-")]
    if migs:
        rows = _mig_rows(shown, listed, nvidia_smi)
        if rows is None:
            return None
        memory = [r[2] for r in rows if r[2] is not None]
        facts = {"name": " + ".join(sorted({r[0] for r in rows})), "count": len(rows),
                 "compute_cap": " + ".join(sorted({r[1] for r in rows}))}
        if len(memory) == len(rows):
            facts["memory_total_mib"] = min(memory)
        return facts
    if shown is None:
        indices = [str(i) for i in range(tp_ranks)] if tp_ranks else sorted(listed, key=int)
    else:
        indices = server_gpu_indices(shown, nvidia_smi)
    if not indices or any(i not in listed for i in indices):
        return None
    rows = [listed[i] for i in indices]
    facts = {"name": " + ".join(sorted({r[0] for r in rows})), "count": len(rows),
             "memory_total_mib": min(r[2] for r in rows), "compute_cap": " + ".join(sorted({r[1] for r in rows}))}
    link = interconnect(indices, nvidia_smi) if len(indices) > 1 else None
    if link is not None:
        facts["interconnect"] = link
    return facts


def _mig_rows(entries: Sequence[str], listed: Mapping[str, tuple[str, str, int]],
              nvidia_smi: str) -> list[tuple[str, str, int | None]] | None:
    """(name, capability, memory or None) of each of ``entries``, MIG instances among them (see
    :func:`server_gpu_facts`); None when one cannot be placed."""
    instances = mig_instances(nvidia_smi)
    plain = [gpu for gpu in entries if not gpu.startswith("MIG-")]
    indices = server_gpu_indices(plain, nvidia_smi) if plain else []
    if instances is None or indices is None:
        return None
    rows: list[tuple[str, str, int | None]] = []
    for gpu in entries:
        if not gpu.startswith("MIG-"):
            index = indices.pop(0)
            if index not in listed:
                return None
            rows.append(listed[index])
            continue
        found = {where for uuid, where in instances.items() if uuid.startswith(gpu)}
        if len(found) != 1:
            return None
        index, profile = found.pop()
        if index not in listed:
            return None
        name, cap, _ = listed[index]
        rows.append((f"{name} MIG {profile}", cap, None))
    return rows


def mig_instances(nvidia_smi: str = NVIDIA_SMI) -> dict[str, tuple[str, str]] | None:
    """Each MIG instance's UUID -> (its GPU's index, its profile: ``3g.40gb``) from ``nvidia-smi -L``
    (``GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-...)``, then one indented ``MIG 3g.40gb Device 0:
    (UUID: MIG-...)`` line per instance; older drivers' ``MIG-GPU-.../1/0`` ids alike); None where
    it is absent or fails (never raises)."""
    import re

    out = _run(nvidia_smi, ["-L"])
    if out is None:
        return None
    found: dict[str, tuple[str, str]] = {}
    index = None
    for line in out.splitlines():
        gpu = re.match(r"GPU (\d+): .*\(UUID: GPU-[^)]*\)", line)
        if gpu:
            index = gpu.group(1)
            continue
        mig = re.match(r"\s+MIG (\S+)\s+Device\s+\d+: \(UUID: (MIG-[^)\s]+)\)", line)
        if mig and index is not None:
            found[mig.group(2)] = (index, mig.group(1))
    return found


def interconnect(indices: Sequence[str], nvidia_smi: str = NVIDIA_SMI) -> str | None:
    """How the GPUs ``indices`` (nvidia-smi indices, two or more) reach each other, from ``nvidia-smi
    topo -m``'s matrix: ``NVLink`` when every pair is ``NV#``, ``PCIe`` when none is (``PIX``, ``PXB``,
    ``PHB``, ``NODE``, ``SYS``: over PCIe and the CPUs), ``NVLink + PCIe`` for some of each; None where
    it cannot be told (absent, failing, a GPU not in the matrix). The matrix's GPU columns come first,
    one token each, before the NICs and the affinity columns (whose names hold spaces)."""
    import re

    matrix = _run(nvidia_smi, ["topo", "-m"])
    if matrix is None:
        return None
    gpu = re.compile(r"GPU(\d+)$")
    columns: list[str] | None = None
    links: dict[str, list[str]] = {}
    for line in matrix.splitlines():
        line = re.sub(r"\x1b\[[0-9;]*m", "", line)  # a header underlined with terminal escapes
        words = line.split()
        if columns is None and words and gpu.match(words[0]) and not line[:1].strip():
            columns = []
            for word in words:
                if not gpu.match(word):
                    break
                columns.append(gpu.match(word).group(1))
        elif columns is not None and words and gpu.match(words[0]):
            links[gpu.match(words[0]).group(1)] = words[1:1 + len(columns)]
    if columns is None or any(i not in links or i not in columns for i in indices):
        return None
    kinds = set()
    for a in indices:
        for b in indices:
            if a != b:
                if len(links[a]) <= columns.index(b):
                    return None  # a row cut short: not the matrix this reads
                kinds.add("NVLink" if links[a][columns.index(b)].startswith("NV") else "PCIe")
    return " + ".join(sorted(kinds)) or None
