"""What SGLang 0.5.23 refuses for hybrid models (mamba / linear attention: LFM2, Qwen3-Next, Qwen3.5,
Nemotron-H, Falcon-H1, Kimi Linear, ...) while it handles the arguments: their radix cache.

``arg_groups/model_hook.py``, ``handle_mamba_radix_cache`` (line 1048, called from
``handle_model_specific_adjustments`` at line 737, after the model-specific backend checks and
before the attention and speculative hooks), with or without speculation, so a study's baseline
fails alike:

* ``arg_groups/overrides.py``, ``_mamba_radix_cache_resolution`` (line 455): for the architectures of
  ``_MAMBA_RADIX_CACHE_ARCHS`` with the radix cache on, strategy ``auto`` becomes ``extra_buffer``
  when the overlap schedule is on or the page size given is over 1 and the model takes an extra
  buffer (``supports_mamba_cache_extra_buffer``: ``_MAMBA_EXTRA_BUFFER_ARCHS`` on the triton
  linear-attention backend), else ``no_buffer`` (which turns the overlap schedule off);
* ``arg_groups/mamba_hook.py``, ``validate_mamba_no_buffer`` (lines 156-163): page size 1 only,
  the overlap schedule off, not trtllm_mha; ``validate_mamba_extra_buffer`` (lines 115-136): a model
  that takes an extra buffer, draft tokens (as given) at most ``--mamba-track-interval`` and a page
  size that divides it (bare asserts);
* ``model_hook.py`` line 1062: an extra-buffer strategy on a model without mamba state.

Every value is read as given (these checks run before SGLang's attention hook picks a backend), but
for the page size a model override has already set: with no attention backend given, a Qwen3.5
hybrid on SM100 runs 64 on trtllm_mha, else 1 on triton (``model_overrides/qwen3_5.py``), and the
check reads that (:func:`tuner.sim.args._model_override_page_size`). Not mirrored: ``mamba_cache_chunk_size``'s divisibility assert (overrides.py line 1919;
it needs the config's ``mamba_chunk_size``, and a page size that divides the track interval passes
it for the default interval), GraniteMoeHybrid (a mamba model only when its config's
``layer_types`` say so) and models registered through ``configs/linear_attn_model_registry.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

#: overrides.py lines 369-399, ``_MAMBA_RADIX_CACHE_ARCHS``: the hybrid models whose radix cache
#: keeps mamba states (GraniteMoeHybridForCausalLM left out: see the module doc).
MAMBA_RADIX_CACHE_ARCHS = frozenset({
    "KimiLinearForCausalLM", "KimiK3ForConditionalGeneration", "BailingMoeV2_5ForCausalLM",
    "BailingMoeV3ForCausalLM", "BailingMoeV3VLForConditionalGeneration", "Qwen3NextForCausalLM",
    "Qwen3_5MoeForConditionalGeneration", "InternS2PreviewForConditionalGeneration",
    "InternS2MobiusForConditionalGeneration", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForCausalLM",
    "Qwen3_5ForCausalLM", "Qwen4ExpForConditionalGeneration", "MiniCPMV4_6ForConditionalGeneration",
    "MiniCPMV4_7ForConditionalGeneration", "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM",
    "NemotronH_Omni_Reasoning_V3", "FalconH1ForCausalLM", "JetNemotronForCausalLM",
    "JetVLMForConditionalGeneration", "Lfm2ForCausalLM", "Lfm2MoeForCausalLM", "ZayaForCausalLM",
    "Glm5NextForConditionalGeneration",
})
#: overrides.py lines 403-437, ``_MAMBA_EXTRA_BUFFER_ARCHS``: the ones that take the extra buffer
#: (on the triton linear-attention backend only, ``supports_mamba_cache_extra_buffer``).
MAMBA_EXTRA_BUFFER_ARCHS = frozenset({
    "KimiLinearForCausalLM", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
    "Qwen3_5MoeForCausalLM", "Qwen3_5ForCausalLM", "Qwen3NextForCausalLM", "Qwen4ExpForConditionalGeneration",
    "InternS2PreviewForConditionalGeneration", "MiniCPMV4_6ForConditionalGeneration",
    "MiniCPMV4_7ForConditionalGeneration", "BailingMoeV2_5ForCausalLM", "BailingMoeV3ForCausalLM",
    "BailingMoeV3VLForConditionalGeneration", "FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM",
    "Glm5NextForConditionalGeneration", "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM",
    "NemotronH_Omni_Reasoning_V3", "KimiK3ForConditionalGeneration", "InklingForConditionalGeneration",
    "InklingForConditionalGenerationMTP",
})
_EXTRA_BUFFER = ("extra_buffer", "extra_buffer_lazy")


@dataclass(frozen=True)
class MambaCache:
    """The server arguments SGLang's hybrid radix-cache handling reads besides the page size, as
    given; the defaults are SGLang 0.5.23's (``arg_groups/fields/exec_.py``). ``attention_backend``:
    ``--attention-backend`` as given (None: not given; SGLang's own choice comes after this check)."""

    disable_radix_cache: bool = False
    strategy: str = "auto"  #: --mamba-radix-cache-strategy
    disable_overlap_schedule: bool = False
    linear_attn_backend: str = "triton"
    track_interval: int = 256  #: --mamba-track-interval
    disaggregation_mode: str = "null"
    attention_backend: str | None = None

    @classmethod
    def from_args(cls, args: Mapping) -> "MambaCache":
        """From server arguments (underscore names), SGLang's default for each one not given."""
        d = cls()

        def given(name, default):
            value = args.get(name)
            return default if value is None else value

        return cls(bool(args.get("disable_radix_cache")),
                   str(given("mamba_radix_cache_strategy", d.strategy)),
                   bool(args.get("disable_overlap_schedule")),
                   str(given("linear_attn_backend", d.linear_attn_backend)),
                   int(given("mamba_track_interval", d.track_interval)),
                   str(given("disaggregation_mode", d.disaggregation_mode)), args.get("attention_backend"))


def mamba_cache_refusal(architecture: str | None, cache: MambaCache, page_size: int | None,
                        draft_tokens: int | None) -> str | None:
    """SGLang's refusal (``"AssertionError: its text"``, ``"AssertionError"`` for a bare assert, or
    ``"ValueError: ..."``) of ``architecture``'s radix cache with these arguments; None: it takes them
    (or the architecture is not one SGLang keeps mamba states for). ``page_size`` and
    ``draft_tokens`` (``--speculative-num-draft-tokens``) as given, None when not given."""
    if architecture is None or cache.disable_radix_cache:
        return None
    extra_ok = architecture in MAMBA_EXTRA_BUFFER_ARCHS and cache.linear_attn_backend == "triton"
    if architecture not in MAMBA_RADIX_CACHE_ARCHS:
        if architecture in MAMBA_EXTRA_BUFFER_ARCHS:
            return None  # GraniteMoeHybrid: a mamba model or not by its layer_types (not known here)
        if cache.strategy in _EXTRA_BUFFER:
            # model_hook.py lines 1060-1066
            return (f"ValueError: --mamba-radix-cache-strategy {cache.strategy} needs mamba state, "
                    f"got {architecture}.")
        return None
    strategy, overlap_off = cache.strategy, cache.disable_overlap_schedule
    if strategy == "auto":  # overrides.py lines 477-486
        if (not overlap_off or (page_size or 1) > 1) and extra_ok:
            strategy = "extra_buffer"
        else:
            strategy, overlap_off = "no_buffer", True
    if strategy in _EXTRA_BUFFER:  # mamba_hook.py, validate_mamba_extra_buffer
        if not extra_ok:
            return f"AssertionError: extra_buffer is not supported for {architecture}; use no_buffer."
        if strategy == "extra_buffer_lazy" and cache.disaggregation_mode != "null":
            return ("AssertionError: extra_buffer_lazy unsupported under PD disaggregation; use "
                    "--mamba-radix-cache-strategy extra_buffer.")
        if draft_tokens is not None and cache.track_interval < draft_tokens:
            return "AssertionError"  # line 133: assert view.mamba_track_interval >= ..._num_draft_tokens
        if page_size is not None and page_size > 0 and cache.track_interval % page_size:
            return "AssertionError"  # line 135: assert view.mamba_track_interval % view.page_size == 0
        return None
    # mamba_hook.py, validate_mamba_no_buffer (lines 156-163)
    if page_size not in (1, None):
        return "AssertionError: no_buffer only supports page_size=1."
    if not overlap_off:
        return ("AssertionError: no_buffer do not support overlap schedule. Try to set "
                "disable_overlap_schedule=True.")
    if cache.attention_backend == "trtllm_mha":
        return "AssertionError: no_buffer do not support trtllm_mha attention backend."
    return None


def mamba_cache_fix(architecture: str | None, refusal: str, page_size: int | None) -> str:
    """One line for a person: what SGLang refuses and how to fix it."""
    if "page_size=1" in refusal:
        return (f"SGLang refuses --page-size {page_size} for {architecture} (a hybrid mamba model whose "
                f"radix cache runs no_buffer here: page size 1 only); use page_size 1, or disable_radix_cache")
    if refusal == "AssertionError":
        return (f"SGLang refuses {architecture}'s radix cache (extra_buffer): --mamba-track-interval must be "
                f"at least --speculative-num-draft-tokens and a multiple of --page-size; change those, or "
                f"disable_radix_cache")
    return (f"SGLang refuses this radix cache for {architecture} ({refusal}); fix it as it says, or "
            f"disable_radix_cache")
