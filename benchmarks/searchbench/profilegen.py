"""Random but physically plausible simulator profiles: the generator half of the search test bed.

One integer seed gives one :class:`tuner.sim.profile.Profile`, drawn with ``random.Random(seed)``:

* **model**: dense (7-120 B parameters) or MoE (30-1,100 B total, 3-40 B active, 64-384 experts,
  2-8 per token), BF16 or FP8/INT4 weights, layers and hidden size from the parameter count, a
  GQA or MLA KV cache;
* **draft head** (EAGLE-3): 1-2 layers, its cost from the hidden size (0.2-2 B active parameters);
* **hardware**: TP 1, 2, 4 or 8 -- the smallest that holds the weights, sometimes one size larger --
  GPUs of 80-192 GB, 2-8 TB/s, 300-2,000 TFLOP/s; PCIe (25-180 us all-reduces, 5-25 GB/s) or
  NVLink (5-20 us, 150-450 GB/s);
* **runtime**: per-layer kernel floors, per-forward overheads, the CUDA-graph batch limit (sometimes
  below 32: a C=32 sweep then runs eager) and the verify workspace per draft token (large trees
  may not fit in memory);
* **acceptance**: per-depth rank-1 acceptance 0.45-0.92 (prompt dependent), its decay with depth
  0.78-0.97 and the rank spread of the rest 0.1-0.55.

The benchmark's train and test sets use disjoint seed ranges (:mod:`.sets`). A drawn profile whose
baseline does not fit in memory is drawn again (the next sub-seed), so every seed gives a profile.
"""

from __future__ import annotations

import math
import random

GPUS = (  # (memory GB, HBM GB/s, dense TFLOP/s): A100-, H100-, H200-, B200-class, achieved figures
    (80.0, 1800.0, 280.0), (80.0, 2900.0, 650.0), (141.0, 3400.0, 700.0), (192.0, 6000.0, 1500.0),
    (96.0, 3000.0, 600.0),
)


def _log_uniform(rng: random.Random, lo: float, hi: float) -> float:
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def draw_profile(seed: int):
    """The profile of ``seed`` (see the module docstring)."""
    from tuner.sim.model import PerfModel
    from tuner.sim.profile import Profile

    for attempt in range(50):
        data = _draw(random.Random(f"profilegen:{seed}:{attempt}"), f"gen-{seed}")
        profile = Profile.model_validate(data)
        rt = profile.runtime
        if PerfModel(profile).kv_budget_ok(None, 32, rt.default_context_tokens)[0]:
            return profile
    raise ValueError(f"profile seed {seed}: no draw fits in memory")


def _draw(rng: random.Random, name: str) -> dict:
    moe = rng.random() < 0.5
    weight_bytes = rng.choice((2.0, 1.0, 0.55)) if moe else rng.choice((2.0, 2.0, 1.0))
    if moe:
        total_b = _log_uniform(rng, 30, 1100)
        active_b = min(total_b / 4, _log_uniform(rng, 3, 40))
        layers = int(rng.uniform(24, 64))
        moe_layers = layers - rng.choice((0, 1, 3))
        num_experts = rng.choice((64, 128, 256, 384))
        experts_per_token = rng.choice((2, 4, 6, 8))
    else:
        total_b = active_b = _log_uniform(rng, 7, 120)
        layers = int(16 + 14 * math.log2(total_b))
        moe_layers = num_experts = experts_per_token = 0
    hidden = int(round(1024 * math.sqrt(max(1.0, active_b)) * rng.uniform(0.8, 1.2) / 256) * 256)
    vocab = rng.choice((32000, 128256, 151936, 163840))
    lm_head_mb = vocab * hidden * 2 / 1e6
    total_mb = total_b * 1e3 * weight_bytes
    if moe:
        dense_layer_mb = (active_b * 0.35) * 1e3 * weight_bytes / layers
        expert_mb = max(0.1, (total_mb - dense_layer_mb * layers) / (moe_layers * num_experts))
    else:
        dense_layer_mb = total_mb / layers
        expert_mb = 0.0
    mla = moe and rng.random() < 0.5
    kv_kb = layers * (576 * 2 if mla else rng.choice((4, 8)) * 128 * 2 * 2) / 1024

    gpu_mem, hbm, tflops = rng.choice(GPUS)
    hbm *= rng.uniform(0.85, 1.05)
    tflops *= rng.uniform(0.5, 1.0)
    need_gb = total_mb / 1e3 * 1.15 + 8
    tp = next((t for t in (1, 2, 4, 8) if need_gb / t < gpu_mem * 0.75), 8)
    if tp < 8 and rng.random() < 0.3:
        tp *= 2
    if need_gb / tp > gpu_mem * 0.85:
        gpu_mem = math.ceil(need_gb / tp / 0.75)  # the largest models need the largest cards
    nvlink = rng.random() < 0.55
    if nvlink:
        ar_lat, ar_bw, ar_bound = rng.uniform(5, 20), rng.uniform(150, 450), rng.choice((256.0, 512.0, 1024.0))
    else:
        ar_lat, ar_bw, ar_bound = rng.uniform(25, 180), rng.uniform(5, 25), rng.choice((64.0, 128.0, 440.0))

    draft_active = min(2.0, max(0.2, hidden * hidden * 12 / 1e9 * rng.uniform(0.7, 1.6)))
    alpha_low = rng.uniform(0.45, 0.8)
    alpha_high = min(0.92, alpha_low + rng.uniform(0.03, 0.25))
    return {
        "name": name,
        "description": f"generated: {'MoE' if moe else 'dense'} {total_b:.0f}B ({active_b:.0f}B active), "
                       f"TP{tp} {'NVLink' if nvlink else 'PCIe'}",
        "model": {"layers": layers, "moe_layers": moe_layers, "hidden_size": hidden, "num_experts": num_experts,
                  "experts_per_token": experts_per_token, "expert_mb": expert_mb, "dense_layer_mb": dense_layer_mb,
                  "lm_head_mb": lm_head_mb, "active_params_b": active_b, "total_weights_gb": total_mb / 1e3,
                  "kv_kb_per_token": kv_kb, "activation_bytes": 2},
        "draft": {"layers": rng.choice((1, 1, 1, 2)), "layer_mb": draft_active * 1e3 * 2 * rng.uniform(0.8, 1.2),
                  "lm_head_mb": rng.choice((32000, vocab)) * hidden * 2 / 1e6, "active_params_b": draft_active},
        "hardware": {"tp_size": tp, "gpu_memory_gb": float(gpu_mem), "hbm_bandwidth_gb_per_s": hbm,
                     "compute_tflops": tflops, "allreduce_latency_us": ar_lat if tp > 1 else 0.0,
                     "allreduce_bus_bandwidth_gb_per_s": ar_bw, "allreduce_latency_bound_kb": ar_bound},
        "runtime": {"layer_floor_us": rng.uniform(15, 200 if not nvlink and tp > 1 else 80),
                    "forward_overhead_ms": rng.uniform(0.8, 3.0), "draft_forward_overhead_ms": rng.uniform(0.1, 0.7),
                    "spec_step_overhead_ms": rng.uniform(0.1, 0.6), "eager_layer_overhead_us": rng.uniform(40, 160),
                    "default_cuda_graph_max_bs": rng.choice((16, 24, 32, 48, 64, 160, 160)),
                    "default_mem_fraction_static": rng.uniform(0.8, 0.9), "workspace_mb": rng.uniform(2000, 6000),
                    "workspace_kb_per_draft_token": rng.uniform(200, 1500), "default_context_tokens": 512,
                    "context_length_tokens": rng.choice((4096, 8192, 32768)), "chars_per_token": 4.0},
        "acceptance": {"alpha_low": alpha_low, "alpha_high": alpha_high, "depth_decay": rng.uniform(0.78, 0.97),
                       "alternative_share": rng.uniform(0.1, 0.55)},
    }
