"""The GPU generation, as SGLang's platform checks see it.

SGLang asks the device's compute capability (``python/sglang/srt/utils/common.py``,
``_check_cuda_device_version``: ``get_device_sm() // 10`` against a list of majors, plus a minimum
CUDA version) and names the answers ``is_hopper_with_cuda_12_3`` (major 9), ``is_sm100_supported``
(major 10), ``is_blackwell_supported`` (10, 11, 12), ``is_sm120_supported`` (12), read through
``srt/runtime_context.py`` (``get_platform()``). SGLang 0.5.23 is built for CUDA 13
(``flashinfer_python[cu13]``, ``cuda-python>=13``), so the CUDA-version half of those checks holds on
any node it runs on, and only the capability decides.

The capability comes from ``nvidia-smi --query-gpu=compute_cap`` (:mod:`tuner.server.gpus`), a
study key, or a simulator profile; this module only interprets it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAMES = {7: "Volta/Turing", 8: "Ampere/Ada", 9: "Hopper", 10: "Blackwell (datacenter)",
          11: "Blackwell (Thor)", 12: "Blackwell (RTX/GB10)"}


@dataclass(frozen=True)
class GpuArch:
    """A GPU generation by compute capability (``major``, ``minor``); ``source`` says who said so."""

    major: int
    minor: int
    source: str = ""

    @classmethod
    def parse(cls, text: str, source: str = "") -> "GpuArch":
        """``"9.0"``, ``"sm90"``, ``"sm_100"`` or ``"10.0"``; raises ValueError for anything else."""
        t = str(text).strip().lower()
        m = re.fullmatch(r"(\d+)\.(\d+)", t)
        if m:
            return cls(int(m.group(1)), int(m.group(2)), source)
        m = re.fullmatch(r"sm_?(\d+)", t)
        if m:
            digits = m.group(1)
            return cls(int(digits[:-1]), int(digits[-1]), source)
        raise ValueError(f"{text!r} is not a compute capability; write e.g. 9.0 (Hopper) or 10.0 "
                         f"(Blackwell), or sm90 / sm100")

    @property
    def sm(self) -> int:
        return self.major * 10 + self.minor

    @property
    def is_hopper(self) -> bool:  # utils/common.py: is_hopper_with_cuda_12_3 (majors [9])
        return self.major == 9

    @property
    def is_sm100(self) -> bool:  # utils/common.py: is_sm100_supported (majors [10])
        return self.major == 10

    @property
    def is_blackwell(self) -> bool:  # utils/common.py: is_blackwell_supported (majors [10, 11, 12])
        return self.major in (10, 11, 12)

    @property
    def name(self) -> str:
        return f"sm{self.sm} ({_NAMES.get(self.major, 'unknown generation')})"

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"
