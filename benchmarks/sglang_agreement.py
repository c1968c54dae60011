"""Do tuner/sglang/ and SGLang 0.5.23 agree? Runs SGLang's own code on CPU and prints each case.

SGLang's parser and resolver (``prepare_server_args``, ``ServerArgs.resolve_once``: every
argument-handling hook of ``arg_groups/pipeline.py``), then its launch checks
(``ServerArgs.check_server_args``, ``arg_groups/validation_hook.py``, which its Engine runs next, before
loading anything: ``entrypoints/engine.py`` line 1165) run in a child interpreter that has a CPU
torch and transformers, against an unpacked SGLang wheel (``--sglang-src``), with the GPU generation
set by SGLang's own ``override_platform`` (``srt/runtime_context.py``: sm80, sm89, sm90, sm100,
sm120 as its platform facts, and ``torch.cuda.get_device_capability`` for the one hook that asks
torch), a tiny fake ``config.json`` per model (:data:`MATRIX_MODELS`) and
``--skip-tokenizer-init``; no weights exist, none are loaded. GPU-only packages SGLang imports at
module level (flashinfer, sgl_kernel, triton, ...) are inert stand-ins (``tools/sglang_server_args.py``).

Cases, each against the tuner's answer:

* every rule case of ``tests/sglang/test_rules.py`` that SGLang decides during argument handling
  (refused or accepted, the exception class, the resolved draft tokens, max_running_requests 48);
* SGLang's attention-backend choice for MLA/MHA on sm90/sm100 at topk 1 and 4
  (``tuner.sglang.attention.sglang_default_backend``);
* the matrix, every model of :data:`MATRIX_MODELS` (Llama 3, Qwen3, Qwen3-MoE, Llama 4, GPT-OSS,
  GLM-4.5, MiniMax-M2, Qwen3-Next, Granite SWA, Olmo2, LFM2, DeepSeek-V3, Kimi K2, DeepSeek-V3.2) on every GPU of
  :data:`MATRIX_GPUS` with a Llama-style EAGLE-3 head as the draft: at topk 1 and 4 with no
  backend given, SGLang's backend or its refusal against ``facts_from_config`` +
  ``sglang_default_backend`` + ``resolve``; then the backend the tuner pins
  (``choose_attention_backend``) given to SGLang at topk 1 and, when the tuner keeps trees, 4; and a
  study that sets flashinfer or triton itself. Case names read ``matrix|model|GPU|topk|how``;
* the MLA draft backends' topk-1 limit: ``FlashInferMLAMultiStepDraftBackend`` and
  ``FlashMLAMultiStepDraftBackend`` constructed with topk 2 (their ValueError text);
* every export shape (``tuner.results.export.server_mapping`` of the demo study, adaptive included)
  loaded through SGLang's ``--config`` loader (``ConfigArgumentMerger``) and parsed back.

    pip download --no-deps sglang==0.5.23 -d /tmp/sg && unzip -q /tmp/sg/*.whl -d /tmp/sglang-src
    python3 -m venv /tmp/agree && /tmp/agree/bin/pip install 'torch==2.13.0+cpu' transformers dill triton \\
        xgrammar 'openai==2.8.0' 'apache-tvm-ffi==0.1.11' msgspec numpy psutil requests pyyaml packaging \\
        pybase64 orjson pydantic fastapi uvloop pyzmq setproctitle einops safetensors huggingface_hub tqdm regex aiohttp
    python benchmarks/sglang_agreement.py --sglang-src /tmp/sglang-src --python /tmp/agree/bin/python

Prints one line per case and ``N agree, M disagree``; exits 1 on any disagreement.

``--fuzz N --seed S`` judges cases nobody wrote instead (``benchmarks/sglang_fuzz.py``): N drawn launches
(models of :data:`MATRIX_MODELS` and config.json variants, draft, GPU, tp, the three flags over their
edges, the server arguments SGLang's speculative and attention handling reads), SGLang's verdict against
the tuner's (the study's preflight checks, then ``resolve``); where SGLang refuses, whether it refuses
the study's baseline (no speculation) alike; then N random studies' exports (``server_mapping`` with
random ``server.args``) read back through ``--config`` against the launcher's argv, every ``ServerArgs``
field. Each disagreement prints with ``--seed S --fuzz-case I``, which re-runs that case alone;
``--quiet`` prints the disagreements only.

    python benchmarks/sglang_agreement.py --sglang-src /tmp/sglang-src --python /tmp/agree/bin/python \
        --fuzz 2000 --seed 1 --quiet

Not in CI: the
child environment (a CPU torch of ~200 MB and transformers) is too much to install in every CI run
of a tool that must not depend on them; see the README (Development, Tests).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tuner.sglang.attention import (MLA_TOPK_ERRORS, choose_attention_backend, sglang_decides,  # noqa: E402
                                    sglang_default_backend, sglang_default_page_size)
from tuner.sglang.hardware import GpuArch  # noqa: E402
from tuner.sglang.model import facts_from_config  # noqa: E402
from tuner.sglang.rules import ServerContext, SpecConfig, resolve, resolved_page_size  # noqa: E402

MLA_CONFIG = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 256,
              "intermediate_size": 512, "moe_intermediate_size": 128, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 4, "kv_lora_rank": 64, "q_lora_rank": 96,
              "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32, "n_routed_experts": 4,
              "num_experts_per_tok": 2, "n_shared_experts": 1, "first_k_dense_replace": 1,
              "vocab_size": 1024, "max_position_embeddings": 4096, "torch_dtype": "bfloat16",
              "rope_theta": 10000.0, "rms_norm_eps": 1e-6, "n_group": 1, "topk_group": 1,
              "routed_scaling_factor": 1.0, "norm_topk_prob": True, "scoring_func": "sigmoid",
              "topk_method": "noaux_tc"}
MHA_CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256,
              "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "vocab_size": 1024, "max_position_embeddings": 4096,
              "torch_dtype": "bfloat16", "rope_theta": 10000.0, "rms_norm_eps": 1e-6}


#: The models users serve with EAGLE-3 on SGLang 0.5.23, as tiny config.json files of the right shape
#: (the keys SGLang's ModelConfig and per-model overrides read; no weights). Kimi K2 ships
#: ``model_type: kimi_k2`` with remote code; its architecture (what SGLang and the tuner key on) is
#: DeepseekV3ForCausalLM, so the stand-in uses transformers' deepseek_v3 config class.
_GQA = {"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1024, "max_position_embeddings": 4096,
        "torch_dtype": "bfloat16", "rope_theta": 1000000.0, "rms_norm_eps": 1e-6}
MATRIX_MODELS = {
    "Llama-3 (LlamaForCausalLM)": MHA_CONFIG,
    "Qwen3 (Qwen3ForCausalLM)": {**_GQA, "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"},
    "Qwen3-MoE (Qwen3MoeForCausalLM)": {
        **_GQA, "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "moe_intermediate_size": 128,
        "num_experts": 4, "num_experts_per_tok": 2, "decoder_sparse_step": 1, "norm_topk_prob": True,
        "mlp_only_layers": []},
    "Llama-4 (Llama4ForConditionalGeneration)": {
        "architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4", "torch_dtype": "bfloat16",
        "text_config": {**_GQA, "model_type": "llama4_text", "intermediate_size_mlp": 512,
                        "num_local_experts": 4, "num_experts_per_tok": 1, "interleave_moe_layer_step": 1,
                        "no_rope_layers": [1, 0], "attention_chunk_size": 8192},
        "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 64, "num_hidden_layers": 1,
                          "num_attention_heads": 2, "intermediate_size": 128, "image_size": 56, "patch_size": 14,
                          "vision_output_dim": 64, "projector_input_dim": 64, "projector_output_dim": 64}},
    "GPT-OSS (GptOssForCausalLM)": {
        **_GQA, "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "num_local_experts": 4,
        "num_experts_per_tok": 2, "experts_per_token": 2, "sliding_window": 128,
        "layer_types": ["sliding_attention", "full_attention"]},
    "GLM-4.5 (Glm4MoeForCausalLM)": {
        **_GQA, "architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe", "moe_intermediate_size": 128,
        "partial_rotary_factor": 0.5, "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2,
        "first_k_dense_replace": 1, "n_group": 1, "topk_group": 1, "routed_scaling_factor": 1.0,
        "norm_topk_prob": True, "use_qk_norm": True},
    "MiniMax-M2 (MiniMaxM2ForCausalLM)": {
        **_GQA, "architectures": ["MiniMaxM2ForCausalLM"], "model_type": "minimax_m2", "num_local_experts": 4,
        "num_experts_per_tok": 2, "use_qk_norm": True, "qk_norm_type": "per_layer", "rotary_dim": 32,
        "partial_rotary_factor": 0.5, "scoring_func": "sigmoid", "use_routing_bias": True},
    "Qwen3-Next (Qwen3NextForCausalLM, hybrid linear attention)": {
        **_GQA, "architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "num_hidden_layers": 4,
        "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 32,
        "linear_value_head_dim": 32, "linear_num_key_heads": 4, "linear_num_value_heads": 8,
        "moe_intermediate_size": 128, "shared_expert_intermediate_size": 128, "num_experts": 4,
        "num_experts_per_tok": 2, "decoder_sparse_step": 1, "norm_topk_prob": True, "mlp_only_layers": [],
        "partial_rotary_factor": 0.25},
    "Granite SWA (GraniteSWAForCausalLM, attention sinks)": {
        **_GQA, "architectures": ["GraniteSWAForCausalLM"], "model_type": "granite", "sliding_window": 128},
    # SGLang decides these itself with code the tuner does not mirror (attention.SGLANG_OWN_BACKEND_ARCHS):
    # the tuner pins nothing and keeps chains; the matrix checks that SGLang takes that
    "Olmo2 (Olmo2ForCausalLM, own backend code)": {**_GQA, "architectures": ["Olmo2ForCausalLM"],
                                                   "model_type": "olmo2"},
    "LFM2 (Lfm2ForCausalLM, own backend code)": {
        **_GQA, "architectures": ["Lfm2ForCausalLM"], "model_type": "lfm2", "layer_types": ["conv", "full_attention"],
        "full_attn_idxs": [1], "conv_L_cache": 3, "block_dim": 256, "block_ff_dim": 512},
    "DeepSeek-V3 (DeepseekV3ForCausalLM)": MLA_CONFIG,
    "Kimi K2 (DeepseekV3ForCausalLM)": {**MLA_CONFIG, "num_attention_heads": 8, "num_key_value_heads": 8,
                                        "n_routed_experts": 8, "num_experts_per_tok": 2},
    "DeepSeek-V3.2 (DeepseekV32ForCausalLM, DSA)": {
        **MLA_CONFIG, "architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32",
        "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 64},
}
#: A Llama-style EAGLE-3 head: the draft model of every matrix case (MHA, whatever the target).
EAGLE3_HEAD = {**MHA_CONFIG, "architectures": ["LlamaForCausalLMEagle3"], "num_hidden_layers": 1,
               "draft_vocab_size": 1024}
#: The GPU generations of the matrix, each as SGLang's own override_platform facts (in the child).
MATRIX_GPUS = ("sm80", "sm89", "sm90", "sm100", "sm120")

S = SpecConfig
#: (name, spec, extra server args) decided during argument handling; the MHA model unless "mla" in args
RULE_CASES = [
    ("all unset: auto choice, Llama (5, 4, 8)", S(), {}),
    ("all unset: auto choice, DeepSeek-V3 (3, 1, 4)", S(), {"mla": True}),
    ("topk without steps", S(None, 4, None), {}),
    ("draft without steps", S(None, None, 3), {}),
    ("steps without topk", S(1, None, 3), {}),
    ("topk 1 rewrite", S(1, 1, 3), {}),
    ("topk 1 rewrite, 5 steps", S(5, 1, 64), {}),
    ("chain as written", S(3, 1, 4), {}),
    ("tree", S(2, 2, 4), {}),
    ("trtllm_mha tree", S(2, 2, 4), {"attention_backend": "trtllm_mha", "page_size": 64}),
    ("trtllm_mha chain", S(2, 1, 3), {"attention_backend": "trtllm_mha", "page_size": 64}),
    ("paged tree, default backend", S(2, 2, 4), {"page_size": 16, "attention_backend": "torch_native"}),
    ("paged tree on flashinfer", S(2, 2, 4), {"page_size": 16, "attention_backend": "flashinfer"}),
    ("paged tree on triton", S(2, 2, 4), {"page_size": 16, "attention_backend": "triton"}),
    ("rejection sampling tree", S(2, 2, 4), {"speculative_use_rejection_sampling": True}),
    ("rejection sampling chain", S(2, 1, 3), {"speculative_use_rejection_sampling": True}),
    ("MLA tree on flashinfer (not an argument error)", S(3, 4, 8), {"mla": True, "attention_backend": "flashinfer"}),
    ("MLA tree on fa3", S(3, 4, 8), {"mla": True, "attention_backend": "fa3"}),
]


def _argv(model_dir: str, spec: SpecConfig | None, args: dict, draft_dir: str) -> list[str]:
    argv = ["--model-path", model_dir, "--skip-tokenizer-init", "--tp-size", "1", "--max-running-requests", "32",
            "--device", "cuda", "--mem-fraction-static", "0.8", "--chunked-prefill-size", "4096",
            "--cuda-graph-max-bs-decode", "32"]
    if spec is not None:
        argv += ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", draft_dir]
        for name, value in spec.server_args().items():
            argv += ["--" + name.replace("_", "-"), str(value)]
    for name, value in args.items():
        if name == "mla":
            continue
        flag = "--" + name.replace("_", "-")
        argv += [flag] if value is True else [flag, str(value)]
    return argv


def tuner_answer(spec: SpecConfig, args: dict) -> dict:
    arch = (MLA_CONFIG if args.get("mla") else MHA_CONFIG)["architectures"][0]
    ctx = ServerContext(attention_backend=args.get("attention_backend"), page_size=int(args.get("page_size", 1)),
                        use_rejection_sampling=bool(args.get("speculative_use_rejection_sampling")),
                        target_architecture=arch)
    res = resolve(spec, ctx)
    if res.violation is not None and res.violation.at_launch:
        return {"ok": False, "exception": res.violation.sglang_exception}
    return {"ok": True, "draft": res.effective.num_draft_tokens if res.effective else None}


CHILD = r'''
import json, logging, os, sys
sys.path.insert(0, sys.argv[2])
sys.path.insert(0, sys.argv[3])
spec = json.load(open(sys.argv[1]))
os.environ["HF_HUB_OFFLINE"] = "1"
import importlib.util
from sglang_server_args import install_stubs
# Stand-ins only for what is not installed here (GPU kernels); torch and transformers stay real.
real = [m for m in ("torch", "transformers", "huggingface_hub", "safetensors", "einops", "tqdm", "regex",
                    "aiohttp", "filelock", "jinja2", "tokenizers", "numpy", "psutil", "zmq", "uvloop",
                    "setproctitle", "PIL", "scipy", "triton", "xgrammar", "openai", "tvm_ffi") if importlib.util.find_spec(m) is not None]
install_stubs(sys.argv[4], keep=real)
logging.disable(logging.WARNING - 1)
from sglang.srt.server_args import prepare_server_args
from sglang.srt.runtime_context import override_platform
import torch
out = []
for case in spec["cases"]:
    gpu = case.get("gpu", "sm90")
    sm = int(gpu[2:])
    major = sm // 10
    platform = dict(is_cuda=True, is_hip=False, is_npu=False, is_xpu=False, is_musa=False, is_mps=False,
                    has_flashinfer=True, is_sm90=major == 9, is_hopper_with_cuda_12_3=major == 9,
                    is_sm100=major == 10, is_sm100_or_sm110=major in (10, 11), is_sm110=major == 11,
                    is_sm120=major == 12, is_blackwell=major in (10, 11, 12), device_sm=sm,
                    device_capability=(major, sm % 10))
    # a few hooks ask torch itself (model_hook.py, the DSA branch): the same capability
    torch.cuda.get_device_capability = lambda *a, _c=platform["device_capability"], **k: _c
    rec = {"name": case["name"]}
    try:
        with override_platform(**platform):
            if case.get("kind") == "pair":  # the same ServerArgs from two command lines (parsed only)?
                from sglang.srt.server_args import record_fields
                parsed, refused = [], []
                for argv in (case["argv"], case["argv_b"]):
                    try:
                        parsed.append(prepare_server_args(argv))
                    except BaseException as exc:  # argparse's SystemExit, an action's assert
                        refused.append(f"{type(exc).__name__}: {str(exc)[:200]}")
                if refused:
                    rec.update(ok=False, refused=refused, exception="refused", message=" | ".join(refused))
                else:
                    a, b = parsed
                    names = [f.name for f in record_fields(type(a)) if f.name not in ("host", "port")]
                    rec.update(ok=True, diff={n: [repr(getattr(a, n, None)), repr(getattr(b, n, None))]
                                              for n in names if getattr(a, n, None) != getattr(b, n, None)})
            elif case.get("kind") == "draft_backend":
                import importlib
                mod = importlib.import_module(case["module"])
                getattr(mod, case["cls"])(None, 2, 3)
                rec.update(ok=True)
            else:
                args = prepare_server_args(case["argv"])
                args.resolve_once()
                # then the launch checks SGLang's Engine runs before loading (entrypoints/engine.py
                # line 1165: validation_hook.py, pipeline parallelism, chunked prefill, nodes)
                args.check_server_args()
                d = args.resolved_dict()
                rec.update(ok=True, draft=d.get("speculative_num_draft_tokens"), mrr=d.get("max_running_requests"),
                           steps=d.get("speculative_num_steps"), topk=d.get("speculative_eagle_topk"),
                           backend=d.get("attention_backend"), page=d.get("page_size"), parsed={k: d.get(k.replace("-", "_")) for k in case.get("keys", [])})
    except SystemExit as exc:
        rec.update(ok=False, exception="SystemExit", message=str(exc.code))
    except BaseException as exc:
        import traceback
        frames = traceback.extract_tb(exc.__traceback__)
        rec.update(ok=False, exception=type(exc).__name__, message=str(exc)[:300],
                   where=" <- ".join(f"{f.filename.split('/sglang/')[-1]}:{f.lineno}" for f in frames[::-1]
                                    if "/sglang/" in f.filename)[:300])
    out.append(rec)
print("\n" + json.dumps(out, default=str))
'''


def run_child(python: str, sglang_src: str, tmp: Path, cases: list) -> list[dict] | None:
    """SGLang's verdict on each case (the CHILD in ``python``); None when the child failed (its stderr
    printed)."""
    (tmp / "cases.json").write_text(json.dumps({"cases": cases}))
    (tmp / "child.py").write_text(CHILD)
    r = subprocess.run([python, str(tmp / "child.py"), str(tmp / "cases.json"), str(ROOT / "tools"),
                        sglang_src, sglang_src], capture_output=True, text=True, timeout=3600)
    if r.returncode != 0 or not r.stdout.strip():
        print(r.stderr[-3000:])
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sglang-src", required=True, help="the folder holding an unpacked sglang 0.5.23 (sglang/)")
    ap.add_argument("--python", default=sys.executable, help="an interpreter with CPU torch and transformers")
    ap.add_argument("--fuzz", type=int, metavar="N", help="N seeded random cases (benchmarks/sglang_fuzz.py) "
                                                           "instead of the written ones")
    ap.add_argument("--seed", type=int, default=0, help="the random cases' seed (with --fuzz)")
    ap.add_argument("--fuzz-case", type=int, action="append", metavar="I",
                    help="with --fuzz: only case I of that seed (repeatable), to reproduce one line")
    ap.add_argument("--quiet", action="store_true", help="with --fuzz: print the disagreements only")
    opts = ap.parse_args()
    if opts.fuzz is not None:
        return fuzz(opts)
    with tempfile.TemporaryDirectory(prefix="agree-") as tmp:
        tmp = Path(tmp)
        dirs = {}
        for kind, cfg in (("mla", MLA_CONFIG), ("mha", MHA_CONFIG)):
            (tmp / kind).mkdir()
            (tmp / kind / "config.json").write_text(json.dumps(cfg))
            dirs[kind] = str(tmp / kind)
        cases, expect = [], []
        for name, spec, args in RULE_CASES:
            model = dirs["mla" if args.get("mla") else "mha"]
            cases.append({"name": name, "argv": _argv(model, spec, args, model)})
            expect.append(("rule", tuner_answer(spec, args)))
        for kind in ("mla", "mha"):
            facts = facts_from_config(MLA_CONFIG if kind == "mla" else MHA_CONFIG, kind)
            for gpu in ("sm90", "sm100"):
                for topk in (1, 4):
                    spec = S(3, topk, 4 if topk == 1 else 8)
                    cases.append({"name": f"default backend {kind} {gpu} topk {topk}", "gpu": gpu,
                                  "argv": _argv(dirs[kind], spec, {}, dirs[kind])})
                    backend = sglang_default_backend(facts, GpuArch.parse(gpu), topk)
                    # the tuner's rules on SGLang's own choice: a refusal at launch, or that backend
                    res = resolve(spec, ServerContext(attention_backend=backend, target_attention=kind,
                                                      draft_attention=kind))
                    refused = res.violation is not None and res.violation.at_launch
                    expect.append(("backend", {"ok": False, "exception": res.violation.sglang_exception}
                                   if refused else backend))
        cases, expect = _matrix(tmp, cases, expect)
        for backend, module, cls in (("flashinfer", "sglang.srt.layers.attention.flashinfer_mla_backend",
                                      "FlashInferMLAMultiStepDraftBackend"),
                                     ("flashmla", "sglang.srt.layers.attention.flashmla_backend",
                                      "FlashMLAMultiStepDraftBackend")):
            cases.append({"name": f"MLA draft backend {backend} topk 2", "kind": "draft_backend", "module": module, "cls": cls})
            expect.append(("draft_backend", MLA_TOPK_ERRORS[backend]))
        for path, mapping in _exports(tmp):
            # the loader merges the file under the command line, which adds what a CPU run needs
            cases.append({"name": f"export {path.name} through --config",
                          "argv": ["--config", str(path), "--device", "cuda", "--chunked-prefill-size", "4096"],
                          "keys": [k for k in mapping if not isinstance(mapping[k], bool)]})
            expect.append(("export", mapping))
        results = run_child(opts.python, opts.sglang_src, tmp, cases)
        if results is None:
            return 2
    agree = disagree = 0
    for (what, want), got in zip(expect, results):
        ok, detail = _compare(what, want, got)
        agree += ok
        disagree += not ok
        print(f"{'agree   ' if ok else 'DISAGREE'} {got['name']}: {detail}")
    print(f"{agree} agree, {disagree} disagree")
    return 1 if disagree else 0


def fuzz(opts) -> int:
    """``--fuzz N --seed S``: N drawn cases (:mod:`sglang_fuzz`), SGLang's verdict against the tuner's;
    one line per case (``--quiet``: per disagreement), each with what re-draws it."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import sglang_fuzz

    cases = sglang_fuzz.draw_cases(opts.fuzz, opts.seed)
    if opts.fuzz_case:
        cases = [c for c in cases if c.index in opts.fuzz_case]
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        records = sglang_fuzz.child_cases(cases, Path(tmp))
        results = run_child(opts.python, opts.sglang_src, Path(tmp), records)
        if results is None:
            return 2
        verdicts = [sglang_fuzz.compare(sglang_fuzz.tuner_verdict(c), got) for c, got in zip(cases, results)]
        # where SGLang refuses and the tuner disagrees: does SGLang refuse the study's baseline too?
        refused = [c for c, got, (ok, _) in zip(cases, results, verdicts) if ok is False and not got["ok"]]
        base = run_child(opts.python, opts.sglang_src, Path(tmp),
                         sglang_fuzz.child_cases(refused, Path(tmp), speculative=False)) if refused else []
    baseline = {c.index: got for c, got in zip(refused, base or [])}
    agree = disagree = unjudged = without = 0
    for case, got, (ok, detail) in zip(cases, results, verdicts):
        agree, disagree, unjudged = agree + (ok is True), disagree + (ok is False), unjudged + (ok is None)
        b = baseline.get(case.index)
        if b is not None and not b["ok"] and b.get("message") == got.get("message"):
            detail += "\n         (SGLang refuses the baseline, without speculation, the same way)"
            without += 1
        if ok is False or not opts.quiet:
            word = {True: "agree   ", False: "DISAGREE", None: "unjudged"}[ok]
            print(f"{word} {case.line(opts.seed)}\n         {detail}")
    print(f"fuzz N={len(cases)} seed={opts.seed}: {agree} agree, {disagree} disagree "
          f"({without} of them refused by SGLang without speculation too; {unjudged} not judged: "
          f"SGLang's own backend code, where the tuner keeps chains, or a study the tuner refuses on purpose)")
    same, differ = fuzz_exports(opts, sglang_fuzz)
    disagree += differ
    return 1 if disagree else 0


def fuzz_exports(opts, sglang_fuzz) -> tuple[int, int]:
    """The export round trip on ``--fuzz N`` random studies: the YAML ``server_mapping`` writes, read by
    SGLang's ``--config`` loader, against the launcher's argv, field by field of ``ServerArgs``."""
    import logging

    logging.getLogger("tuner").setLevel(logging.ERROR)  # plan_launch's pin warnings, one per drawn study
    cases = sglang_fuzz.draw_export_cases(opts.fuzz, opts.seed)
    if opts.fuzz_case:
        cases = [c for c in cases if c.index in opts.fuzz_case]
    with tempfile.TemporaryDirectory(prefix="fuzz-export-") as tmp:
        exported, records, refused = sglang_fuzz.export_child_cases(cases, Path(tmp), ROOT)
        results = run_child(opts.python, opts.sglang_src, Path(tmp), records) if records else []
    if results is None:
        return 0, 1
    same = differ = parser = 0
    for case, got in zip(exported, results):
        # both command lines refused alike by SGLang's parser: the round trip agrees; the study's check
        # took a value SGLang's parser does not (counted apart)
        both = not got["ok"] and len(got.get("refused", ())) == 2 and len(set(got["refused"])) == 1
        ok = (got["ok"] and not got.get("diff")) or both
        same, differ, parser = same + ok, differ + (not ok), parser + both
        if not ok or both or not opts.quiet:
            detail = (f"both refused by SGLang's parser: {got['refused'][0]}" if both else
                      f"same ServerArgs ({len(case.args)} study args)" if ok else
                      f"{got.get('diff') or got.get('message', '')}")
            word = "parser  " if both else "agree   " if ok else "DISAGREE"
            print(f"{word} {case.line(opts.seed)}\n         {str(detail)[:600]}")
    for case, why in refused if not opts.quiet else ():
        print(f"refused  {case.line(opts.seed)}\n         the tuner refuses the study: {why[:200]}")
    print(f"export round trip N={len(cases)} seed={opts.seed}: {same} agree, {differ} disagree "
          f"({parser} of the agreeing refused alike by SGLang's parser on both sides; {len(refused)} studies "
          f"the tuner refuses to launch)")
    return same, differ


def _tuner_verdict(spec: SpecConfig, ctx: ServerContext, page: bool = False) -> dict:
    """The tuner's answer for one launch: refused during argument handling (the exception class),
    else accepted, with the later failure its rules expect (stage), if any; ``page``: the page size
    SGLang sets is the tuner's too (``sglang_default_page_size``, then ``resolved_page_size``)."""
    res = resolve(spec, ctx)
    v = res.violation
    if v is not None and v.at_launch:
        return {"ok": False, "exception": v.sglang_exception}
    return {"ok": True, "backend": ctx.attention_backend, "later": v and f"{v.stage}: {v.rule}",
            "page": resolved_page_size(ctx) if page else None}


def _matrix(tmp: Path, cases: list, expect: list) -> tuple[list, list]:
    """model x GPU x topk: SGLang's own backend choice (no --attention-backend) against
    ``sglang_default_backend`` and ``resolve``; then the backend the tuner pins
    (``choose_attention_backend``), given to SGLang, at topk 1 and, when the tuner keeps trees, 4."""
    head = tmp / "eagle3-head"
    head.mkdir()
    (head / "config.json").write_text(json.dumps(EAGLE3_HEAD))
    draft = facts_from_config(EAGLE3_HEAD, "eagle3 head")
    for n, (model, cfg) in enumerate(MATRIX_MODELS.items()):
        folder = tmp / f"model{n}"
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(cfg))
        facts = facts_from_config(cfg, model)
        for gpu_name in MATRIX_GPUS:
            gpu = GpuArch.parse(gpu_name)
            for topk in (1, 4) if not sglang_decides(facts) else ():
                spec = S(3, topk, 4 if topk == 1 else 8)
                backend = sglang_default_backend(facts, gpu, topk)
                ctx = ServerContext(attention_backend=backend, page_size=sglang_default_page_size(facts, gpu, topk),
                                    target_attention=facts.attention, draft_attention=draft.attention,
                                    target_architecture=facts.architecture)
                cases.append({"name": f"matrix|{model}|{gpu_name}|{topk}|default", "gpu": gpu_name,
                              "argv": _argv(str(folder), spec, {}, str(head))})
                expect.append(("matrix", _tuner_verdict(spec, ctx, page=True)))
            choice = choose_attention_backend(facts, gpu, draft=draft)
            for topk in (1, 4) if choice.trees is not False else (1,):
                spec = S(3, topk, 4 if topk == 1 else 8)
                ctx = ServerContext(attention_backend=choice.backend, target_attention=facts.attention,
                                    draft_attention=draft.attention, target_architecture=facts.architecture)
                pin = {"attention_backend": choice.backend} if choice.backend else {}
                cases.append({"name": f"matrix|{model}|{gpu_name}|{topk}|pinned {choice.backend or 'nothing'}",
                              "gpu": gpu_name, "argv": _argv(str(folder), spec, pin, str(head))})
                expect.append(("matrix", _tuner_verdict(spec, ctx)))
        # a study that sets the backend itself (model_hook.py refuses flashinfer for GPT-OSS, Llama 4
        # and Olmo2, triton for LFM2)
        for own in ("flashinfer", "triton"):
            spec = S(3, 4, 8)
            ctx = ServerContext(attention_backend=own, target_attention=facts.attention,
                                draft_attention=draft.attention, target_architecture=facts.architecture)
            cases.append({"name": f"matrix|{model}|sm90|4|study sets {own}", "gpu": "sm90",
                          "argv": _argv(str(folder), spec, {"attention_backend": own}, str(head))})
            expect.append(("matrix", _tuner_verdict(spec, ctx)))
    return cases, expect


def _compare(what: str, want, got: dict) -> tuple[bool, str]:
    if what == "rule":
        if want["ok"] != got["ok"]:
            return False, f"tuner {'accepts' if want['ok'] else 'refuses'}, SGLang {got}"
        if not want["ok"]:
            return want["exception"] == got["exception"], f"both refuse: SGLang {got['exception']}: {got.get('message', '')[:100]}"
        same = want["draft"] in (None, got.get("draft"))
        return same, f"both accept; draft tokens tuner {want['draft']}, SGLang {got.get('draft')}; mrr {got.get('mrr')}"
    if what == "backend":
        if isinstance(want, dict):  # the tuner says SGLang refuses its own choice at launch
            return (not got["ok"] and got.get("exception") == want["exception"],
                    f"both refuse: SGLang {got.get('exception')}: {got.get('message', '')[:100]}")
        return got.get("backend") == want, f"tuner {want}, SGLang {got.get('backend') or got}"
    if what == "matrix":
        if want["ok"] != got["ok"]:
            return False, (f"tuner {'accepts on ' + str(want['backend']) if want['ok'] else 'refuses: ' + want['exception']}"
                           f"; SGLang {'accepts on ' + str(got.get('backend')) if got['ok'] else 'refuses: ' + got.get('exception', '') + ': ' + got.get('message', '')[:120] + ' @ ' + got.get('where', '')}")
        if not want["ok"]:
            return (want["exception"] == got.get("exception"),
                    f"both refuse: SGLang {got.get('exception')}: {got.get('message', '')[:100]}")
        later = f" (tuner expects later: {want['later']})" if want["later"] else ""
        page = f", page size tuner {want['page']}, SGLang {got.get('page')}" if want["page"] else ""
        return (want["backend"] in (None, got.get("backend")) and want["page"] in (None, got.get("page")),
                f"tuner {want['backend']}, SGLang {got.get('backend')}{page}{later}")
    if what == "draft_backend":
        return (not got["ok"] and got.get("message") == want), f"SGLang {got.get('exception')}: {got.get('message')}"
    parsed = got.get("parsed") or {}
    bad = {k: (v, parsed.get(k)) for k, v in want.items() if not isinstance(v, bool) and k in parsed
           and str(parsed.get(k)) != str(v)}
    return got["ok"] and not bad, ("loads; every key as exported" if got["ok"] and not bad else f"{got} {bad}")


def _exports(tmp: Path):
    """The demo study's export mappings (a chain, a tree, adaptive) as YAML files."""
    import yaml

    from tuner.config.space import SearchSpace
    from tuner.config.study import load_study
    from tuner.engine.facts import prepare, space_for
    from tuner.results.export import server_mapping

    config = load_study(ROOT / "studies" / "sim-demo.yaml")
    space = SearchSpace.load(config.search_space)
    space, _ = space_for(space, config, prepare(config, space)[2])
    suite = {"name": "quick", "sweep": {"concurrencies": [1, 32]}}
    model = tmp / "mla"
    config = config.model_copy(update={"server": config.server.model_copy(update={
        "model_path": str(model), "draft_model_path": str(model)})})
    policy = tmp / "policy.json"
    policy.write_text(json.dumps({"1": {"candidate_steps": [3]}, "32": {"candidate_steps": [1]}}))
    for name, spec, extra in (("chain", S(3, 1, 4), None), ("tree", S(4, 4, 16), None),
                              ("adaptive", S(3, 1, 4), {"speculative_adaptive": True,
                                                        "speculative_adaptive_config": str(policy)})):
        mapping, _, _ = server_mapping(config, space, suite, spec, extra)
        mapping = {"skip-tokenizer-init": True, **mapping}
        path = tmp / f"export-{name}.yaml"
        path.write_text(yaml.safe_dump(mapping, sort_keys=False, default_flow_style=False, width=1000))
        yield path, mapping


if __name__ == "__main__":
    sys.exit(main())
