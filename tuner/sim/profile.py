"""Simulator profiles: one YAML file per (model, GPUs, interconnect) the performance model can play.

A profile is data: the shipped ones live in ``tuner/sim/profiles/*.yaml`` and any other file can be
given by path (``--sim-profile FILE``). Every key carries its unit in its name and is documented in
the shipped files; :func:`load_profile` validates a file strictly (unknown keys, wrong types and
out-of-range values raise :class:`tuner.config.yamlfile.ConfigError` naming the file and the key).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from .. import shipped
from ..config.paths import is_bare_name
from ..config.names import name_problem
from ..config.yamlfile import ConfigError, StrictModel, did_you_mean, load_model

PROFILES_DIR = shipped(__package__, "profiles")

Positive = Field(gt=0)
NonNegative = Field(ge=0)


class ModelSpec(StrictModel):
    """The served (target) model: what one forward pass reads, computes and all-reduces."""

    hf_model: str = ""
    #: what the model's config.json would say: architectures[0] and SGLang's attention kind for it
    #: (model_config.py); the rules read them as they read a real config.json
    architecture: str = ""
    attention: Literal["mla", "mha"] = "mha"
    layers: int = Positive
    moe_layers: int = NonNegative
    hidden_size: int = Positive
    num_experts: int = NonNegative
    experts_per_token: int = NonNegative
    expert_mb: float = NonNegative
    dense_layer_mb: float = Positive
    lm_head_mb: float = NonNegative
    active_params_b: float = Positive
    total_weights_gb: float = Positive
    kv_kb_per_token: float = Positive
    activation_bytes: int = Positive

    @model_validator(mode="after")
    def _moe_consistent(self):
        if self.moe_layers > self.layers:
            raise ValueError(f"moe_layers ({self.moe_layers}) must not exceed layers ({self.layers})")
        if self.moe_layers and not 0 < self.experts_per_token <= self.num_experts:
            raise ValueError("a MoE model needs 0 < experts_per_token <= num_experts")
        return self


class DraftSpec(StrictModel):
    """The EAGLE-3 draft head: one (or a few) decoder layers plus its own LM head."""

    architecture: str = ""
    attention: Literal["mla", "mha"] = "mha"
    layers: int = Positive
    layer_mb: float = Positive
    lm_head_mb: float = NonNegative
    active_params_b: float = Positive


class HardwareSpec(StrictModel):
    """GPUs and the interconnect between them (effective, achieved figures, not datasheet peaks)."""

    tp_size: int = Positive
    #: the simulated GPUs' compute capability (what nvidia-smi --query-gpu=compute_cap would print)
    compute_capability: str = "9.0"
    gpu_memory_gb: float = Positive
    hbm_bandwidth_gb_per_s: float = Positive
    compute_tflops: float = Positive
    allreduce_latency_us: float = NonNegative
    allreduce_bus_bandwidth_gb_per_s: float = Positive
    allreduce_latency_bound_kb: float = NonNegative

    @field_validator("compute_capability", mode="before")
    @classmethod
    def _capability(cls, v):
        from ..sglang.hardware import GpuArch

        GpuArch.parse(str(v))
        return str(v)


class RuntimeSpec(StrictModel):
    """Serving-engine costs that are not weights, FLOPs or collectives."""

    layer_floor_us: float = NonNegative
    forward_overhead_ms: float = NonNegative
    draft_forward_overhead_ms: float = NonNegative
    spec_step_overhead_ms: float = NonNegative
    eager_layer_overhead_us: float = NonNegative
    default_cuda_graph_max_bs: int = Positive
    default_mem_fraction_static: float = Field(gt=0, le=1)
    workspace_mb: float = NonNegative
    workspace_kb_per_draft_token: float = NonNegative
    default_context_tokens: int = Positive
    context_length_tokens: int = Positive
    #: characters a prompt token, outside the CJK scripts (a token a character there):
    #: :meth:`tuner.sim.model.PerfModel.prompt_tokens`
    chars_per_token: float = Positive
    #: modelled seconds from launch to ready (weights read, CUDA graphs captured): the load cost of
    #: every measurement under ``server.backend: model``; None: the backend's default. The simulated
    #: server's own start-up is ``--sim-load-seconds`` (wall seconds) instead.
    load_s: float | None = Field(None, ge=0)


class AcceptanceSpec(StrictModel):
    """How often the target model agrees with the draft head (see the README, "The simulator's performance model")."""

    alpha_low: float = Field(gt=0, lt=1)
    alpha_high: float = Field(gt=0, lt=1)
    depth_decay: float = Field(gt=0, le=1)
    alternative_share: float = Field(gt=0, lt=1)

    @model_validator(mode="after")
    def _ordered(self):
        if self.alpha_low > self.alpha_high:
            raise ValueError(f"alpha_low ({self.alpha_low}) must not exceed alpha_high ({self.alpha_high})")
        return self


class Profile(StrictModel):
    """One simulator profile file (``tuner/sim/profiles/*.yaml``)."""

    name: str = Field(min_length=1)
    description: str = ""
    model: ModelSpec
    draft: DraftSpec
    hardware: HardwareSpec
    runtime: RuntimeSpec
    acceptance: AcceptanceSpec

    @field_validator("name")
    @classmethod
    def _one_line(cls, name: str) -> str:
        # the name heads tables and names the landscape table written from the profile, which
        # refuses a control character (tuner.config.landscape): refuse it here, naming this file
        problem = name_problem(name)
        if problem is not None:
            raise ValueError(problem)
        return name

    def target_facts(self):
        """The served model's :class:`tuner.sglang.model.ModelFacts`, as its config.json would give."""
        from ..sglang.model import ModelFacts

        return ModelFacts(self.model.architecture or None, self.model.attention, f"simulator profile {self.name}")

    def draft_facts(self):
        from ..sglang.model import ModelFacts

        return ModelFacts(self.draft.architecture or None, self.draft.attention, f"simulator profile {self.name}")

    def gpu(self):
        """The simulated GPUs' :class:`tuner.sglang.hardware.GpuArch`."""
        from ..sglang.hardware import GpuArch

        return GpuArch.parse(self.hardware.compute_capability, f"simulator profile {self.name}")


def list_profiles() -> list[str]:
    """Names of the shipped profiles (file stems in ``tuner/sim/profiles``), sorted."""
    return sorted(p.stem for p in PROFILES_DIR.glob("*.yaml"))


def profile_path(name_or_path: str | Path) -> Path:
    """The file a profile name or path refers to; a shipped name wins over a relative path."""
    text = str(name_or_path)
    shipped = PROFILES_DIR / f"{text}.yaml"
    if is_bare_name(text) and shipped.is_file():
        return shipped
    path = Path(text)
    from ..config.files import check_usable

    check_usable(path)  # pathlib's is_file() would raise (QA: a 300-byte name, a traceback)
    if path.is_file():
        return path
    if path.is_dir():  # there, but no file: "file not found" would send the user looking for it
        raise ConfigError(path, "", "is a folder; give a file")
    if path.exists():  # a device or pipe (/dev/null): there, but "file not found" would mislead (QA)
        from ..config.yamlfile import check_regular_file

        check_regular_file(path)
    if is_bare_name(text):
        raise ConfigError(text, "", f"no such simulator profile{did_you_mean(text, list_profiles())}; shipped: "
                          f"{', '.join(list_profiles())}, or give a path to a YAML file")
    raise ConfigError(path, "", "file not found; check the path")


def load_profile(name_or_path: str | Path) -> Profile:
    """A shipped profile by name (``k2.6-tp8-pcie``) or any profile file by path.

    Raises :class:`ConfigError` (``FILE: KEY: message``) for a missing file, bad YAML, an unknown or
    missing key, a wrong type or an out-of-range value.
    """
    path = profile_path(name_or_path)
    # One run loads the same profile 8-10 times (preflight, facts, the study's stored copy, each
    # backend; QA qa227): each after the first comes from a cache keyed by the name as given (an
    # error names the file so) and the file's identity and state on disk (device, inode, size, mtime
    # in ns), never by its name alone: a file edited, replaced or renamed over is read again. The
    # stat comes before the read, so what is cached is at least as new as its key. Errors are not
    # cached (lru_cache keeps returns only); a Profile is frozen all through (StrictModel): shared safely.
    try:
        st = os.stat(path)
    except OSError:  # gone since profile_path looked: load_model says so, naming the file
        return load_model(Profile, path)
    return _load_profile_file(str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=32)
def _load_profile_file(path: str, dev: int, ino: int, size: int, mtime_ns: int) -> Profile:
    """:func:`load_model` of one profile file; the other arguments are its cache key only."""
    return load_model(Profile, Path(path))
