"""SGLang's rules for EAGLE-3 speculative decoding flags: what it rejects, rewrites and crashes on.

This module is the one copy of that knowledge. The tuner uses it to propose only settings SGLang will
run as written (or to know what it will really run), and the simulator uses the very same functions to
fail, warn and rewrite the way SGLang does. When a new SGLang release changes a rule, this is the one
file to edit; every rule names the SGLang 0.5.x source it mirrors (checked against sglang==0.5.23):

* ``python/sglang/srt/arg_groups/speculative_hook.py`` -- ``_handle_eagle_family`` (argument handling
  at launch, before any weight is loaded) and ``_auto_choose_speculative_params``.
* ``python/sglang/srt/speculative/eagle_utils.py`` -- ``organize_draft_results`` (the draft tree is
  picked with ``torch.topk`` over the candidates; the draft CUDA-graph capture runs it while the
  server starts, and with one step, where there is no draft graph, SGLang's own warmup request does).
* ``python/sglang/srt/layers/attention/flashinfer_mla_backend.py`` and the MLA backends that share
  its draft backend: MLA trees (see :mod:`tuner.sglang.attention`).

Why one module (past 400 lines): the rules are one ordered pipeline, :func:`resolve`, checked in
SGLang's own order (which rule a setting breaks first decides when and how it fails); split across
files, that order would live nowhere. The backend facts the rules read are in
:mod:`tuner.sglang.attention`.

The contract: :func:`resolve` never raises for a bad setting; it returns a :class:`Resolution` whose
``violation`` says which rule is broken, what SGLang would raise, and when (``stage``): during
argument handling (``at_launch=True``), while the server starts after the model has loaded, or not
at all (a setting SGLang documents as unsupported but does not refuse).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .attention import (ARCH_BACKENDS, MHA_CHAIN_ONLY_BACKENDS, MLA_CHAIN_ONLY_BACKENDS, MLA_TOPK_ERRORS,
                        MLA_TREE_BACKENDS, arch_backend_refusal, kind_refusal)
from .mamba import MambaCache, mamba_cache_fix, mamba_cache_refusal
from .model import LIGHTNING_ARCHS, SLIDING_WINDOW_ARCHS

#: The speculative algorithms whose flags these rules cover (SGLang's EAGLE family, NEXTN is an alias).
EAGLE_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN")

#: SGLang's automatic choice when none of the three flags is set, for the model architectures the
#: tuner targets (``_auto_choose_speculative_params``: DeepSeek-V3-style MoE such as Kimi K2.x, and
#: the default branch). The tuner always sets all three flags, so this matters only for reporting
#: what an unset server would run.
AUTO_CHOICE = (3, 1, 4)
#: ``_auto_choose_speculative_params``: the architectures (``architectures[0]``) that get (5, 4, 8).
AUTO_CHOICE_LARGE_ARCHS = ("LlamaForCausalLM", "Grok1ForCausalLM", "Grok1VForCausalLM")


def auto_choice(architecture: str | None) -> tuple[int, int, int]:
    """SGLang's own (steps, topk, draft tokens) for a model when the three flags are unset."""
    return (5, 4, 8) if architecture in AUTO_CHOICE_LARGE_ARCHS else AUTO_CHOICE

#: Attention backends that implement topk > 1 trees with page_size > 1 (``_PAGE_TREE_SPEC_BACKENDS``).
PAGE_TREE_SPEC_BACKENDS = ("flashinfer", "fa3", "triton")

#: SGLang lowers max_running_requests to this when speculative decoding is on and it is unset.
SPEC_DEFAULT_MAX_RUNNING_REQUESTS = 48

# SGLang's own warning lines, word for word, so logs from the simulator read like SGLang's.
WARN_DRAFT_TOKENS_ADJUSTED = (
    "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 "
    "when speculative_eagle_topk == 1"
)
WARN_MAX_RUNNING_REQUESTS = (
    "Max running requests is reset to 48 for speculative decoding. "
    "You can override this by explicitly setting --max-running-requests."
)
#: The error SGLang's first speculative request hits when the tree asks for more tokens than exist.
TREE_TOO_LARGE_RUNTIME_ERROR = "RuntimeError: selected index k out of range"


@dataclass(frozen=True, order=True)
class SpecConfig:
    """The three EAGLE-3 launch flags. ``None`` means the flag is not given on the command line."""

    num_steps: int | None = None
    eagle_topk: int | None = None
    num_draft_tokens: int | None = None

    def server_args(self) -> dict[str, int]:
        """The flags as SGLang server-argument names (underscore spelling), unset ones left out."""
        pairs = {
            "speculative_num_steps": self.num_steps,
            "speculative_eagle_topk": self.eagle_topk,
            "speculative_num_draft_tokens": self.num_draft_tokens,
        }
        return {k: v for k, v in pairs.items() if v is not None}

    def label(self) -> str:
        """Short stable text form, e.g. ``steps=3 topk=1 draft=4``."""
        return f"steps={self.num_steps} topk={self.eagle_topk} draft={self.num_draft_tokens}"

    def as_dict(self) -> dict[str, int | None]:
        return asdict(self)


#: When SGLang fails on a broken rule (``RuleViolation.stage``).
STAGE_LAUNCH = "launch"  #: argument handling, before anything loads
STAGE_STARTUP = "startup"  #: after the model has loaded, before the server is ready
STAGE_UNSUPPORTED = "unsupported"  #: never refused: documented as unsupported (wrong or undefined)


#: SGLang 0.5.23's deprecated attention-backend names and what it runs instead
#: (``arg_groups/serving_hook.py``, ``_handle_deprecated_args``)
BACKEND_ALIASES = {"compressed": "dsv4", "tokenspeed_mla": "cutedsl_mla"}
BACKEND_ARGS = ("attention_backend", "decode_attention_backend", "prefill_attention_backend",
                "speculative_draft_attention_backend")


def resolve_backend_aliases(args: dict, speculative: bool) -> dict:
    """``args`` (server arguments, underscore names) as SGLang runs them after renaming deprecated
    backend names (``_handle_deprecated_args``): ``tokenspeed_mla`` is ``cutedsl_mla``, as a prefill
    backend ``trtllm_mla`` (cutedsl_mla is decode-only); given as the attention or decode backend of
    a speculative server it also moves verification to the decode half (attention mode "decode"), and
    as the attention or decode backend it sets the KV-cache dtype to fp8_e4m3."""
    out = dict(args)
    for name in BACKEND_ARGS:
        if out.get(name) in BACKEND_ALIASES:
            out[name] = BACKEND_ALIASES[out[name]]
            if name == "prefill_attention_backend" and out[name] == "cutedsl_mla":
                out[name] = "trtllm_mla"
    tokenspeed = "tokenspeed_mla" in (args.get("attention_backend"), args.get("decode_attention_backend"))
    if tokenspeed:
        out["kv_cache_dtype"] = "fp8_e4m3"  # serving_hook.py: "tokenspeed_mla required FP8 KV"
    if speculative and tokenspeed and (args.get("speculative_attention_mode") or "prefill") == "prefill":
        out["speculative_attention_mode"] = "decode"
    return out


@dataclass(frozen=True)
class ServerContext:
    """The other server arguments SGLang's speculative rules read, and the model facts they need.

    ``target_attention``/``draft_attention``: ``"mla"``, ``"mha"`` or None (not known: the MLA
    rules are not applied). The draft decode backend is ``draft_attention_backend``, else the decode
    backend, else ``attention_backend`` (``speculative/draft_utils.py``, ``DraftBackendFactory``).
    """

    speculative_algorithm: str | None = "EAGLE3"
    attention_backend: str | None = None
    page_size: int = 1
    use_rejection_sampling: bool = False
    #: --speculative-accept-threshold-single and -acc (SGLang's defaults 1.0)
    accept_thresholds: tuple[float, float] = (1.0, 1.0)
    decode_attention_backend: str | None = None
    prefill_attention_backend: str | None = None
    draft_attention_backend: str | None = None
    target_attention: str | None = None
    draft_attention: str | None = None
    target_architecture: str | None = None  #: architectures[0]: SGLang's automatic choice reads it
    #: which half of a split (prefill != decode) backend verifies and extends the draft
    #: (``--speculative-attention-mode``, SGLang's default "prefill")
    speculative_attention_mode: str = "prefill"
    #: the GPU generation (a :class:`tuner.sglang.hardware.GpuArch`; None: not known), for the page
    #: size fa4 sets on SM100 (:func:`resolved_page_size`)
    gpu: object = None
    #: ``--kv-cache-dtype`` as given (None: not given, SGLang's "auto"), which some MLA backends check
    #: (:func:`tuner.sglang.attention.kv_dtype_refusal`)
    kv_cache_dtype: str | None = None
    #: the radix-cache arguments SGLang reads for a hybrid (mamba) model, as given
    #: (:meth:`tuner.sglang.mamba.MambaCache.from_args`); None: not read, and the rule that needs them
    #: (``mamba-cache``) is not applied: SGLang's defaults would refuse what --disable-radix-cache runs
    mamba_cache: MambaCache | None = None

    @property
    def speculative(self) -> bool:
        return self.speculative_algorithm is not None

    @property
    def verify_backend(self) -> str | None:
        """The backend the target verifies the draft tree on. With prefill and decode backends
        apart, SGLang builds a HybridAttnBackend whose target-verify pass runs on the prefill half
        unless ``--speculative-attention-mode decode`` (``layers/attention/hybrid_attn_backend.py``,
        ``_select_backend``; ``attention_backend_setup.py``)."""
        prefill, decode = self.backends()
        if prefill and decode and prefill != decode and self.speculative_attention_mode != "decode":
            return prefill
        return decode or prefill

    @property
    def draft_backend(self) -> str | None:
        """The backend the draft's multi-step decode runs on: ``--speculative-draft-attention-backend``,
        else the decode half whatever ``--speculative-attention-mode`` says (``speculative/draft_utils.py``
        lines 55-60, ``DraftBackendFactory._create_backend`` for ``create_decode_backend``; QA: prefill
        fa3 + decode flashinfer with an MLA draft and topk 2 passed as an fa3 tree, and SGLang raised
        "Currently Flashinfer MLA only supports topk=1" after the load)."""
        return self.draft_attention_backend or self.backends()[1]

    def draft_runner_backends(self) -> tuple[str | None, ...]:
        """The backends the draft model's runner is built with: the draft backend alone, else the
        target's (prefill, decode) pair (``model_runner.py``, ``resolve_draft_attention_backend``)."""
        return (self.draft_attention_backend,) if self.draft_attention_backend else self.backends()

    def backends(self) -> tuple[str | None, str | None]:
        """(prefill, decode), split fields falling back to the base (``attention_backends_of``)."""
        return (self.prefill_attention_backend or self.attention_backend,
                self.decode_attention_backend or self.attention_backend)


@dataclass(frozen=True)
class RuleViolation:
    """A broken rule: which one, SGLang's own failure, and the fix."""

    rule: str  #: stable id, e.g. ``"all-or-none"``
    message: str  #: one line for a person: what is wrong and how to fix it
    sglang_exception: str  #: the exception class SGLang raises, e.g. ``"AssertionError"``
    sglang_message: str  #: the text SGLang prints with it ("" for a bare assert)
    at_launch: bool  #: True: SGLang exits during argument handling, before loading anything
    stage: str = STAGE_LAUNCH  #: STAGE_LAUNCH, STAGE_STARTUP or STAGE_UNSUPPORTED

    def when(self) -> str:
        """When SGLang fails, in words."""
        return {STAGE_LAUNCH: "at launch, during argument handling",
                STAGE_STARTUP: "while the server starts, after the full model load",
                STAGE_UNSUPPORTED: "never: SGLang runs it, but documents it as unsupported"}[self.stage]


@dataclass(frozen=True)
class Resolution:
    """What SGLang does with a requested :class:`SpecConfig`.

    ``effective`` is what the server really runs (``None`` when SGLang refuses to launch);
    ``warnings`` are SGLang's log lines for silent rewrites; ``violation`` is set for a bad setting.
    A setting is worth measuring only when ``ok`` is true.
    """

    requested: SpecConfig
    effective: SpecConfig | None
    warnings: tuple[str, ...] = field(default=())
    violation: RuleViolation | None = None

    @property
    def ok(self) -> bool:
        return self.violation is None

    @property
    def rewritten(self) -> bool:
        return self.effective is not None and self.effective != self.requested


def candidate_count(num_steps: int, eagle_topk: int) -> int:
    """How many draft tokens SGLang can pick the verified tree from.

    Mirrors ``organize_draft_results`` (eagle_utils.py): the first draft step scores ``topk`` tokens
    and every later step ``topk * topk``, so there are ``topk + (num_steps - 1) * topk**2``
    candidates; ``torch.topk`` then selects ``num_draft_tokens - 1`` of them.
    """
    return eagle_topk + (num_steps - 1) * eagle_topk * eagle_topk


def _violation(rule, message, exc, sglang_message, stage=STAGE_LAUNCH) -> RuleViolation:
    return RuleViolation(rule, message, exc, sglang_message, stage == STAGE_LAUNCH, stage)


#: speculative_hook.py, _handle_eagle_family: rejection sampling runs the linear (topk=1) chain only.
_REJECTION_TOPK = _violation(
    "rejection-sampling-topk", "--speculative-use-rejection-sampling requires --speculative-eagle-topk 1",
    "ValueError", "--speculative-use-rejection-sampling requires --speculative-eagle-topk=1.")


def resolve(requested: SpecConfig, ctx: ServerContext = ServerContext()) -> Resolution:
    """Apply SGLang's rules, in SGLang's order, to a requested setting. Never raises."""
    # model_hook.py (handle_model_specific_adjustments, run before the speculative hook, with or
    # without speculation): GPT-OSS, Llama 4, Gemma 4, Olmo2 and LFM2 refuse some backends.
    arch = _arch_backend_violation(ctx)
    if arch is not None:
        return Resolution(requested, None, (), arch)
    # model_hook.py line 737 (handle_mamba_radix_cache, after the per-model checks above): a hybrid
    # (mamba) model's radix cache, with or without speculation; the draft tokens as given (QA: LFM2 with
    # --page-size 16 was "valid" here; SGLang: "AssertionError: no_buffer only supports page_size=1.")
    draft_given = requested.num_draft_tokens if ctx.speculative else None
    mamba = None if ctx.mamba_cache is None else mamba_cache_refusal(
        ctx.target_architecture, ctx.mamba_cache, ctx.page_size, draft_given)
    if mamba is not None:
        exc, _, text = mamba.partition(": ")
        return Resolution(requested, None, (), _violation(
            "mamba-cache", mamba_cache_fix(ctx.target_architecture, mamba, ctx.page_size), exc, text))
    if not ctx.speculative:
        # No --speculative-algorithm: SGLang ignores the speculative flags entirely.
        return Resolution(requested, SpecConfig())
    # attention_hook.py, handle_attention_backend_compatibility (after the model hook, before the
    # speculative hook): torch's Flex Attention backend asserts speculative_algorithm is None.
    if resolved_attention_backend(ctx) == "flex_attention":
        return Resolution(requested, None, (), _violation(
            "flex-attention-spec",
            "attention backend flex_attention does not run speculative decoding; set another "
            "attention_backend in server.args",
            "AssertionError", "Speculative decoding is currently not supported with Flex Attention backend",
        ))
    steps, topk, draft = requested.num_steps, requested.eagle_topk, requested.num_draft_tokens
    warnings: list[str] = []

    # speculative_hook.py, _handle_eagle_family: with num_steps unset SGLang asserts (no message)
    # that the other two are unset too, then auto-chooses all three.
    if steps is None:
        if topk is not None or draft is not None:
            return Resolution(requested, None, (), _violation(
                "all-or-none",
                "set --speculative-num-steps too: SGLang needs num_steps, topk and draft tokens "
                "all set or all unset",
                "AssertionError", "",
            ))
        steps, topk, draft = auto_choice(ctx.target_architecture)

    # speculative_hook.py: `speculative_eagle_topk > 1` is compared before topk is known to be set;
    # with num_steps given and topk missing this is a TypeError, not a clear message. In
    # _handle_eagle_family's order: trtllm_mha's `topk > 1` (a TypeError), then rejection sampling's
    # `topk != 1`, which None passes as a refusal (ValueError), then `topk == 1`, then `topk > 1`.
    if topk is None:
        if ctx.use_rejection_sampling and not set(MHA_CHAIN_ONLY_BACKENDS) & set(ctx.backends()):
            return Resolution(requested, None, (), _REJECTION_TOPK)
        return Resolution(requested, None, (), _violation(
            "all-or-none",
            "set --speculative-eagle-topk too: with num_steps set SGLang compares topk to 1 and "
            "crashes when it is missing",
            "TypeError", "'>' not supported between instances of 'NoneType' and 'int'",
        ))

    # speculative_hook.py: trtllm_mha implements chain drafts only (prefill or decode backend).
    if set(MHA_CHAIN_ONLY_BACKENDS) & set(ctx.backends()) and topk > 1:
        return Resolution(requested, None, (), _violation(
            "trtllm-topk",
            "attention backend trtllm_mha allows --speculative-eagle-topk 1 only; use topk 1 or "
            "another attention backend",
            "ValueError", "trtllm_mha backend only supports topk = 1 for speculative decoding.",
        ))

    # speculative_hook.py: rejection sampling is implemented for the linear (topk=1) chain only.
    if ctx.use_rejection_sampling and topk != 1:
        return Resolution(requested, None, (), _REJECTION_TOPK)
    if ctx.use_rejection_sampling and ctx.accept_thresholds != (1.0, 1.0):
        return Resolution(requested, None, (), _violation(
            "rejection-sampling-thresholds",
            "--speculative-use-rejection-sampling (or block verification) ignores the accept thresholds and "
            "SGLang refuses them: leave speculative_accept_threshold_single and _acc at 1.0",
            "ValueError", "--speculative-use-rejection-sampling is incompatible with "
            "--speculative-accept-threshold-single / --speculative-accept-threshold-acc; rejection sampling "
            "ignores the accept thresholds.",
        ))

    # speculative_hook.py: with topk == 1 the tree is a chain of num_steps tokens plus the root,
    # and SGLang silently replaces any other draft-token count (a warning in its log only).
    if topk == 1 and draft != steps + 1:
        warnings.append(WARN_DRAFT_TOKENS_ADJUSTED)
        draft = steps + 1

    # speculative_hook.py: paged trees need the two-pass cascade draft decode. The page size is the
    # one attention resolution left (overrides.py, _mla_backend_page_constraints: trtllm_mla and
    # cutedsl_mla snap it to 64 unless 32 or 64, flashmla to 64, trtllm_mha to 64 unless 16-128), so
    # a tree on SGLang's own SM100 choice for DeepSeek-style MLA (trtllm_mla) is refused here.
    # The backend is the one attention resolution left; with none given SGLang picks its default
    # first (flashinfer for an MHA tree or paged model: allowed), which this context cannot know.
    # overrides.py, _fa4_page_constraint, reads topk as given: fa4 with all three unset on SM100 runs
    # page size 128, and SGLang's automatic choice may then be a tree (Llama's (5, 4, 8)): refused.
    page_size, backend = resolved_page_size(ctx, requested.eagle_topk), resolved_attention_backend(ctx)
    if topk > 1 and page_size > 1 and backend is not None and backend not in PAGE_TREE_SPEC_BACKENDS:
        return Resolution(requested, None, tuple(warnings), _violation(
            "page-size-topk",
            f"--speculative-eagle-topk > 1 with --page-size > 1 needs --attention-backend one of "
            f"{', '.join(PAGE_TREE_SPEC_BACKENDS)}; use page size 1 or one of those backends",
            "ValueError",
            f"speculative_eagle_topk > 1 with page_size > 1 is only supported on "
            f"{PAGE_TREE_SPEC_BACKENDS}; got attention_backend={backend!r}. "
            f"Use page_size == 1 or one of those backends.",
        ))

    effective = SpecConfig(steps, topk, draft)
    # The target's model runner builds its attention backends before the draft's (lightning_backend.py)
    lightning = _lightning_tree_violation(topk, ctx)
    if lightning is not None:
        return Resolution(requested, effective, tuple(warnings), lightning)
    # attention_registry.py: the draft runner refuses a backend of the other attention kind as it
    # starts, whatever the setting: every speculative launch of such a study fails after the load.
    kind = (_no_speculation_backend(ctx) or _draft_kind_violation(ctx)
            or _eagle_draft_backend_violation(steps, ctx))
    if kind is not None:
        return Resolution(requested, effective, tuple(warnings), kind)
    # An MLA tree SGLang refuses after loading fails before the draft graph capture below (the draft
    # backend is built first); one it runs unrefused yields to a failure the tree checks find.
    mla_tree = _mla_tree_violation(steps, topk, ctx)
    if mla_tree is not None and mla_tree.stage == STAGE_STARTUP:
        return Resolution(requested, effective, tuple(warnings), mla_tree)
    # eagle_utils.py, organize_draft_results: torch.topk(scores, num_draft_tokens - 1) over the
    # candidates. SGLang does not check this during argument handling; the server loads the model,
    # then dies before it is ready: the draft CUDA-graph capture runs the draft forward
    # (eagle_draft_cuda_graph_runner.py: "Capture cuda graph failed: selected index k out of
    # range"), and with one step (no draft graph) SGLang's warmup request does (http_server.py,
    # _execute_server_warmup). draft None (topk > 1 without draft tokens) fails the same way.
    if draft is None:
        return Resolution(requested, effective, tuple(warnings), _violation(
            "all-or-none",
            "set --speculative-num-draft-tokens too: with topk > 1 SGLang needs the tree size",
            "TypeError", "unsupported operand type(s) for -: 'NoneType' and 'int'", STAGE_STARTUP,
        ))
    if draft < 2:
        # topk 1 sets draft tokens to num_steps + 1: then the steps are what to fix (QA: steps 0,
        # draft tokens 2 given, was told "--speculative-num-draft-tokens 1 ...; use at least 2")
        said = (f"--speculative-num-steps {steps} drafts no token (with topk 1 SGLang sets the draft tokens to "
                f"num_steps + 1 = {draft}); use at least 1 step" if topk == 1 and steps < 1
                else f"--speculative-num-draft-tokens {draft} verifies no draft token; use at least 2")
        return Resolution(requested, effective, tuple(warnings), _violation(
            "draft-tokens-min", said,
            "RuntimeError", "selected index k out of range", STAGE_STARTUP,
        ))
    candidates = candidate_count(steps, topk)
    # a step or a topk of 0 or less drafts nothing, whatever candidate_count's sum says of it (QA fuzz:
    # topk -2 with 3 steps counts -2 + 2 x 4 = 6 "candidates", and was "valid: runs as written")
    if draft - 1 > candidates or min(steps, topk) < 1:
        # "at most 1 draft tokens" would be no fix there (QA)
        fix = ("none: use at least 1 step and a topk of at least 1" if min(steps, topk) < 1
               else f"only {candidates}; use at most {candidates + 1} draft tokens or more steps")
        return Resolution(requested, effective, tuple(warnings), _violation(
            "tree-too-large",
            f"--speculative-num-draft-tokens {draft} needs {draft - 1} candidates but steps={steps} "
            f"topk={topk} drafts {fix}",
            "RuntimeError", "selected index k out of range", STAGE_STARTUP,
        ))
    return Resolution(requested, effective, tuple(warnings),
                      _swa_tree_violation(topk, resolved_page_size(ctx, requested.eagle_topk), ctx) or mla_tree)


#: overrides.py, _mla_backend_page_constraints, in its order: a backend that snaps the page size,
#: the sizes it keeps, and which of its roles count (attention, decode, prefill, draft): flashmla and
#: trtllm_mla as the attention or decode backend only, trtllm_mha as the draft backend too.
_PAGE_SNAPS = (("flashmla", (64,), "ad"), ("trtllm_mla", (32, 64), "ad"), ("cutedsl_mla", (32, 64), "adp"),
               ("trtllm_mha", (16, 32, 64, 128), "adpx"), ("hpc_ops", (64,), "adp"))


def resolved_attention_backend(ctx: ServerContext) -> str | None:
    """``attention_backend`` as SGLang's speculative checks read it (overrides.py,
    ``_attention_backend_default``): the prefill backend when prefill and decode are one, else the
    one given; None: SGLang picks its default, which this context cannot know."""
    if ctx.prefill_attention_backend is not None and ctx.prefill_attention_backend == ctx.decode_attention_backend:
        return ctx.prefill_attention_backend
    return ctx.attention_backend


def resolved_page_size(ctx: ServerContext, topk: int | None = None) -> int:
    """The page size after SGLang's attention resolution (``_mla_backend_page_constraints``; then,
    when ``ctx.gpu`` is known, ``_fa4_page_constraint``: fa4 as any backend of a non-MLA model on
    SM100 at topk (as given) unset or 1 runs page size 128)."""
    gpu = ctx.gpu
    roles = {"a": resolved_attention_backend(ctx), "d": ctx.decode_attention_backend,
             "p": ctx.prefill_attention_backend, "x": ctx.draft_attention_backend}
    page_size = ctx.page_size
    for backend, keep, where in _PAGE_SNAPS:
        if backend in (roles[r] for r in where) and page_size not in keep:
            page_size = 64
    # overrides.py, _fa4_page_constraint (attention_hook.py runs it after the MLA snaps): the FA4
    # CUTLASS kernel of non-MLA models on SM100 takes page size 128 only, except for topk > 1 trees
    if (gpu is not None and gpu.is_sm100 and ctx.target_attention == "mha" and (topk or 0) <= 1
            and "fa4" in (roles["a"], roles["d"], roles["p"])):
        page_size = 128
    return page_size


def _arch_backend_violation(ctx: ServerContext) -> RuleViolation | None:
    """The study's backends for an architecture that refuses them (``attention.arch_backend_refusal``)."""
    prefill, decode = ctx.backends()
    arch = ctx.target_architecture
    # model_hook.py reads attention_backend before attention_hook.py's _attention_backend_default
    # turns equal prefill and decode backends into it: as given (None: the model override's own choice)
    text = arch_backend_refusal(arch, prefill, decode, ctx.attention_backend)
    if text is None:
        return None
    given = ", ".join(sorted({b for b in (prefill, decode) if b})) or "none"
    takes = (f"runs only on attention backends {', '.join(ARCH_BACKENDS[arch])}" if arch in ARCH_BACKENDS
             else "does not run on it")
    return _violation(
        "model-backend",
        f"SGLang refuses attention backend {given} for {arch}, which {takes}; set attention_backend in "
        f"server.args to another one (or leave it unset: SGLang's own choice)",
        "AssertionError", text)


def _no_speculation_backend(ctx: ServerContext) -> RuleViolation | None:
    """attention_registry.py, ``create_hpc_ops_backend``: "hpc_ops backend does not support
    speculative decoding for now", raised as the target runner starts (the baseline runs)."""
    if "hpc_ops" in (*ctx.backends(), *ctx.draft_runner_backends()):
        return _violation("backend-no-spec", "attention backend hpc_ops does not run speculative decoding; "
                          "use another attention backend", "ValueError",
                          "hpc_ops backend does not support speculative decoding for now.", STAGE_STARTUP)
    return None


#: speculative/draft_utils.py, ``DraftBackendFactory``: the backends EAGLE's draft decode
#: (``create_decode_backend``, num_steps > 1) and draft extend (``create_draft_extend_backend``) are
#: built on (both maps name the same ones); any other raises as the draft worker starts, after the
#: model load. ``qsa`` counts as one: a QSA model's draft gets backends of its own (not mirrored).
EAGLE_DRAFT_BACKENDS = frozenset({
    "flashinfer", "triton", "intel_amx", "intel_xpu", "aiter", "fa3", "hybrid_linear_attn", "flashmla", "trtllm_mha",
    "trtllm_mla", "cutedsl_mla", "dsa", "nsa", "ascend", "fa4", "dsv4", "qsa"})


def _eagle_draft_backend_violation(steps: int, ctx: ServerContext) -> RuleViolation | None:
    """A target backend EAGLE's draft cannot be built on (:data:`EAGLE_DRAFT_BACKENDS`; QA: every
    speculative launch on ``torch_native`` failed after the model load, "EAGLE is not supported in
    attention backend torch_native", the baseline ran). ``DraftBackendFactory._create_backend`` takes
    ``--speculative-draft-attention-backend``, else the
    decode half for the multi-step decode (built first, for num_steps > 1 only), and for the draft
    extend the decode half with ``--speculative-attention-mode decode``, else the prefill half.
    ``--speculative-draft-attention-backend`` has no choices in 0.5.23 (``arg_groups/fields/spec.py``),
    and EAGLE's draft worker takes it as given (``eagle_worker_v2.py`` builds its ``TpModelWorker``
    with no ``draft_attention_backend``: ``model_runner.py``, ``resolve_draft_attention_backend``; the
    fallback to flashinfer of ``draft_worker_common.py`` is DFlash's and DSpark's only), so a draft flag
    outside the maps fails alike (QA: ``speculative_draft_attention_backend: torch_native`` passed as
    "the study sets it" and the simulator started it)."""
    draft = ctx.draft_attention_backend
    if draft is not None:
        if draft in EAGLE_DRAFT_BACKENDS:
            return None
        text = (f"EAGLE is not supported in decode attention backend {draft}" if steps > 1
                else f"EAGLE is not supported in attention backend {draft}")
        return _violation("backend-no-spec", f"speculative_draft_attention_backend {draft} does not run EAGLE's "
                          "draft (SGLang builds its draft backends on flashinfer, fa3, triton, ... only); set it to "
                          "one of those, or leave it unset", "ValueError", text, STAGE_STARTUP)
    prefill, decode = ctx.backends()
    extend = decode if ctx.speculative_attention_mode == "decode" else prefill
    if steps > 1 and decode is not None and decode not in EAGLE_DRAFT_BACKENDS:
        backend, text = decode, f"EAGLE is not supported in decode attention backend {decode}"
    elif extend is not None and extend not in EAGLE_DRAFT_BACKENDS:
        backend, text = extend, f"EAGLE is not supported in attention backend {extend}"
    else:
        return None
    return _violation("backend-no-spec", f"attention backend {backend} does not run EAGLE's draft (SGLang builds "
                      f"its draft backends on flashinfer, fa3, triton, ... only); use another attention backend, or "
                      f"set speculative_draft_attention_backend", "ValueError", text, STAGE_STARTUP)


def _draft_kind_violation(ctx: ServerContext) -> RuleViolation | None:
    """The draft model's runner given a backend of the other attention kind (an MHA EAGLE-3 head
    on ``trtllm_mla``, SGLang's own SM100 choice for DeepSeek-style models): every speculative
    launch fails as the draft starts, whatever the three flags (:data:`MLA_ONLY_BACKENDS`)."""
    for backend in ctx.draft_runner_backends():
        refusal = kind_refusal(backend, ctx.draft_attention)
        if refusal is not None:
            fit = "flashinfer, fa3 (Hopper) or triton" if ctx.draft_attention == "mha" else "flashinfer, fa3 or triton"
            exc, _, text = refusal.partition(": ")
            return _violation(
                "draft-backend-kind",
                f"the draft model is {ctx.draft_attention.upper()} and its runner would get attention backend "
                f"{backend}, which serves {'MLA' if ctx.draft_attention == 'mha' else 'non-MLA'} models only; set "
                f"speculative_draft_attention_backend ({fit}) in server.args",
                exc, text, STAGE_STARTUP)
    return None


def _mla_tree_violation(steps: int, topk: int, ctx: ServerContext) -> RuleViolation | None:
    """MLA trees (``tuner.sglang.attention``): only FA3 and Triton, page size 1, run them."""
    if topk <= 1:
        return None
    draft_backend, verify_backend = ctx.draft_backend, ctx.verify_backend
    # draft_utils.py: the MLA multi-step draft backend exists for num_steps > 1 only; its
    # constructor raises after the target and draft models have loaded.
    if ctx.draft_attention == "mla" and steps > 1 and draft_backend in MLA_CHAIN_ONLY_BACKENDS:
        return _violation(
            "mla-tree-backend",
            f"attention backend {draft_backend} drafts MLA chains only (topk 1); use topk 1, or "
            f"--attention-backend {' or '.join(MLA_TREE_BACKENDS)} (page size 1) for trees",
            "ValueError", MLA_TOPK_ERRORS[draft_backend], STAGE_STARTUP)
    # flashinfer_mla_backend.py: the MLA verify has no tree mask ("TODO: Support topk > 1 with
    # custom mask"); SGLang's support matrix marks topk > 1 unsupported on these backends.
    if ctx.target_attention == "mla" and verify_backend in MLA_CHAIN_ONLY_BACKENDS:
        return _violation(
            "mla-tree-backend",
            f"attention backend {verify_backend} verifies MLA chains only (topk 1; SGLang does not "
            f"refuse it but has no tree mask there); use topk 1, or --attention-backend "
            f"{' or '.join(MLA_TREE_BACKENDS)} (page size 1) for trees",
            "", "", STAGE_UNSUPPORTED)
    # docs/advanced_features/attention_backend.md: MLA trees on FA3 and Triton with page_size=1 only.
    if ctx.target_attention == "mla" and ctx.page_size > 1 and verify_backend in MLA_TREE_BACKENDS:
        return _violation(
            "mla-tree-page-size",
            f"MLA trees (topk > 1) run on {verify_backend} with --page-size 1 only; use page size 1 "
            f"or topk 1",
            "", "", STAGE_UNSUPPORTED)
    return None


#: layers/attention/flashattention_backend.py line 3417, ``_init_sliding_window_attn_spec_metadata``'s
#: assert, word for word.
FA3_SWA_TREE_PAGE_ERROR = ("FlashAttention backend doesn't support topk > 1 speculative decoding with page size > 1 "
                           "sliding window attention")


def _swa_tree_violation(topk: int, page_size: int, ctx: ServerContext) -> RuleViolation | None:
    """A tree verified on FA3 (fa3, or fa4: the same ``FlashAttentionBackend``) for a target with a
    sliding window (:data:`tuner.sglang.model.SLIDING_WINDOW_ARCHS`: GPT-OSS, Gemma 2/3, Llama 4,
    Granite SWA) at a page size above 1. ``flashattention_backend.py`` builds the sliding-window
    metadata of every topk > 1 target verify (line 1177 eager, line 3277 CUDA-graph replay; the graph
    capture skips it) and asserts ``page_size == 1`` there (line 3417): argument handling takes it
    (``_PAGE_TREE_SPEC_BACKENDS`` has fa3), and the server dies at its first verify, SGLang's warmup
    request, after the full model load; the baseline runs. ``page_size``: as SGLang resolved it."""
    arch = ctx.target_architecture
    if topk <= 1 or page_size <= 1 or ctx.verify_backend not in ("fa3", "fa4") or arch not in SLIDING_WINDOW_ARCHS:
        return None
    return _violation(
        "swa-tree-page-size",
        f"{arch} has a sliding window, and attention backend {ctx.verify_backend} verifies its trees (topk > 1) "
        f"with --page-size 1 only (page size {page_size} given or set); use page size 1, topk 1, or "
        f"attention_backend {'triton' if arch in ARCH_BACKENDS else 'flashinfer or triton'}",
        "AssertionError", FA3_SWA_TREE_PAGE_ERROR, STAGE_STARTUP)


#: layers/attention/linear/lightning_backend.py line 88, ``LightningAttentionBackend.__init__``, word for
#: word but for the topk it names.
LIGHTNING_TREE_ERROR = ("Lightning (seg_la) linear-attention backend does not support speculative decoding with "
                        "topk > 1 (got topk={topk}); seg_la verifies a draft tree as a chain. Use "
                        "--speculative-eagle-topk 1.")


def _lightning_tree_violation(topk: int, ctx: ServerContext) -> RuleViolation | None:
    """A tree for a target whose linear layers run SGLang's Lightning backend
    (:data:`tuner.sglang.model.LIGHTNING_ARCHS`: Ling/Ring 2.5). ``LightningAttentionBackend.__init__``
    raises NotImplementedError for topk > 1 (``lightning_backend.py`` line 88; its topk is the resolved
    ``speculative_eagle_topk``, ``hybrid_linear_attn_backend.py`` line 85) as the target's model runner
    builds its attention backend, after the model load and before the HTTP port opens, whatever the
    attention backend; the baseline and chains run."""
    arch = ctx.target_architecture
    if topk <= 1 or arch not in LIGHTNING_ARCHS:
        return None
    return _violation(
        "lightning-tree",
        f"{arch}'s linear-attention layers run SGLang's Lightning (seg_la) backend, which verifies chains "
        f"only, whatever the attention backend; use --speculative-eagle-topk 1",
        "NotImplementedError", LIGHTNING_TREE_ERROR.format(topk=topk), STAGE_STARTUP)


def effective_config(requested: SpecConfig, ctx: ServerContext = ServerContext()) -> SpecConfig:
    """What SGLang will really run for ``requested``; raises ``ValueError`` naming the broken rule."""
    res = resolve(requested, ctx)
    if not res.ok:
        raise ValueError(f"{res.violation.rule}: {res.violation.message}")
    return res.effective


def resolve_max_running_requests(value: int | None, speculative: bool) -> tuple[int | None, str | None]:
    """SGLang's max_running_requests after speculative handling, and its warning if it rewrote it.

    speculative_hook.py, ``_handle_eagle_family``: unset becomes 48 when speculative decoding is on.
    Without speculation SGLang derives it from memory (``None`` here: the server decides).
    """
    if speculative and value is None:
        return SPEC_DEFAULT_MAX_RUNNING_REQUESTS, WARN_MAX_RUNNING_REQUESTS
    return value, None


def flag_name(server_arg: str) -> str:
    """SGLang's command-line spelling of a server argument: ``page_size`` -> ``--page-size``. An
    argument SGLang 0.5.23 spells otherwise than its name (``Arg(cli_name=...)`` in
    ``srt/server_args.py``: ``fp8_gemm_runner_backend`` is ``--fp8-gemm-backend``) gets the flag its
    parser registers (:mod:`tuner.sglang.server_args`); ``--fp8-gemm-runner-backend`` would be an
    unrecognized argument, on the command line and as a ``--config`` key alike."""
    from .server_args import server_args_table

    flag = "--" + server_arg.replace("_", "-")
    option = server_args_table().option(server_arg)
    if option is None or flag in option.flags:
        return flag
    return next(f for f in option.flags if f.startswith("--"))
