"""Seeded random cases for ``benchmarks/sglang_agreement.py --fuzz N --seed S``: SGLang judges cases
nobody wrote.

Each case draws a model (:data:`sglang_agreement.MATRIX_MODELS` and :data:`VARIANTS`, config.json
shapes nobody listed there), a draft (the Llama-style EAGLE-3 head, or the target itself), a GPU of
``MATRIX_GPUS``, a tp size (1/2/4/8), the three flags over the whole space and its edges (unset,
steps 0, topk 1 with draft > steps + 1, draft 1 and 2, topk > draft), the study's algorithm (EAGLE3, or
EAGLE) and the server arguments a study puts in ``server.args`` that SGLang 0.5.23's speculative,
attention, parallel and cache handling and its launch checks read (``arg_groups/speculative_hook.py``,
``attention_hook.py``, ``model_override_base.py``, ``overrides.py``, ``parallel_hook.py``,
``kv_cache_hook.py``, ``validation_hook.py``: :data:`EXTRA_ARGS`).

The tuner's verdict (:func:`tuner_verdict`) is what a study's launch of that case meets: the
preflight checks (``tuner.config.server_arg_checks.check_server_args`` on the extra arguments, the
study's data-parallel checks of ``tuner.sglang.parallel``,
``tuner.engine.preflight.check_backends_start``'s ``gpu_refusal``), ``tuner.sglang.rules.resolve``
with the context the simulator builds (``context_from_args``; no backend given: SGLang's own,
``sglang_default_backend``, as ``tuner.sim.args`` fills it in), then SGLang's launch checks
(``tuner.sglang.parallel.launch_check_refusal`` on the resolved values). SGLang's verdict is the child's
(accepted with the resolved values, or the exception class). Every case prints as one line with its
seed and index; ``--fuzz-case I`` re-runs one.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field, replace
from pathlib import Path

from sglang_agreement import EAGLE3_HEAD, MATRIX_GPUS, MATRIX_MODELS, MLA_CONFIG, _GQA, MHA_CONFIG

from tuner.config.server_arg_checks import check_server_args, pipeline_parallel_refusal, radix_cache_refusal
from tuner.config.space import context_from_args
from tuner.sglang.attention import (launch_gpu_refusal, sglang_decides, sglang_default_backend,
                                    sglang_default_page_size)
from tuner.sglang.hardware import GpuArch
from tuner.sglang.model import facts_from_config
from tuner.sglang.parallel import data_parallel_layout, launch_check_refusal, lm_head_layout
from tuner.sglang.rules import (SpecConfig, resolve, resolve_max_running_requests, resolved_attention_backend,
                                resolved_page_size)

#: config.json shapes nobody listed in MATRIX_MODELS: other MLA dimensions, MLA without q_lora_rank,
#: a sliding window, tied embeddings, odd head counts (for tp), asymmetric K/V rows, a Gemma-3 hybrid.
VARIANTS = {
    "DeepSeek-V3 real MLA dims (kv_lora_rank 512, rope 64)": {
        **MLA_CONFIG, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
        "num_attention_heads": 8, "num_key_value_heads": 8},
    "DeepSeek-V2-Lite (DeepseekV2ForCausalLM, no q_lora_rank)": {
        **MLA_CONFIG, "architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2",
        "q_lora_rank": None, "kv_lora_rank": 32, "qk_rope_head_dim": 32, "topk_method": "greedy"},
    "Mistral (MistralForCausalLM, sliding window)": {
        **_GQA, "architectures": ["MistralForCausalLM"], "model_type": "mistral", "sliding_window": 64},
    "Qwen2 (Qwen2ForCausalLM, tied embeddings)": {
        **_GQA, "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "tie_word_embeddings": True},
    "Llama odd heads (6 heads, 3 KV heads)": {**MHA_CONFIG, "hidden_size": 384, "num_attention_heads": 6,
                                              "num_key_value_heads": 3},
    "Llama MQA (1 KV head)": {**MHA_CONFIG, "num_key_value_heads": 1},
    "Qwen3 asymmetric K/V (v_head_dim 32)": {
        **_GQA, "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "v_head_dim": 32},
    "Gemma-3 (Gemma3ForCausalLM, hybrid sliding window)": {
        **_GQA, "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "sliding_window": 64,
        "query_pre_attn_scalar": 64, "layer_types": ["sliding_attention", "full_attention"]},
    "Qwen3-Next, every 2nd layer full attention": {
        **MATRIX_MODELS["Qwen3-Next (Qwen3NextForCausalLM, hybrid linear attention)"],
        "full_attention_interval": 2},
}
FUZZ_MODELS = {**MATRIX_MODELS, **VARIANTS}

#: The server arguments a study's server.args holds that SGLang 0.5.23's speculative and attention
#: handling reads, each with the values drawn (None: not given). Chosen from speculative_hook.py
#: (_handle_eagle_family, handle_speculative_decoding), attention_hook.py, model_override_base.py
#: (get_default_attn_backend: page size and topk), overrides.py (_mla_backend_page_constraints,
#: _fa4_page_constraint), serving_hook.py (_handle_deprecated_args).
_BACKENDS = ("flashinfer", "fa3", "triton", "trtllm_mha", "trtllm_mla", "flashmla", "cutedsl_mla", "fa4",
             "torch_native", "flex_attention")
EXTRA_ARGS = {
    "attention_backend": _BACKENDS,
    "page_size": (1, 16, 32, 64, 128),
    "speculative_attention_mode": ("prefill", "decode"),
    "speculative_draft_attention_backend": ("flashinfer", "triton", "fa3", "trtllm_mha", "trtllm_mla"),
    "cuda_graph_max_bs_decode": (8, 64, 256),
    "cuda_graph_max_bs": (64,),  # an ambiguous prefix: argparse's exit 2, the tuner's check refuses it
    "max_running_requests": (8, 48, 256),
    "mem_fraction_static": (0.7, 0.9),
    "disable_cuda_graph": (True,),
    "speculative_draft_model_revision": ("main", "v1"),
    "speculative_use_rejection_sampling": (True,),
    "speculative_use_block_verification": (True,),
    "speculative_accept_threshold_single": (0.5, 1.0),
    "speculative_accept_threshold_acc": (0.5,),
    "enable_mixed_chunk": (True,),
    "disable_overlap_schedule": (True,),
    "kv_cache_dtype": ("auto", "fp8_e4m3", "bf16"),
    # parallelism, caches and modes that SGLang's parallel, cache and launch checks read
    # (parallel_hook.py, hicache_hook.py, pd_disaggregation_hook.py, moe_hook.py, and
    # validation_hook.py's check_server_args, which SGLang's launch runs after resolve_once)
    "pp_size": (2,),
    "nnodes": (2, 3),
    "chunked_prefill_size": (-1, 1000, 2048, 8192),
    "attn_dp_size": (2, 4),
    "dp_size": (2,),
    "enable_dp_attention": (True,),
    "ep_size": (2, 4),
    "moe_a2a_backend": ("none", "deepep"),
    "speculative_moe_runner_backend": ("triton", "deep_gemm"),
    "enable_torch_compile": (True,),
    "disable_radix_cache": (True,),
    "enable_hierarchical_cache": (True,),
    "disaggregation_mode": ("prefill", "decode"),
}
#: the split backends (prefill and decode apart), drawn as a pair
_SPLITS = (("fa3", "flashinfer"), ("flashinfer", "triton"), ("triton", "trtllm_mha"), ("fa3", "trtllm_mla"),
           ("flashinfer", "flashmla"), ("triton", "triton"))

STEPS = (None, 0, 1, 1, 2, 3, 3, 4, 5, 6, 8, 10)
TOPKS = (None, 1, 1, 1, 2, 2, 3, 4, 4, 8, 10)
DRAFTS = (None, 1, 2, 2, 3, 4, 4, 5, 6, 8, 8, 16, 32, 64, 128)


@dataclass
class Case:
    """One drawn launch: the model (a FUZZ_MODELS key), the draft (``head`` or ``self``), GPU, tp, the
    three flags and the extra server arguments (underscore names, as a study's server.args)."""

    index: int
    model: str
    draft: str
    gpu: str
    tp: int
    spec: SpecConfig
    args: dict = field(default_factory=dict)
    algorithm: str = "EAGLE3"  #: the study's speculative algorithm (``tuner.config.space``: EAGLE3 or EAGLE)

    def line(self, seed: int) -> str:
        """A reproducible line: the seed and index re-draw it; the rest reads it."""
        return (f"--seed {seed} --fuzz-case {self.index}: model={self.model!r} draft={self.draft} "
                f"gpu={self.gpu} tp={self.tp} {self.algorithm} {self.spec.label()} "
                f"args={json.dumps(self.args, sort_keys=True)}")


def draw(rng: random.Random, index: int) -> Case:
    """One case from ``rng`` (the whole distribution; edges drawn on purpose)."""
    model = rng.choice(sorted(FUZZ_MODELS))
    steps, topk, draft = rng.choice(STEPS), rng.choice(TOPKS), rng.choice(DRAFTS)
    if rng.random() < 0.15:  # all three unset: SGLang's auto choice
        steps = topk = draft = None
    elif rng.random() < 0.1:  # topk 1 with draft > steps + 1 (the rewrite)
        steps, topk, draft = rng.choice((1, 2, 3)), 1, rng.choice((5, 8, 64))
    elif rng.random() < 0.1:  # topk > draft
        steps, topk, draft = rng.choice((1, 2, 3)), rng.choice((4, 8)), rng.choice((1, 2, 3))
    args: dict = {}
    for name, values in EXTRA_ARGS.items():
        if rng.random() < (0.35 if name in ("attention_backend", "page_size") else 0.08):
            args[name] = rng.choice(values)
    if "attention_backend" not in args and rng.random() < 0.08:
        args["prefill_attention_backend"], args["decode_attention_backend"] = rng.choice(_SPLITS)
    return Case(index, model, "self" if rng.random() < 0.15 else "head", rng.choice(MATRIX_GPUS),
                rng.choice((1, 1, 2, 4, 8)), SpecConfig(steps, topk, draft), args,
                "EAGLE" if rng.random() < 0.2 else "EAGLE3")


def draw_cases(n: int, seed: int) -> list[Case]:
    rng = random.Random(seed)
    return [draw(rng, i) for i in range(n)]


def argv(case: Case, model_dir: str, head_dir: str, speculative: bool = True) -> list[str]:
    """SGLang's command line for ``case`` (a CPU run's fixed flags as the matrix's); ``speculative``
    False: the study's baseline, without any speculative flag."""
    out = ["--model-path", model_dir, "--skip-tokenizer-init", "--tp-size", str(case.tp), "--device", "cuda"]
    if "chunked_prefill_size" not in case.args:
        out += ["--chunked-prefill-size", "4096"]
    if speculative:
        out += ["--speculative-algorithm", case.algorithm,
                "--speculative-draft-model-path", model_dir if case.draft == "self" else head_dir]
        for name, value in case.spec.server_args().items():
            out += ["--" + name.replace("_", "-"), str(value)]
    if "mem_fraction_static" not in case.args:
        out += ["--mem-fraction-static", "0.8"]
    for name, value in case.args.items():
        if not speculative and name.startswith("speculative_"):
            continue
        flag = "--" + name.replace("_", "-")
        out += [flag] if value is True else [flag, str(value)]
    return out


def launch_check_args(case: Case, layout, ctx, decides: bool) -> dict:
    """The server arguments SGLang's launch checks read, as SGLang resolved them for ``case``:
    ``chunked_prefill_size`` as :func:`argv` gives it (4096 unless the case sets it), ``dp_size`` after
    the data-parallel layout (``enable_dp_attention`` turns ``dp_size`` into attention DP), the page
    size SGLang resolves (None where SGLang decides the backend: not known)."""
    args = {k: case.args.get(k) for k in ("nnodes", "pp_size", "disaggregation_mode", "enable_multi_layer_eagle")}
    args["chunked_prefill_size"] = case.args.get("chunked_prefill_size", 4096)
    args["dp_size"] = layout.dp_size
    args["page_size"] = None if decides else resolved_page_size(ctx, case.spec.eagle_topk)
    return args


def tuner_verdict(case: Case) -> dict:
    """What the tuner says SGLang does with ``case`` at launch: ``{"ok": False, "exception": cls}``,
    or ``{"ok": True, ...}`` with the values it expects SGLang to resolve (None: not known)."""
    try:
        # pipeline parallelism and the hierarchical cache without a radix cache are refused when the
        # study file loads too, but SGLang says so late (kv_cache_hook.py after the speculative hook, then
        # validation_hook.py after argument handling): their classes, in SGLang's order, below
        check_server_args({k: v for k, v in case.args.items()
                           if k not in ("pp_size", "enable_hierarchical_cache")}, "server.args")
    except ValueError as exc:
        return {"ok": False, "exception": "SystemExit", "why": str(exc)[:120]}
    cfg = FUZZ_MODELS[case.model]
    target = facts_from_config(cfg, case.model)
    draft = target if case.draft == "self" else facts_from_config(EAGLE3_HEAD, "eagle3 head")
    gpu = GpuArch.parse(case.gpu)
    args = dict(case.args)
    decides = sglang_decides(target) and args.get("attention_backend") is None
    if decides and (case.spec.eagle_topk or 1) > 1:
        # SGLang's own backend code the tuner does not mirror: the tuner keeps such studies to chains
        return {"ok": None, "why": "SGLang decides the backend of this architecture; the tuner keeps chains"}
    if args.get("attention_backend") is None and not decides:
        # SGLang's own choice, as the simulator fills it in (tuner/sim/args.py, _attention_backend)
        topk, page = case.spec.eagle_topk, args.get("page_size")  # as given: SGLang reads them so
        split = bool(args.get("prefill_attention_backend") or args.get("decode_attention_backend"))
        args["attention_backend"] = sglang_default_backend(target, gpu, topk, page, split)
        args["page_size"] = sglang_default_page_size(target, gpu, topk, page)
    if target.dsa:
        args["page_size"] = 64  # deepseek_v2.py, as tuner.engine.facts.space_for sets it
    ctx = replace(context_from_args(case.algorithm, args, target.attention, draft.attention, target.architecture),
                  gpu=gpu)
    res = resolve(case.spec, ctx)
    early = res.violation is not None and res.violation.rule in ("model-backend", "mamba-cache", "flex-attention-spec")
    if early:  # model_hook.py (its backend checks, then a hybrid model's radix cache), then attention_hook.py's
        # flex check: before the GPU checks below
        return {"ok": False, "exception": res.violation.sglang_exception, "why": res.violation.rule}
    # attention_hook.py (handle_attention_backend_compatibility), before the speculative hook: the GPU
    # checks of tuner.engine.preflight.check_backends_start that SGLang makes during argument handling
    if ctx.prefill_attention_backend == "cutedsl_mla":
        return {"ok": False, "exception": "AssertionError", "why": "prefill cutedsl_mla"}
    # the KV-cache dtype as given ("auto": SGLang's default), which trtllm_mla, cutedsl_mla and SM120's
    # trtllm_mha prefill check in the same pass (QA qa208: trtllm_mha on SM120 with fp8_e4m3 "agreed" on
    # nothing the tuner said)
    refusal = launch_gpu_refusal(resolved_attention_backend(ctx), *ctx.backends(), gpu, target.attention,
                                 kv_cache_dtype=str(case.args.get("kv_cache_dtype", "auto")))
    if refusal is not None:
        return {"ok": False, "exception": refusal.partition(":")[0], "why": f"{refusal[:40]} on {case.gpu}"}
    # the study's data-parallel checks (tuner.config.study.data_parallel_problem), refused when the study
    # file loads; SGLang's parallel_hook.py and overrides.py, after the attention hook, before the
    # speculative one
    layout = data_parallel_layout(case.args, case.tp)
    error = layout.error or lm_head_layout(case.args, layout, case.tp)[1]
    if error is not None:
        return {"ok": False, "exception": error.partition(":")[0], "why": error[:120]}
    if res.violation is not None and res.violation.at_launch:
        return {"ok": False, "exception": res.violation.sglang_exception, "why": res.violation.rule}
    if radix_cache_refusal(case.args) is not None:  # kv_cache_hook.py, after the speculative hook
        return {"ok": False, "exception": "ValueError", "why": "hierarchical cache without a radix cache"}
    # validation_hook.py's check_server_args, after resolve_once, on the resolved values, as the simulator
    # runs it (tuner/sim/args.py, resolve_launch): nodes, pipeline parallelism with speculation (EAGLE and
    # NEXTN on a prefill node only), DP replicas across nodes, chunked_prefill_size against the page size
    refusal = launch_check_refusal(launch_check_args(case, layout, ctx, decides), case.tp, case.algorithm)
    if refusal is not None:
        return {"ok": False, "exception": refusal.partition(":")[0], "why": refusal[:120]}
    if pipeline_parallel_refusal(case.args) is not None:
        # SGLang runs it (EAGLE on a prefill node); the tuner refuses it all the same: a prefill node
        # alone answers no benchmark
        return {"ok": None, "why": "the tuner refuses pipeline parallelism; SGLang runs EAGLE on a prefill node"}
    eff = res.effective
    return {"ok": True, "steps": eff.num_steps, "topk": eff.eagle_topk, "draft": eff.num_draft_tokens,
            "backend": None if decides else resolved_attention_backend(ctx),
            "page": None if decides else resolved_page_size(ctx, case.spec.eagle_topk),
            "mrr": resolve_max_running_requests(case.args.get("max_running_requests"), True)[0],
            "later": res.violation and f"{res.violation.stage}: {res.violation.rule}"}


def compare(want: dict, got: dict) -> tuple[bool, str]:
    """Whether the tuner's verdict is SGLang's (None: the tuner does not judge it), and the difference."""
    if want["ok"] is None:
        return None, f"not judged: {want['why']}; SGLang {'accepts' if got['ok'] else got.get('exception')}"
    if want["ok"] != got["ok"]:
        if want["ok"]:
            return False, (f"tuner accepts; SGLang refuses: {got.get('exception')}: "
                           f"{(got.get('message') or '')[:160]} @ {got.get('where', '')[:120]}")
        return False, (f"tuner refuses ({want['exception']}, {want['why']}); "
                       f"SGLang accepts on {got.get('backend')}")
    if not want["ok"]:
        same = want["exception"] == got.get("exception")
        return same, (f"both refuse: tuner {want['exception']} ({want['why']}), "
                      f"SGLang {got.get('exception')}: {(got.get('message') or '')[:100]}")
    diff = [f"{k} tuner {want[k]} SGLang {got.get(k)}"
            for k in ("steps", "topk", "draft", "backend", "page", "mrr")
            if want[k] is not None and want[k] != got.get(k)]
    later = f" (tuner expects later: {want['later']})" if want["later"] else ""
    return not diff, ("; ".join(diff) if diff else
                      f"both accept on {got.get('backend')}, page {got.get('page')}, "
                      f"draft {got.get('draft')}{later}")


def child_cases(cases: list[Case], tmp: Path, speculative: bool = True) -> list[dict]:
    """The child's case records (``argv``, ``gpu``) for ``cases`` (``speculative`` False: their
    baselines); writes the config.json files."""
    head = tmp / "fuzz-head"
    head.mkdir(exist_ok=True)
    (head / "config.json").write_text(json.dumps(EAGLE3_HEAD))
    dirs = {}
    for n, (name, cfg) in enumerate(sorted(FUZZ_MODELS.items())):
        folder = tmp / f"fuzz-model{n}"
        folder.mkdir(exist_ok=True)
        (folder / "config.json").write_text(json.dumps(cfg))
        dirs[name] = str(folder)
    return [{"name": f"fuzz {c.index}", "gpu": c.gpu, "argv": argv(c, dirs[c.model], str(head), speculative)}
            for c in cases]


# -- the export round trip: tuner.results.export.server_mapping through SGLang's --config loader --

#: values drawn per option type (the table's ``type``); strings include what YAML and argv treat
#: specially (spaces, a leading dash, JSON, non-ASCII, YAML words)
_VALUES = {"int": (0, 1, 7, 64, -1, 4096), "human_int": (1, 64, 4096), "float": (0.0, 0.5, 0.85, 1e-3, 2.5),
           "str": ("x", "a b", "-x", "-1", '{"k": 1}', "über", "yes", "null", "on", "1.0", "path/with space",
                   "~", "#hash", "a: b")}


def draw_server_args(rng: random.Random) -> dict:
    """A random study's ``server.args``: options of SGLang 0.5.23's table with values of their type,
    kept only where the study's own check (``check_server_args``) takes them, as a study file would."""
    from tuner.sglang.server_args import server_args_table

    options = server_args_table().options
    out: dict = {}
    for option in rng.sample(options, rng.choice((1, 3, 6, 10))):
        if option.action in ("store_true", "boolean_optional", "store_const"):
            value = rng.choice((True, False))
        else:
            pool = option.choices or _VALUES.get(option.type, _VALUES["str"])
            many = option.nargs not in (None, "?")
            count = option.nargs if isinstance(option.nargs, int) else rng.choice((1, 2, 3))
            value = [rng.choice(pool) for _ in range(count)] if many else rng.choice(pool)
        try:
            check_server_args({option.dest: value}, "server.args")
        except ValueError:
            continue
        out[option.dest] = value
    return out


@dataclass
class ExportCase:
    index: int
    spec: SpecConfig
    args: dict

    def line(self, seed: int) -> str:
        return (f"--seed {seed} --fuzz-case {self.index} (export): {self.spec.label()} "
                f"args={json.dumps(self.args, sort_keys=True, ensure_ascii=False, default=str)}")


def draw_export_cases(n: int, seed: int) -> list[ExportCase]:
    rng = random.Random(f"export-{seed}")
    cases = []
    for i in range(n):
        steps, topk = rng.choice((1, 2, 3, 5)), rng.choice((1, 1, 2, 4))
        cases.append(ExportCase(i, SpecConfig(steps, topk, steps + 1 if topk == 1 else rng.choice((4, 8))),
                                draw_server_args(rng)))
    return cases


def export_child_cases(cases: list[ExportCase], tmp: Path, root: Path) -> tuple[list, list[dict], list]:
    """For each case: the demo study with its args as ``server.args``, exported
    (``server_mapping``, written by ``ServerExport.yaml_text``), as SGLang reads it back (``--config``
    plus the options its loader refuses on the command line, as the export's warning says) and as the
    launcher's argv (without host and port): ``(cases exported, child records of kind pair, (case,
    why) for each case the tuner refuses)``."""
    from tuner.config.space import SearchSpace
    from tuner.config.study import load_study
    from tuner.engine.facts import prepare, space_for
    from tuner.results.export import ServerExport, server_mapping
    from tuner.server.command import arg_tokens, config_refused

    model = tmp / "export-model"
    model.mkdir(exist_ok=True)
    (model / "config.json").write_text(json.dumps(MHA_CONFIG))
    base = load_study(root / "studies" / "sim-demo.yaml")
    suite = {"name": "quick", "sweep": {"concurrencies": [1, 32]}}
    exported, records, refused = [], [], []
    for case in cases:
        server = base.server.model_copy(update={"model_path": str(model), "draft_model_path": str(model),
                                                "args": case.args})
        config = base.model_copy(update={"server": server})
        try:
            space = SearchSpace.load(config.search_space)
            space, _ = space_for(space, config, prepare(config, space)[2])
            mapping, argv, plan = server_mapping(config, space, suite, case.spec)
        except ValueError as exc:  # ConfigError too: the study cannot be launched
            refused.append((case, str(exc)))
            continue
        path = tmp / f"export-{case.index}.yaml"
        path.write_text(ServerExport("fuzz", "-", None, case.spec, mapping, argv, [], {}).yaml_text())
        extra = [t for name, value in plan.server_args.items() if config_refused(name)
                 for t in arg_tokens(name, value)]
        launch = argv[3:]  # without `python -m sglang.launch_server`
        exported.append(case)
        records.append({"name": f"export {case.index}", "kind": "pair",
                        "argv": ["--config", str(path), *extra], "argv_b": launch})
    return exported, records, refused
