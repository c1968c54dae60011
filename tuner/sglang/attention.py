"""Which attention backend a study's servers run, and whether that backend can run draft trees.

SGLang's own choice (``python/sglang/srt/arg_groups/model_override_base.py``,
``get_default_attn_backend``, run from ``attention_hook.py`` when ``--attention-backend`` is unset):

* MLA models: FA3 on Hopper; FlashInfer on SM100; Triton elsewhere (AITER on ROCm). Before that,
  ``arg_groups/model_overrides/deepseek_v2.py`` (``_deepseek_family_overrides``) sets ``trtllm_mla``
  on SM100 for the DeepSeek family without DSA (DeepseekV3ForCausalLM, KimiK25ForConditionalGeneration,
  ...), and ``dsa`` for DSA models (DeepSeek V3.2, GLM-5) on any GPU.
* Other models: FA3 on Hopper and ``trtllm_mha`` on SM100, but only without speculation or with
  topk 1 (``is_no_spec_infer_or_topk_one``, ``utils/common.py``); FlashInfer otherwise, Triton for
  a model with attention sinks (FlashInfer has none).
* Per architecture, before that default (``arg_groups/model_overrides/``): GPT-OSS and Llama 4 get
  ``trtllm_mha``/``fa3``/``triton`` by GPU whatever the topk; the Qwen3.5 hybrids (Qwen3-Next) get
  ``triton`` for SM100 trees; Olmo2 gets ``trtllm_mha`` on SM100 and ``fa3`` on other GPUs from SM80
  (``model_overrides/olmo2.py``), Gemma 4 ``trtllm_mha`` on SM100 and ``triton`` elsewhere
  (``model_overrides/gemma4.py``; the tuner still pins nothing for either); and ``model_hook.py``
  refuses some backends for some architectures (:data:`ARCH_BACKENDS`, :data:`ARCH_REFUSED_BACKENDS`).

So SGLang's choice can change with topk, which would bias every comparison a study makes; the
tuner pins one backend for the baseline and every trial (:func:`choose_attention_backend`): SGLang's
own choice when that backend runs trees, else the backend SGLang documents for trees, one the model
takes. An architecture SGLang has code of its own for that this module does not mirror
(:data:`SGLANG_OWN_BACKEND_ARCHS`) is not pinned and drafts chains only; any other architecture the
tables do not name runs SGLang's generic path, which this module mirrors (trees in where the backend
runs them).

Which backends run a topk > 1 tree:

* MLA: FA3 and Triton, page size 1 only. FlashInfer-MLA, FlashMLA, TRTLLM-MLA and CuteDSL-MLA draft
  chains only: their multi-step draft backends raise ``ValueError("Currently Flashinfer MLA only
  supports topk=1 for speculative decoding")`` (``srt/layers/attention/flashinfer_mla_backend.py``,
  ``FlashInferMLAMultiStepDraftBackend``; ``trtllm_mla_backend.py`` and ``cutedsl_mla_backend.py``
  subclass it; ``flashmla_backend.py`` raises "Currently FlashMLA only supports topk=1 ...") when
  the draft model is MLA and num_steps > 1 (``speculative/draft_utils.py``: no multi-step backend
  for one step), after the model has loaded; and their target verify has no tree mask
  (``flashinfer_mla_backend.py``: "TODO: Support topk > 1 with custom mask"). SGLang's attention
  backend support matrix (docs/advanced_features/attention_backend.md) marks Spec topk>1 for MLA
  as working on FA3 and Triton with page_size=1 only.
* MHA: FlashInfer, FA3 and Triton (any page size for these three, ``speculative_hook.py``
  ``_PAGE_TREE_SPEC_BACKENDS``, except FA3 for a model with a sliding window: page size 1 only,
  ``flashattention_backend.py`` line 3417); ``trtllm_mha`` refuses topk > 1 during argument handling.

Why one module (past 400 lines): SGLang's default choice, the per-architecture overrides and refusals,
which backends run trees and which GPUs take them are one set of facts that
:func:`choose_attention_backend` reads together; split, a new SGLang release would be edited in
several places that must agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from .hardware import GpuArch
from .model import DEEPSEEK_FAMILY, ModelFacts

#: MLA backends whose multi-step draft decode refuses topk > 1 (flashinfer_mla_backend.py and the
#: backends that subclass or copy its draft backend) and whose verify has no tree mask.
MLA_CHAIN_ONLY_BACKENDS = ("flashinfer", "flashmla", "trtllm_mla", "cutedsl_mla")
#: The backends SGLang's support matrix lists as running MLA trees (page size 1 only).
MLA_TREE_BACKENDS = ("fa3", "triton")
#: MHA backends that refuse topk > 1 at argument handling (speculative_hook.py).
MHA_CHAIN_ONLY_BACKENDS = ("trtllm_mha",)

#: Backends that serve one attention kind only, and what SGLang raises when a runner of the other
#: kind is given one (``layers/attention/attention_registry.py``, the ``create_*_backend``
#: functions, run as each model runner starts, after its model has loaded). The draft runner gets
#: ``--speculative-draft-attention-backend``, else the target's own backends
#: (``model_executor/model_runner.py``, ``resolve_draft_attention_backend``; EAGLE's draft worker,
#: ``speculative/eagle_worker_v2.py``, names none), so an EAGLE-3 head of the other kind (a
#: Llama-style MHA head on an MLA model such as Kimi K2.6) fails on them. ``flashmla`` has no check
#: of its own: its constructor reads the model's ``kv_lora_rank``, which only an MLA model has.
MLA_ONLY_BACKENDS = {
    "trtllm_mla": "ValueError: trtllm_mla backend can only be used with MLA models.",
    "cutedsl_mla": "ValueError: cutedsl_mla backend can only be used with MLA models.",
    "flashmla": "AttributeError: 'ModelConfig' object has no attribute 'kv_lora_rank'",
}
MHA_ONLY_BACKENDS = {
    "trtllm_mha": "ValueError: trtllm_mha backend can only be used with non-MLA models.",
    "hpc_ops": "ValueError: hpc_ops backend can only be used with non-MLA models.",
}


#: Architectures SGLang 0.5.23 gives their own backend before its generic default, whatever the
#: topk (``arg_groups/model_overrides/gpt_oss.py``, ``_gpt_oss_overrides``;
#: ``model_overrides/llama4.py``, ``_llama4_overrides``): trtllm_mha on SM100, fa3 on SM90, triton
#: on every other CUDA GPU.
SM100_SM90_OTHER_ARCHS = frozenset({"GptOssForCausalLM", "Llama4ForConditionalGeneration", "Llama4ForCausalLM"})

#: ``arg_groups/model_hook.py`` (``handle_model_specific_adjustments``): the backends these
#: architectures take (an allow list) or refuse (a deny list), each an AssertionError during argument
#: handling, and the backends SGLang checks: "pd" the prefill and decode backends (each falling back
#: to the attention backend), "a" the attention backend alone. With none of the three given, the
#: model's own override picks one it takes.
_LLAMA4_BACKENDS = ("fa3", "aiter", "triton", "ascend", "trtllm_mha", "intel_xpu")
_GEMMA4_BACKENDS = ("trtllm_mha", "triton", "fa4", "ascend", "intel_xpu", "intel_amx", "aiter")
ARCH_BACKENDS = {
    "GptOssForCausalLM": ("triton", "trtllm_mha", "fa3", "fa4", "ascend", "intel_amx", "intel_xpu", "aiter"),
    "Llama4ForConditionalGeneration": _LLAMA4_BACKENDS,
    "Llama4ForCausalLM": _LLAMA4_BACKENDS,
    "Gemma4ForConditionalGeneration": _GEMMA4_BACKENDS,
    "Gemma4ForCausalLM": _GEMMA4_BACKENDS,
    "Gemma4UnifiedForConditionalGeneration": _GEMMA4_BACKENDS,
}
ARCH_REFUSED_BACKENDS = {"Olmo2ForCausalLM": ("flashinfer",), "Lfm2ForCausalLM": ("triton",),
                         "Lfm2MoeForCausalLM": ("triton",)}
_GEMMA4_ARCHS = ("Gemma4ForConditionalGeneration", "Gemma4ForCausalLM", "Gemma4UnifiedForConditionalGeneration")
_PD_CHECKED = ("GptOssForCausalLM", "Gemma4ForConditionalGeneration", "Gemma4ForCausalLM",
               "Gemma4UnifiedForConditionalGeneration")


def _model_hook_text(architecture: str, prefill: str | None, decode: str | None, base: str | None) -> str:
    """model_hook.py's assertion message for ``architecture``, word for word."""
    if architecture == "GptOssForCausalLM":
        return (f"GptOssForCausalLM requires one of {list(ARCH_BACKENDS[architecture])} attention backend, but got "
                f"the following backends\n- Prefill: {prefill}\n- Decode: {decode}\n")
    if architecture.startswith("Gemma4"):
        return ("Gemma4 only supports trtllm_mha, triton, fa4, ascend, intel_xpu, intel_amx, or "
                f"aiter attention backend, got prefill={prefill}, decode={decode}")
    if architecture.startswith("Llama4"):
        return f"fa3, aiter, triton, ascend, trtllm_mha or intel_xpu is required for Llama4 model but got {base}"
    if architecture == "Olmo2ForCausalLM":
        return "FlashInfer backend can significantly degrade the performance of Olmo3 models."
    return (f"{architecture} does not support triton attention backend, "
            "as the first layer might not be an attention layer")


#: ``model_overrides/qwen3_5.py`` (``_qwen3_5_hybrid_overrides``), SM100 only, no backend given: the
#: Qwen3.5 hybrids (gated-delta-net linear attention plus full attention) keep trtllm_mha with page
#: size 64 where the generic default would pick it (a speculative topk-1 server), else triton with
#: page size 1 (a tree, where the generic default says flashinfer).
QWEN3_5_HYBRID_ARCHS = frozenset({
    "Qwen3NextForCausalLM", "Qwen3_5MoeForConditionalGeneration", "InternS2PreviewForConditionalGeneration",
    "InternS2MobiusForConditionalGeneration", "Qwen3_5ForConditionalGeneration",
})


#: Architectures with model-specific attention code in SGLang 0.5.23 that this module does not mirror:
#: a model override that sets the backend (``arg_groups/model_overrides/``: beam.py, deepseek_v4.py,
#: embedding_gemma2.py, exaone.py, falcon_h1.py, gemma4.py, granitemoehybrid.py, inkling.py,
#: iquest_q1.py, kimi_k3.py, lfm2.py, mimo_v2.py, minicpm.py, minicpmv.py, minimax_m3.py, moss_vl.py,
#: nemotron_h.py, olmo2.py, qwen3_vl.py, qwen4_exp.py; ``overrides.py``, ``_step3p_overrides``), a
#: check that refuses some backends (``model_hook.py``: Gemma 4, Exaone, Olmo2, LFM2) or a topk limit
#: (iquest_q1.py, nemotron_h.py). The tuner pins nothing for them and keeps the space to chains:
#: :func:`choose_attention_backend`.
SGLANG_OWN_BACKEND_ARCHS = frozenset({
    "BeamForCausalLM", "DeepseekV4ForCausalLM", "EmbeddingGemma2Model", "Exaone4ForCausalLM",
    "ExaoneMoEForCausalLM", "ExaoneMoeForCausalLM", "FalconH1ForCausalLM", "JetNemotronForCausalLM",
    "JetVLMForConditionalGeneration", "Gemma4ForConditionalGeneration", "Gemma4ForCausalLM",
    "Gemma4UnifiedForConditionalGeneration", "DiffusionGemmaForBlockDiffusion", "GraniteMoeHybridForCausalLM",
    "InklingForConditionalGeneration", "InklingForConditionalGenerationMTP", "IQuestQ1ForCausalLM", "IQuestQ1MTP",
    "KimiK3ForConditionalGeneration", "Lfm2ForCausalLM", "Lfm2MoeForCausalLM", "MiMoV2ForCausalLM",
    "MiMoV2FlashForCausalLM", "MiniCPMForCausalLM", "MiniCPMSALAForCausalLM", "MiniCPMV4_6ForConditionalGeneration",
    "MiniCPMV4_7ForConditionalGeneration", "MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration",
    "MossVLForConditionalGeneration", "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM",
    "NemotronH_Omni_Reasoning_V3", "Olmo2ForCausalLM", "Qwen3VLForConditionalGeneration",
    "Qwen3VLMoeForConditionalGeneration", "Qwen4ExpForConditionalGeneration", "Step3p5ForCausalLM",
    "Step3p7ForConditionalGeneration",
})


def sglang_decides(target: ModelFacts | None) -> bool:
    """Whether SGLang 0.5.23 has attention code of its own for ``target``'s architecture that the
    tuner does not mirror (:data:`SGLANG_OWN_BACKEND_ARCHS`; Step3p5/Step3p7 by substring, as
    ``_step3p_overrides``' predicate matches them)."""
    arch = target.architecture if target is not None else None
    return bool(arch) and (arch in SGLANG_OWN_BACKEND_ARCHS or "Step3p5ForCausalLM" in arch
                           or "Step3p7ForConditionalGeneration" in arch)


def arch_backend_refusal(architecture: str | None, prefill: str | None, decode: str | None,
                         base: str | None) -> str | None:
    """SGLang's AssertionError text when ``architecture`` is given backends it refuses
    (:data:`ARCH_BACKENDS`, :data:`ARCH_REFUSED_BACKENDS`); None when it takes them or none is given
    (its own choice then). ``base``: the attention backend as SGLang's checks read it."""
    arch = architecture or ""
    allowed, refused = ARCH_BACKENDS.get(arch), ARCH_REFUSED_BACKENDS.get(arch, ())
    if (allowed is None and not refused) or (prefill, decode, base) == (None, None, None):
        return None
    checked = (prefill, decode) if arch in _PD_CHECKED else (base,)
    if arch not in _PD_CHECKED and base is None:
        return None  # the model's override sets its own while attention_backend is unset
    if any((allowed is not None and b not in allowed) or b in refused for b in checked):
        return _model_hook_text(arch, prefill, decode, base)
    return None


def takes_backend(target: ModelFacts | None, backend: str) -> bool:
    """Whether ``target``'s architecture takes ``backend`` (:func:`arch_backend_refusal`)."""
    arch = target.architecture if target is not None else None
    return arch_backend_refusal(arch, backend, backend, backend) is None


def tree_backend_for(target: ModelFacts | None) -> str:
    """The backend that runs trees on every NVIDIA generation for ``target`` and that its
    architecture takes: triton for MLA models, for models SGLang refuses FlashInfer for
    (:func:`takes_backend`) and for models with attention sinks; FlashInfer otherwise."""
    if target is not None and (target.mla or target.attention_sinks or not takes_backend(target, "flashinfer")):
        return "triton"
    return "flashinfer"


def kind_refusal(backend: str | None, attention: str | None) -> str | None:
    """SGLang's error when a runner of ``attention`` kind (``"mla"``/``"mha"``; None: not known)
    is given ``backend``; None when it takes it (or the tuner cannot tell)."""
    if attention == "mha":
        return MLA_ONLY_BACKENDS.get(backend or "")
    if attention == "mla":
        return MHA_ONLY_BACKENDS.get(backend or "")
    return None


def gpu_refusal(backend: str | None, gpu: GpuArch | None, attention: str | None) -> str | None:
    """SGLang's error when a runner of ``attention`` kind is given ``backend`` on ``gpu`` (None:
    not known; nothing refused), for every launch, the baseline's too:

    * ``fa3``: ``attention_registry.py``, ``create_flashattention_v3_backend`` asserts SM 8.x for
      non-MLA models or SM 9.x (so never on Blackwell), as the runner starts;
    * ``trtllm_mla``: ``arg_groups/overrides.py``, ``_mla_kv_cache_dtype_checks``, Blackwell only
      (``is_blackwell``: SM 10.x, 11.x and 12.x), during argument handling;
    * ``cutedsl_mla``: ``_cutedsl_prefill_backend_fill`` (the same file), SM 10.x only, likewise;
    * ``trtllm_mha``: ``arg_groups/attention_hook.py``, ``handle_attention_backend_compatibility``,
      as the prefill or decode backend on SM 9.x, 10.x and 12.x only (``is_sm90``, ``is_sm100``,
      ``is_sm120``), during argument handling (the baseline's too).
    """
    if gpu is None:
        return None
    if backend == "fa3" and not (gpu.major == 9 or (gpu.major == 8 and attention != "mla")):
        return ("AssertionError: FlashAttention v3 Backend requires SM>=80 and SM<=90. "
                "Please use `--attention-backend flashinfer`.")
    if backend == "trtllm_mla" and gpu.major not in (10, 11, 12):  # utils/common.py: is_blackwell (10, 11, 12)
        return ("ValueError: TRTLLM MLA backend is only supported on Blackwell GPUs (SM100/SM12x). "
                "Please use a different backend.")
    if backend == "trtllm_mha" and gpu.major not in (9, 10, 12):
        return ("ValueError: TRTLLM MHA backend for decode is only supported on Hopper (SM90), "
                "Blackwell (SM100) and (SM120) GPUs. Please use a different decode backend.")
    if backend == "cutedsl_mla" and gpu.major != 10:
        return ("ValueError: CuteDSL MLA backend is only supported on Blackwell GPUs (SM100). "
                "Please use a different backend.")
    return None


#: The GPU checks SGLang 0.5.23 makes during argument handling, before the speculative hook, the
#: baseline's too (arg_groups/overrides.py, _mla_kv_cache_dtype_checks and
#: _cutedsl_prefill_backend_fill; attention_hook.py, handle_attention_backend_compatibility): each
#: backend and the roles it is checked in (a: attention_backend, p: prefill, d: decode backend).
_LAUNCH_GPU_CHECKS = (("trtllm_mla", "ad"), ("cutedsl_mla", "adp"), ("trtllm_mha", "pd"))


def launch_gpu_refusal(attention: str | None, prefill: str | None, decode: str | None, gpu: GpuArch | None,
                       kind: str | None, prefill_given: str | None = None,
                       kv_cache_dtype: str | None = None) -> str | None:
    """SGLang's error (``"ValueError: ..."``) when the target's backends do not run on ``gpu``, of the
    ones it checks during argument handling (:data:`_LAUNCH_GPU_CHECKS`; fa3 fails later, as the runner
    starts); ``attention``: the attention backend after SGLang's default (prefill and decode fall back
    to it); ``kind``: the target's attention kind. None: it takes them, or the GPU is not known.
    ``prefill_given``: the prefill backend as given (None: not given, or not known), where SGLang
    refuses cutedsl_mla on any GPU, in the same pass (an AssertionError). ``kv_cache_dtype``: as given
    (None: not known), which trtllm_mla and cutedsl_mla, once their GPU takes them, check in the same
    pass (:data:`_MLA_KV_DTYPES`), and trtllm_mha as the prefill backend on SM120 (no fp8_e4m3)."""
    found = launch_refusal(attention, prefill, decode, gpu, kind, prefill_given, kv_cache_dtype)
    return None if found is None else found.error


@dataclass(frozen=True)
class LaunchRefusal:
    """What :func:`launch_refusal` found: SGLang's ``error``, the ``backend`` it names and what it
    refuses: ``"gpu"`` (the backend on this GPU), ``"kv_dtype"`` (the KV-cache dtype, for
    ``backend``), ``"sm120_prefill"`` (the KV-cache dtype of trtllm_mha as the SM120 prefill backend)
    or ``"prefill_role"`` (cutedsl_mla given as the prefill backend)."""

    error: str
    backend: str
    what: str


def launch_refusal(attention: str | None, prefill: str | None, decode: str | None, gpu: GpuArch | None,
                   kind: str | None, prefill_given: str | None = None,
                   kv_cache_dtype: str | None = None) -> LaunchRefusal | None:
    """:func:`launch_gpu_refusal` with the backend and the cause it refuses: the first of SGLang's
    argument-handling checks that fails, in SGLang's order (arguments as there)."""
    roles = {"a": attention, "p": prefill or attention, "d": decode or attention}
    for backend, where in _LAUNCH_GPU_CHECKS:
        if backend == "cutedsl_mla" and prefill_given == "cutedsl_mla":
            # overrides.py, _cutedsl_prefill_backend_fill: before its GPU check, on any GPU, the
            # prefill backend as given (cutedsl_mla as the attention backend alone is decode's)
            return LaunchRefusal(_CUTEDSL_PREFILL, backend, "prefill_role")
        refusal = gpu_refusal(backend, gpu, kind) if backend in (roles[r] for r in where) else None
        if refusal is not None and backend == "trtllm_mha" and roles["p"] == backend:
            return LaunchRefusal(_TRTLLM_MHA_PREFILL, backend, "gpu")  # attention_hook.py checks prefill first
        if refusal is None and backend == "trtllm_mha" and roles["p"] == backend:
            refusal = sm120_prefill_refusal(backend, gpu, kv_cache_dtype)  # right after the prefill GPU check
            if refusal is not None:
                return LaunchRefusal(refusal, backend, "sm120_prefill")
        if refusal is not None:
            return LaunchRefusal(refusal, backend, "gpu")
        if gpu is not None and backend in (roles[r] for r in where):
            refusal = kv_dtype_refusal(backend, kv_cache_dtype)
            if refusal is not None:
                return LaunchRefusal(refusal, backend, "kv_dtype")
    return None


def fa3_fp8_fallback(attention: str | None, kv_cache_dtype: str | None) -> str | None:
    """The attention backend after SGLang's fa3 fallback (``arg_groups/overrides.py``,
    ``_attention_backend_fa3_fp8_fallback``, run by attention_hook.py after the GPU checks above):
    fa3 (as the attention backend SGLang resolved; prefill and decode backends given stay) with
    ``kv_cache_dtype`` fp8_e5m2 is triton ("FlashAttention3 only supports fp8_e4m3 if using FP8")."""
    return "triton" if attention == "fa3" and kv_cache_dtype == "fp8_e5m2" else attention


def runner_backends(attention: str | None, prefill: str | None, decode: str | None, draft: str | None,
                    kv_cache_dtype: str | None = None, speculative: bool = True) -> list[tuple[str | None, str]]:
    """The attention backends each model runner builds as it starts, in SGLang 0.5.23's order:
    ``(backend, runner)`` pairs, ``runner`` ``"target"`` or ``"draft"``; the target's prefill then
    decode backend, then (``speculative``) the draft runner's. Every launch path that checks a
    runner's backend (study create, `tuner doctor`, the simulator) reads this list.

    ``attention``: the attention backend SGLang resolved, before the fa3 fallback, which is applied
    here (:func:`fa3_fp8_fallback`, with ``kv_cache_dtype``; applying it twice changes nothing);
    ``prefill``/``decode``: the prefill and decode backends given (None: not given); ``draft``:
    ``--speculative-draft-attention-backend`` (None: not given).

    Mirrors SGLang 0.5.23: the target runner's pair is ``attention_backends()``
    (``arg_groups/model_override_base.py``, ``attention_backends_of``: a split backend not given is
    the base one); a draft runner (``model_executor/model_runner.py``,
    ``resolve_draft_attention_backend``; EAGLE's draft worker, ``speculative/eagle_worker_v2.py``,
    names none) runs ``--speculative-draft-attention-backend`` for prefill and decode alike when
    given, else the target's pair (``model_runner_components/attention_backend_setup.py``,
    ``resolve_attention_backend_strs``); each backend is then built by
    ``layers/attention/attention_registry.py`` (``create_*_backend``), whose checks
    (:func:`gpu_refusal`'s fa3 assert, :data:`MLA_ONLY_BACKENDS`) fire there."""
    attention = fa3_fp8_fallback(attention, kv_cache_dtype)
    target = (prefill or attention, decode or attention)
    runners = [(backend, "target") for backend in target]
    if speculative:
        runners += [(backend, "draft") for backend in ((draft,) if draft else target)]
    return runners


def sm120_prefill_refusal(prefill: str | None, gpu: GpuArch | None, kv_cache_dtype: str | None) -> str | None:
    """SGLang's error when the prefill backend is trtllm_mha on an SM120 GPU with an fp8_e4m3 KV cache:
    attention_hook.py lines 207-221, right after the prefill GPU check, while handling the arguments
    (SM120's FMHAv2 prefill kernel has no FP8 KV cache; QA: Llama on sm120, --attention-backend
    trtllm_mha --kv-cache-dtype fp8_e4m3 started on the simulator and passed study create; SGLang
    refuses it, the baseline too). Its SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR arm is the
    server's environment: not read. None otherwise, or when the GPU is not known."""
    if prefill == "trtllm_mha" and gpu is not None and gpu.major == 12 and kv_cache_dtype == "fp8_e4m3":
        return _TRTLLM_MHA_SM120_FP8
    return None


def kv_dtype_refusal(backend: str | None, kv_cache_dtype: str | None) -> str | None:
    """SGLang's error when ``backend`` (the target's, as attention or decode backend) does not take
    the KV-cache dtype given (:data:`_MLA_KV_DTYPES`: trtllm_mla and cutedsl_mla check it while
    handling the arguments, so every launch, the baseline's too, fails); None: it takes it, or it is
    not given (None)."""
    dtypes = _MLA_KV_DTYPES.get(backend or "")
    if dtypes is None or kv_cache_dtype is None or kv_cache_dtype in dtypes[0]:
        return None
    return dtypes[1]


#: overrides.py: the KV-cache dtypes trtllm_mla (``_mla_kv_cache_dtype_checks``, not "bfloat16") and
#: cutedsl_mla (``_cutedsl_prefill_backend_fill``) take, each checked right after its GPU, and the error
_MLA_KV_DTYPES = {
    "trtllm_mla": (("fp8_e4m3", "bf16", "auto"), "ValueError: TensorRT-LLM MLA backend only supports "
                   "kv-cache-dtype of fp8_e4m3, bf16, or auto."),
    "cutedsl_mla": (("fp8_e4m3", "bf16", "bfloat16", "auto"), "ValueError: CuteDSL MLA backend only supports "
                    "kv-cache-dtype of fp8_e4m3, bf16, or auto."),
}


_CUTEDSL_PREFILL = "AssertionError: CuteDSL MLA only supports decoding for now"
_TRTLLM_MHA_SM120_FP8 = "ValueError: TRTLLM FMHAv2 prefill on SM120 does not support fp8_e4m3 KV cache or skip-softmax."
_TRTLLM_MHA_PREFILL = ("ValueError: TRTLLM MHA backend for prefill requires Hopper (SM90), "
                       "Blackwell (SM100), or SM120 GPUs. Please use a different prefill backend.")


#: flashinfer_mla_backend.py / flashmla_backend.py: the draft backend's error, word for word.
MLA_TOPK_ERRORS = {
    "flashinfer": "Currently Flashinfer MLA only supports topk=1 for speculative decoding",
    "trtllm_mla": "Currently Flashinfer MLA only supports topk=1 for speculative decoding",
    "cutedsl_mla": "Currently Flashinfer MLA only supports topk=1 for speculative decoding",
    "flashmla": "Currently FlashMLA only supports topk=1 for speculative decoding",
}


def runs_trees(backend: str | None, target: ModelFacts | None, page_size: int = 1) -> bool | None:
    """Whether ``backend`` runs topk > 1 trees for ``target``; None when the tuner cannot tell
    (an unknown model, or a backend outside the tables above)."""
    if backend in MHA_CHAIN_ONLY_BACKENDS:
        return False
    if target is not None and target.lightning:
        return False  # lightning_backend.py line 88, whatever the backend: rules._lightning_tree_violation
    if target is None or backend is None or sglang_decides(target):
        return None
    if target.dsa:
        # deepseek_v2.py: on CUDA GPUs SGLang sets the page size of a DSA model to 64 x its index
        # pool, whatever the backend; speculative_hook.py refuses topk > 1 with a page size > 1
        # outside flashinfer, fa3 and triton (_PAGE_TREE_SPEC_BACKENDS).
        return None if backend in ("flashinfer", "fa3", "triton") else False
    if target.mla:
        if backend in MLA_CHAIN_ONLY_BACKENDS:
            return False
        if backend in MLA_TREE_BACKENDS:
            return page_size <= 1
        return None
    if _window_pages(backend, target, page_size):
        return False  # flashattention_backend.py line 3417: rules._swa_tree_violation
    return True if backend in ("flashinfer", "fa3", "triton") else None


def sglang_default_backend(target: ModelFacts, gpu: GpuArch, topk: int | None = 1,
                           page_size: int | None = 1, split: bool = False, speculative: bool = True) -> str:
    """The backend SGLang 0.5.23 picks itself for ``target`` on ``gpu`` (CUDA) for a speculative
    server at this topk (None: not given, SGLang's automatic choice follows) and page size (None: not
    given), as its ``attention_backend`` when none is given. ``model_override_base.py``,
    ``get_default_attn_backend``: an MHA model counts as a chain (``is_no_spec_infer_or_topk_one``)
    with topk unset, or topk 1 at page size 1; on SM100 trtllm_mha (fa4 for asymmetric K/V rows) only
    for a chain whose topk is given. ``split``: a prefill or decode backend is given, and the
    overrides that need all three unset (``is_attention_backend_not_set``: deepseek_v2.py's dsa and
    trtllm_mla, gpt_oss.py's) leave the choice to that generic default. ``speculative`` False: a
    server without ``--speculative-algorithm``, which SGLang's SM100 branch takes as a chain whatever
    topk says (``speculative_algorithm is None``)."""
    if target.dsa and not split:
        return "dsa"  # deepseek_v2.py: DSA models get the dsa backend whatever the GPU
    if target.mla:
        if gpu.is_sm100 and target.architecture in DEEPSEEK_FAMILY and not split:
            return "trtllm_mla"  # deepseek_v2.py, _deepseek_family_overrides, before the default
        if gpu.is_hopper:
            return "fa3"
        if gpu.is_sm100:
            return "flashinfer"
        return "triton"
    if target.architecture in _GEMMA4_ARCHS:
        # model_overrides/gemma4.py, _gemma4_overrides: with attention_backend unset (a split given
        # too), whatever the topk; the generic default's fa3 or flashinfer would be model_hook.py's
        # Gemma4 refusal
        return "trtllm_mha" if gpu.is_sm100 else "triton"
    if target.architecture == "Olmo2ForCausalLM":
        # model_overrides/olmo2.py, _olmo2_overrides: with attention_backend unset, whatever the topk,
        # page size or split; the generic default's flashinfer would be model_hook.py's refusal
        return "trtllm_mha" if gpu.is_sm100 else "fa3" if gpu.sm >= 80 else "triton"
    own = target.architecture in SM100_SM90_OTHER_ARCHS
    if own and not (split and target.architecture == "GptOssForCausalLM"):
        return "trtllm_mha" if gpu.is_sm100 else "fa3" if gpu.is_hopper else "triton"
    chain = topk is None or (topk == 1 and (page_size or 1) == 1)  # is_no_spec_infer_or_topk_one: == 1
    sm100_chain = gpu.is_sm100 and chain and topk is not None
    if target.architecture in QWEN3_5_HYBRID_ARCHS and gpu.is_sm100:
        return "trtllm_mha" if sm100_chain and not target.asymmetric_kv else "triton"
    if gpu.is_hopper and chain:
        return "fa3"
    if sm100_chain or (gpu.is_sm100 and chain and not speculative):
        return "fa4" if target.asymmetric_kv else "trtllm_mha"
    return "triton" if target.attention_sinks else "flashinfer"  # FlashInfer has no attention sinks


def sglang_default_page_size(target: ModelFacts, gpu: GpuArch, topk: int | None = 1,
                             page_size: int | None = None) -> int:
    """The page size SGLang 0.5.23's model overrides leave for ``target`` on ``gpu`` (CUDA) when the
    study sets no attention backend, given the study's ``page_size`` (None: not set): 64 for a DSA
    model (``deepseek_v2.py``, 64 x its index pool of 1); for a Qwen3.5 hybrid on SM100, 64 with
    trtllm_mha and 1 with triton whatever the study set (``qwen3_5.py``, ``_qwen3_5_hybrid_overrides``);
    else the study's, 1 when unset. The backend's own constraints apply after it
    (``rules.resolved_page_size``: trtllm_mha and trtllm_mla, SGLang's SM100 chain choices, snap it
    to 64)."""
    if target.dsa:
        return 64
    if target.architecture in QWEN3_5_HYBRID_ARCHS and gpu.is_sm100:
        return 64 if sglang_default_backend(target, gpu, topk, page_size) == "trtllm_mha" else 1
    return page_size or 1


@dataclass(frozen=True)
class AttentionChoice:
    """The attention backend of every launch of a study, and why.

    ``pinned``: the tuner adds ``--attention-backend`` (the study set none); ``trees``: whether
    topk > 1 can run with it (None: the tuner cannot tell, trees stay in the space).
    """

    backend: str | None
    pinned: bool
    trees: bool | None
    reason: str

    @property
    def named(self) -> str:
        """The backend in a sentence: ``attention backend fa3``, or SGLang's own when none is set."""
        return f"attention backend {self.backend}" if self.backend else "SGLang's own attention backend"

    def line(self) -> str:
        """One line for dry runs, ``tuner launch --print`` and the export header."""
        name = self.backend or "SGLang's own choice"
        tree = {True: "runs trees", False: "chains only (topk 1)", None: "trees not known"}[self.trees]
        how = "pinned" if self.pinned else "set by the study" if self.backend else "not pinned"
        return f"attention backend {name} ({how}; {tree}): {self.reason}"


def _model_word(target: ModelFacts) -> str:
    return "MLA" if target.mla else "non-MLA"


def _lightning_why(target: ModelFacts) -> str:
    """Why no backend runs trees for ``target`` (:attr:`ModelFacts.lightning`)."""
    return (f"{target.architecture}'s linear-attention layers run SGLang's Lightning (seg_la) backend, which "
            f"verifies chains only whatever the attention backend (layers/attention/linear/lightning_backend.py)")


def _window_pages(backend: str | None, target: ModelFacts | None, page_size: int) -> bool:
    """Whether ``backend`` runs no trees for ``target`` for its sliding window at this page size only
    (:func:`runs_trees`; ``rules._swa_tree_violation``)."""
    return backend == "fa3" and target is not None and not target.mla and target.sliding_window and page_size > 1


def choose_attention_backend(target: ModelFacts | None, gpu: GpuArch | None,
                             user_backend: str | None = None, page_size: int = 1,
                             draft: ModelFacts | None = None) -> AttentionChoice:
    """The backend for every launch of a study: the study's own, else a pin (see the module doc).
    ``draft``: the draft model's facts (None: not known), for the advice the reason gives."""
    if user_backend is not None:
        trees = runs_trees(user_backend, target, page_size)
        why = "the study sets it"
        if target is not None and target.lightning:
            why += f"; {_lightning_why(target)}, so the search space has no trees"
        elif _window_pages(user_backend, target, page_size):
            why += (f"; it cannot run topk > 1 trees for {target.architecture}'s sliding window at page size "
                    f"{page_size}, so the search space has no trees")
        elif trees is False:
            why += (f"; it cannot run topk > 1 trees for this {_model_word(target) if target else ''} model, "
                    f"so the search space has no trees").replace("  ", " ")
        return AttentionChoice(user_backend, False, trees, why)
    if target is None:
        return AttentionChoice("flashinfer", True, None,
                               "the model's config.json is not readable here and no server.facts.model_attention "
                               "key states its kind: FlashInfer runs trees for non-MLA models; an MLA model "
                               "needs fa3 (Hopper) or triton for trees")
    if sglang_decides(target):
        return AttentionChoice(None, False, False,
                               f"SGLang 0.5.23 decides the attention backend of {target.architecture} with code "
                               f"of its own (arg_groups/model_overrides, model_hook.py) that the tuner does not "
                               f"mirror: no pin, and chains only (topk 1), which its own choice runs; to search "
                               f"trees, set attention_backend in server.args to one that runs them for this model")
    if target.lightning:
        # no backend runs its trees: SGLang's own choice for chains, one backend for every launch
        backend = sglang_default_backend(target, gpu, 1, page_size) if gpu is not None else tree_backend_for(target)
        return AttentionChoice(backend, True, False,
                               f"{_lightning_why(target)}: SGLang's own choice for its chains, and chains only "
                               f"(topk 1)")
    if target.dsa:
        return AttentionChoice("dsa", True, runs_trees("dsa", target, page_size),
                               "SGLang's own choice for a DSA model (deepseek_v2.py), which also sets its page "
                               "size to 64 on CUDA GPUs: SGLang refuses topk > 1 with that page size on dsa")
    if gpu is None:
        backend = tree_backend_for(target)
        return AttentionChoice(backend, True, runs_trees(backend, target, page_size),
                               f"GPU generation unknown (no nvidia-smi, no server.facts.gpu_compute_capability): "
                               f"{backend} runs {_model_word(target)} trees on every NVIDIA generation")
    chain = sglang_default_backend(target, gpu, 1, page_size)
    tree = sglang_default_backend(target, gpu, 2, page_size)
    kind = f"{_model_word(target)} on {gpu.name}"
    if chain == tree and runs_trees(chain, target, page_size):
        return AttentionChoice(chain, True, True, f"SGLang's own choice for {kind}, chains and trees alike")
    if runs_trees(chain, target, page_size):
        return AttentionChoice(chain, True, True,
                               f"SGLang's own choice for {kind} with topk 1 (it switches to {tree} for "
                               f"trees); one backend for the baseline and every trial")
    if runs_trees(tree, target, page_size):
        return AttentionChoice(tree, True, True,
                               f"SGLang's own choice for {kind} with topk > 1 ({chain} for topk 1 cannot "
                               f"run trees); one backend for the baseline and every trial")
    fallback = "fa3" if target.mla and gpu.is_hopper else tree_backend_for(target)
    # An MLA-only backend refuses an MHA draft head (MLA_ONLY_BACKENDS): the advice says so.
    also = ""
    if chain in MLA_ONLY_BACKENDS and (draft is None or draft.attention == "mha"):
        also = (" and speculative_draft_attention_backend: flashinfer" if draft is not None else
                " (with an MHA draft head such as a Llama-style EAGLE-3 one, also "
                "speculative_draft_attention_backend: flashinfer)")
    chains_only = (f"runs no trees for its sliding window at page size {page_size}"
                   if _window_pages(chain, target, page_size) else "drafts chains only")
    return AttentionChoice(fallback, True, runs_trees(fallback, target, page_size),
                           f"SGLang's own choice for {kind} is {chain}, which {chains_only}; "
                           f"{fallback} runs {_model_word(target)} trees{' (page size 1)' if target.mla else ''}; "
                           f"set attention_backend: {chain}{also} in server.args for chains on {chain}")
