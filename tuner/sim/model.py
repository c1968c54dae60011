"""The simulator's performance model: how long SGLang's forward passes take, in model seconds.

One forward pass over ``T`` tokens on a tensor-parallel group costs

* a fixed per-forward overhead (scheduler, sampling, CPU-GPU sync; ``runtime.forward_overhead_ms``);
* per layer, the slowest of: a latency floor of small-batch kernels (``layer_floor_us``), the
  memory reads (the dense weights, the distinct routed experts the ``T`` tokens touch, about
  ``E * (1 - (1 - k/E)**T)``, and the KV cache) over HBM bandwidth, and the FLOPs over compute;
* two all-reduces per layer when ``tp_size > 1`` (plus the embedding's all-reduce and the logits
  gather): a latency each, plus the payload beyond what the low-latency protocol hides
  (``allreduce_latency_bound_kb``) over the bus bandwidth;
* a kernel-launch overhead per layer when the batch runs eager (above ``--cuda-graph-max-bs``).

An autoregressive decode step for ``B`` running requests is one forward over ``B`` tokens. An
EAGLE-3 step is ``num_steps`` draft forwards (the one-layer head pays its all-reduces too), one
draft-extend forward, and one verify forward over ``B * num_draft_tokens`` tokens. Acceptance lives
in :mod:`tuner.sim.acceptance`; profiles in :mod:`tuner.sim.profile`. Everything here is closed
form, so :meth:`PerfModel.expected_figures` is cheap enough to call thousands of times.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from ..config.dataset import estimate_tokens
from ..sglang.rules import SpecConfig
from . import acceptance
from .profile import Profile, list_profiles, load_profile

__all__ = ["ExpectedFigures", "PerfModel", "Profile", "list_profiles", "load_profile"]

_MB = 1e6
_KB = 1e3
_GB = 1e9
# Collectives per forward besides the two per layer (attention output, MLP/MoE output): the
# vocab-parallel embedding's all-reduce and the LM head's logits gather (SGLang's
# VocabParallelEmbedding and LogitsProcessor under tensor parallelism).
_EDGE_COLLECTIVES = 2


@dataclass(frozen=True)
class ExpectedFigures:
    """What the benchmark suite should measure, in model time.

    ``single_tok_per_s``: mean over prompts x lengths of completion tokens / end-to-end latency
    (prefill included). ``tok_per_s``: aggregate tok/s at each concurrency (total tokens / time to
    the last completion). ``accept_length``: mean accepted tokens per verify step over the prompts
    (1.0 for autoregressive decoding).
    """

    single_tok_per_s: float
    tok_per_s: dict[int, float] = field(default_factory=dict)
    accept_length: float = 1.0


class PerfModel:
    """Timing and acceptance for one :class:`Profile`. Stateless apart from caches; thread-safe."""

    def __init__(self, profile: Profile, noise: float = 0.0):
        self.profile = profile
        self.noise = noise
        p = profile
        self._tp = p.hardware.tp_size
        self._hbm_bytes_per_s = p.hardware.hbm_bandwidth_gb_per_s * _GB
        self._flops_per_s = p.hardware.compute_tflops * 1e12
        self._floor_s = p.runtime.layer_floor_us * 1e-6
        self._eager_layer_s = p.runtime.eager_layer_overhead_us * 1e-6

    # ---------------------------------------------------------------- building blocks
    def experts_touched(self, tokens: float) -> float:
        """Expected distinct routed experts one MoE layer reads for ``tokens`` tokens."""
        m = self.profile.model
        if not m.moe_layers or tokens <= 0:
            return 0.0
        return m.num_experts * (1.0 - (1.0 - m.experts_per_token / m.num_experts) ** tokens)

    def allreduce_time_s(self, tokens: float) -> float:
        """One all-reduce of the hidden states of ``tokens`` tokens (0 without tensor parallelism)."""
        hw = self.profile.hardware
        if self._tp <= 1:
            return 0.0
        payload = tokens * self.profile.model.hidden_size * self.profile.model.activation_bytes
        excess = max(0.0, payload - hw.allreduce_latency_bound_kb * _KB)
        # NCCL convention: a ring all-reduce moves 2(n-1)/n of the payload at the bus bandwidth.
        ring = 2.0 * (self._tp - 1) / self._tp
        return hw.allreduce_latency_us * 1e-6 + excess * ring / (hw.allreduce_bus_bandwidth_gb_per_s * _GB)

    def _layer_time_s(self, weight_bytes: float, kv_bytes: float, flops: float) -> float:
        mem_s = (weight_bytes / self._tp + kv_bytes) / self._hbm_bytes_per_s
        return max(self._floor_s, mem_s, flops / self._tp / self._flops_per_s)

    def forward_time_s(self, tokens: float, *, context_tokens: float = 0.0, graph: bool = True) -> float:
        """One target-model forward over ``tokens`` tokens attending to ``context_tokens`` cached
        tokens in total (summed over the batch)."""
        m, rt = self.profile.model, self.profile.runtime
        kv_per_layer = context_tokens * m.kv_kb_per_token * _KB / m.layers
        flops_per_layer = 2.0 * m.active_params_b * 1e9 / m.layers * tokens
        dense = m.dense_layer_mb * _MB
        moe_bytes = dense + self.experts_touched(tokens) * m.expert_mb * _MB
        layers_s = ((m.layers - m.moe_layers) * self._layer_time_s(dense, kv_per_layer, flops_per_layer)
                    + m.moe_layers * self._layer_time_s(moe_bytes, kv_per_layer, flops_per_layer))
        head_s = m.lm_head_mb * _MB / self._tp / self._hbm_bytes_per_s
        comm_s = (2 * m.layers + _EDGE_COLLECTIVES) * self.allreduce_time_s(tokens)
        eager_s = 0.0 if graph else m.layers * self._eager_layer_s
        return rt.forward_overhead_ms * 1e-3 + layers_s + head_s + comm_s + eager_s

    def draft_forward_time_s(self, tokens: float, *, graph: bool = True) -> float:
        """One forward of the EAGLE-3 draft head over ``tokens`` tokens (it is tensor-parallel too)."""
        d, rt = self.profile.draft, self.profile.runtime
        flops = 2.0 * d.active_params_b * 1e9 / d.layers * tokens
        layer_s = self._layer_time_s(d.layer_mb * _MB, 0.0, flops)
        head_s = d.lm_head_mb * _MB / self._tp / self._hbm_bytes_per_s
        comm_s = (2 * d.layers + _EDGE_COLLECTIVES) * self.allreduce_time_s(tokens)
        eager_s = 0.0 if graph else d.layers * self._eager_layer_s
        return rt.draft_forward_overhead_ms * 1e-3 + d.layers * layer_s + head_s + comm_s + eager_s

    # ---------------------------------------------------------------- the public contract
    def prompt_tokens(self, text: str) -> int:
        """Token count the simulator assumes for a prompt: a CJK (wide East Asian) character one
        token, other text ``chars_per_token`` characters a token, at least 1. The tuner's own
        estimate (:func:`tuner.config.dataset.estimate_tokens`), shared so that a request the
        tuner sizes and the context length the simulator enforces count alike. (QA: a 9,000-character
        Chinese prompt, some 9,000 tokens to SGLang's tokenizers and over an 8,192 context, was 2,250
        tokens here and served.)"""
        return estimate_tokens(text, self.profile.runtime.chars_per_token)

    def prefill_time_s(self, prompt_tokens: int, spec: SpecConfig | None = None) -> float:
        """One prefill (extend) batch of ``prompt_tokens`` tokens in total; eager, as SGLang runs
        prefill without CUDA graphs. With ``spec`` the draft head prefills the same tokens."""
        t = self.forward_time_s(prompt_tokens, context_tokens=prompt_tokens / 2, graph=False)
        if spec is not None:
            t += self.draft_forward_time_s(prompt_tokens, graph=False)
        return t

    def decode_step_time_s(self, batch_size: int, spec: SpecConfig | None,
                           cuda_graph_max_bs: int | None = None,
                           context_tokens: float | None = None) -> float:
        """One scheduler step for ``batch_size`` running requests, in model seconds.

        ``spec`` None: autoregressive, one token per request. ``spec`` (an effective, valid
        setting): ``num_steps`` draft forwards (``B`` tokens at the first, ``B * topk`` after), a
        draft extend over the ``B * (num_steps + 1)`` accepted slots, and a verify forward over
        ``B * num_draft_tokens`` tokens. CUDA graphs cover batches up to ``cuda_graph_max_bs``
        requests (SGLang counts the verify graph's batch in requests, not tokens); above it the
        step runs eager (0: no graph at all; None: the profile's default). ``context_tokens`` is each request's cached context (default: the
        profile's ``default_context_tokens``).
        """
        b = max(1, int(batch_size))
        max_bs = self.profile.runtime.default_cuda_graph_max_bs if cuda_graph_max_bs is None else cuda_graph_max_bs
        graph = b <= max_bs
        ctx = (context_tokens if context_tokens is not None
               else self.profile.runtime.default_context_tokens) * b
        if spec is None or not spec.num_steps:
            return self.forward_time_s(b, context_tokens=ctx, graph=graph)
        steps, topk, draft = acceptance.tree_shape(spec)
        t = self.profile.runtime.spec_step_overhead_ms * 1e-3
        t += self.draft_forward_time_s(b, graph=graph)
        t += (steps - 1) * self.draft_forward_time_s(b * topk, graph=graph)
        t += self.draft_forward_time_s(b * (steps + 1), graph=graph)
        t += self.forward_time_s(b * draft, context_tokens=ctx, graph=graph)
        return t

    def predictability(self, prompt_text: str) -> float:
        """How guessable a prompt's continuation is, deterministic in [0, 1]: code/JSON > haiku."""
        return acceptance.predictability(prompt_text)

    def mean_accept_length(self, spec: SpecConfig, predictability: float) -> float:
        """Expected tokens per verify step per request, bonus token included (>= 1)."""
        return acceptance.mean_accept_length(self.profile.acceptance, spec, predictability)

    def sample_accept_length(self, spec: SpecConfig, predictability: float, rng: random.Random) -> int:
        """One verify step of one request: 1 .. num_steps + 1, mean == :meth:`mean_accept_length`."""
        return acceptance.sample_accept_length(self.profile.acceptance, spec, predictability, rng)

    def step_noise(self, rng: random.Random, noise: float | None = None) -> float:
        """Multiplicative jitter for one step's time: mean 1, relative spread ``noise`` (default:
        the ``noise`` given to the constructor, i.e. ``--sim-noise``), clipped to +-3 sigma."""
        r = self.noise if noise is None else noise
        if r <= 0:
            return 1.0
        z = max(-3.0, min(3.0, rng.gauss(0.0, 1.0)))
        return max(0.05, 1.0 + r * z)

    def kv_budget_ok(self, spec: SpecConfig | None, max_running_requests: int, context_len: int,
                     mem_fraction_static: float | None = None,
                     cuda_graph_max_bs: int | None = None) -> tuple[bool, str]:
        """Whether weights, the speculative workspace and the KV cache of ``max_running_requests``
        requests of ``context_len`` tokens fit in ``mem_fraction_static`` of each GPU.

        The speculative part grows with draft tokens x requests (verify buffers, for the larger of
        ``max_running_requests`` and ``cuda_graph_max_bs``) and with requests x context (KV cache,
        plus the ``max(num_steps * topk, num_draft_tokens)`` slots a spec step allocates).

        Returns ``(True, "")`` or ``(False, message)`` where the message reads like SGLang's
        (python/sglang/srt/model_executor/pool_configurator.py, ``MemoryPoolConfig``).
        """
        p = self.profile
        frac = mem_fraction_static if mem_fraction_static is not None else p.runtime.default_mem_fraction_static
        budget = p.hardware.gpu_memory_gb * _GB * frac
        weights = p.model.total_weights_gb * _GB / self._tp
        workspace = p.runtime.workspace_mb * _MB
        per_req = 0
        if spec is not None and spec.num_steps:
            weights += (p.draft.layers * p.draft.layer_mb + p.draft.lm_head_mb) * _MB / self._tp
            _, _, draft = acceptance.tree_shape(spec)
            # Verify buffers (logits, hidden states, tree masks) are allocated for the larger of the
            # running batch and the batch the CUDA graphs are captured for.
            graph_bs = cuda_graph_max_bs or p.runtime.default_cuda_graph_max_bs
            workspace += (max(max_running_requests, graph_bs) * draft
                          * p.runtime.workspace_kb_per_draft_token * _KB)
            # KV slots a spec decode step allocates per request, as SGLang's
            # spec_decode_alloc_len_per_request (python/sglang/srt/utils/common.py), page size 1.
            steps, topk, _ = acceptance.tree_shape(spec)
            per_req = max(steps * topk, draft)
        kv_tokens = max_running_requests * (context_len + per_req)
        kv = kv_tokens * p.model.kv_kb_per_token * _KB
        need = weights + workspace + kv
        if need <= budget:
            return True, ""
        return False, (
            "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
            f"Current value: mem_fraction_static={frac} (simulator profile {p.name}: "
            f"{need / _GB:.1f} GB needed per GPU for weights, speculative workspace and the KV cache "
            f"of {max_running_requests} requests x {context_len + per_req} tokens; "
            f"{budget / _GB:.1f} GB available)"
        )

    # ---------------------------------------------------------------- suite-level expectations
    def expected_figures(self, spec: SpecConfig | None, *, prompts: list[str], single_lengths: list[int],
                         concurrencies: list[int], sweep_tokens: int,
                         cuda_graph_max_bs: int | None = None) -> ExpectedFigures:
        """The figures the benchmark suite should measure against this model, in model time.

        Single request (each prompt x length): prefill, then ``(L - 1) / a`` decode steps at batch 1
        (``a`` = mean accept length; the first token comes from prefill). Sweep at ``C``: request
        ``i`` uses ``prompts[i % n]``; all ``C`` are prefilled in one batch at t=0, then decode
        together; a request leaves the batch after ``(sweep_tokens - 1) / a_i`` steps, so the batch
        shrinks as the easy prompts finish and the aggregate ends with the slowest one.
        """
        if not prompts:
            raise ValueError("expected_figures needs at least one prompt")
        speculative = spec is not None and bool(spec.num_steps)
        preds = [self.predictability(t) for t in prompts]
        ptoks = [self.prompt_tokens(t) for t in prompts]
        accepts = [self.mean_accept_length(spec, q) if speculative else 1.0 for q in preds]
        prefill_spec = spec if speculative else None

        rates = []
        for a, pt in zip(accepts, ptoks):
            for length in single_lengths:
                step = self.decode_step_time_s(1, spec if speculative else None, cuda_graph_max_bs,
                                               context_tokens=pt + length / 2)
                e2e = self.prefill_time_s(pt, prefill_spec) + max(0, length - 1) / a * step
                rates.append(length / e2e)
        single = sum(rates) / len(rates) if rates else 0.0

        tok_per_s: dict[int, float] = {}
        for c in concurrencies:
            n = len(prompts)
            reqs = [(accepts[i % n], ptoks[i % n]) for i in range(c)]
            t = self.prefill_time_s(sum(pt for _, pt in reqs), prefill_spec)
            ctx = sum(pt for _, pt in reqs) / c + sweep_tokens / 2
            done_steps = 0.0
            # Requests leave in order of their step count (fewest first, i.e. highest acceptance).
            need = sorted((max(0, sweep_tokens - 1) / a) for a, _ in reqs)
            for i, steps in enumerate(need):
                running = c - i
                if steps > done_steps:
                    step_s = self.decode_step_time_s(running, spec if speculative else None,
                                                     cuda_graph_max_bs, context_tokens=ctx)
                    t += (steps - done_steps) * step_s
                    done_steps = steps
            tok_per_s[c] = c * sweep_tokens / t
        return ExpectedFigures(single, tok_per_s, sum(accepts) / len(accepts))
