"""Do tuner/sglang/ and SGLang 0.5.23 agree? Runs SGLang's own code on CPU and prints each case.

SGLang's parser and resolver (``prepare_server_args``, ``ServerArgs.resolve_once``: every
argument-handling hook of ``arg_groups/pipeline.py``) run in a child interpreter that has a CPU
torch and transformers, against an unpacked SGLang wheel (``--sglang-src``), with the GPU generation
set by SGLang's own ``override_platform`` (``srt/runtime_context.py``: sm90 / sm100), a tiny fake
``config.json`` per model kind (an MLA DeepseekV3-style model, a Llama MHA model) and
``--skip-tokenizer-init``; no weights exist, none are loaded. GPU-only packages SGLang imports at
module level (flashinfer, sgl_kernel, triton, ...) are inert stand-ins (``tools/sglang_server_args.py``).

Cases, each against the tuner's answer:

* every rule case of ``tests/sglang/test_rules.py`` that SGLang decides during argument handling
  (refused or accepted, the exception class, the resolved draft tokens, max_running_requests 48);
* SGLang's attention-backend choice for MLA/MHA on sm90/sm100 at topk 1 and 4
  (``tuner.sglang.attention.sglang_default_backend``);
* the MLA draft backends' topk-1 limit: ``FlashInferMLAMultiStepDraftBackend`` and
  ``FlashMLAMultiStepDraftBackend`` constructed with topk 2 (their ValueError text);
* every export shape (``tuner.results.export.server_mapping`` of the demo study, adaptive included)
  loaded through SGLang's ``--config`` loader (``ConfigArgumentMerger``) and parsed back.

    pip download --no-deps sglang==0.5.23 -d /tmp/sg && unzip -q /tmp/sg/*.whl -d /tmp/sglang-src
    python3 -m venv /tmp/agree && /tmp/agree/bin/pip install 'torch==2.13.0+cpu' transformers dill triton \\
        xgrammar 'openai==2.8.0' 'apache-tvm-ffi==0.1.11' msgspec numpy psutil requests pyyaml packaging \\
        pybase64 orjson pydantic fastapi uvloop pyzmq setproctitle einops safetensors huggingface_hub tqdm regex aiohttp
    python benchmarks/sglang_agreement.py --sglang-src /tmp/sglang-src --python /tmp/agree/bin/python

Prints one line per case and ``N agree, M disagree``; exits 1 on any disagreement. Not in CI: the
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

from tuner.sglang.attention import MLA_TOPK_ERRORS, sglang_default_backend  # noqa: E402
from tuner.sglang.hardware import GpuArch  # noqa: E402
from tuner.sglang.model import facts_from_config  # noqa: E402
from tuner.sglang.rules import ServerContext, SpecConfig, resolve  # noqa: E402

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
out = []
for case in spec["cases"]:
    platform = {"sm90": dict(is_cuda=True, is_hopper_with_cuda_12_3=True, is_sm90=True, is_sm100=False, is_blackwell=False,
                             is_sm120=False, is_hip=False, is_npu=False, is_xpu=False, is_musa=False, is_mps=False, has_flashinfer=True),
                "sm100": dict(is_cuda=True, is_hopper_with_cuda_12_3=False, is_sm90=False, is_sm100=True, is_blackwell=True,
                              is_sm120=False, is_hip=False, is_npu=False, is_xpu=False, is_musa=False, is_mps=False, has_flashinfer=True)}[case.get("gpu", "sm90")]
    rec = {"name": case["name"]}
    try:
        with override_platform(**platform):
            if case.get("kind") == "draft_backend":
                import importlib
                mod = importlib.import_module(case["module"])
                getattr(mod, case["cls"])(None, 2, 3)
                rec.update(ok=True)
            else:
                args = prepare_server_args(case["argv"])
                args.resolve_once()
                d = args.resolved_dict()
                rec.update(ok=True, draft=d.get("speculative_num_draft_tokens"), mrr=d.get("max_running_requests"),
                           backend=d.get("attention_backend"), parsed={k: d.get(k.replace("-", "_")) for k in case.get("keys", [])})
    except SystemExit as exc:
        rec.update(ok=False, exception="SystemExit", message=str(exc.code))
    except BaseException as exc:
        import traceback
        frames = traceback.extract_tb(exc.__traceback__)
        rec.update(ok=False, exception=type(exc).__name__, message=str(exc)[:300],
                   where=f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "")
    out.append(rec)
print("\n" + json.dumps(out, default=str))
'''


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sglang-src", required=True, help="the folder holding an unpacked sglang 0.5.23 (sglang/)")
    ap.add_argument("--python", default=sys.executable, help="an interpreter with CPU torch and transformers")
    opts = ap.parse_args()
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
        (tmp / "cases.json").write_text(json.dumps({"cases": cases}))
        (tmp / "child.py").write_text(CHILD)
        r = subprocess.run([opts.python, str(tmp / "child.py"), str(tmp / "cases.json"), str(ROOT / "tools"),
                            opts.sglang_src, opts.sglang_src], capture_output=True, text=True, timeout=900)
        if r.returncode != 0 or not r.stdout.strip():
            print(r.stderr[-3000:])
            return 2
        results = json.loads(r.stdout.strip().splitlines()[-1])
    agree = disagree = 0
    for (what, want), got in zip(expect, results):
        ok, detail = _compare(what, want, got)
        agree += ok
        disagree += not ok
        print(f"{'agree   ' if ok else 'DISAGREE'} {got['name']}: {detail}")
    print(f"{agree} agree, {disagree} disagree")
    return 1 if disagree else 0


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
