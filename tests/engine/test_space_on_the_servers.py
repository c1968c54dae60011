"""The space a study searches, judged with what its servers add (tuner/engine/facts.py, space_for):
the attention decision stored with the study and what SGLang itself imposes on the model."""

from pathlib import Path

from tuner.config.space import SearchSpace
from tuner.config.study import load_study
from tuner.engine.facts import space_for
from tuner.sglang.rules import SpecConfig

ROOT = Path(__file__).resolve().parents[2]


def _record(**kw) -> dict:
    return {"backend": "dsa", "pinned": True, "trees": False, "reason": "r", "target_attention": "mla",
            "target_architecture": "DeepseekV32ForCausalLM", "draft_attention": "mla", "gpu": "9.0", **kw}


def test_a_dsa_model_is_judged_at_the_page_size_sglang_gives_it():
    # deepseek_v2.py sets a DSA model's page size to 64 on CUDA GPUs; speculative_hook.py then
    # refuses topk > 1 on dsa: the space keeps chains, and a tree is refused at launch
    config = load_study(ROOT / "studies" / "sim-demo.yaml")
    space = SearchSpace.load(config.search_space)
    out, line = space_for(space, config, _record(target_dsa=True))
    assert set(out.values("speculative_eagle_topk")) == {1} and "without trees" in line
    res = out.resolve(SpecConfig(3, 4, 8))
    assert not res.ok and res.violation.rule == "page-size-topk"
    assert out.resolve(SpecConfig(3, 1, 4)).ok
    # the same record without DSA (a study stored before the key existed reads as not DSA)
    plain, _ = space_for(space, config, _record(backend="fa3", trees=True))
    assert plain.resolve(SpecConfig(3, 4, 8)).ok
