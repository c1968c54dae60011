"""The server layer: start, watch and stop one server process per measurement, safely.

Owns the exact command and its pins (``command``), the launch and shutdown of one process group
(``launcher``), process identity and groups (``procs``), ports, server records and orphan cleanup
(``orphans``), GPU memory (``gpus``), the host-wide lock on a real server's GPUs (``gpu_lock``),
and the classification of a failed launch (``failures``).
Knows SGLang and the simulator only as a command line and an HTTP health check.

May import: :mod:`tuner.config`, :mod:`tuner.sglang`. Never its peers :mod:`tuner.bench` and
:mod:`tuner.sim`, nor anything above.
"""
