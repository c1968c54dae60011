"""A model whose attention backend SGLang 0.5.23 decides with code of its own (Olmo2: the tuner pins
nothing and keeps chains only, tuner.sglang.attention) and one that takes a few backends only
(GPT-OSS: rule model-backend): the lines a study on them prints name the backend in words and the
key to change. QA (qa73): the chains-only line read "attention backend None runs topk 1 only", and
a GPT-OSS study on flashinfer was refused under search_space where the fix is in server.args."""

import json

import pytest

from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError
from tuner.engine.study import create_study


def _study(tmp_path, architecture: str, args: str = "", seeds: str = ""):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": [architecture], "model_type": "x"}))
    draft = tmp_path / "draft"
    draft.mkdir()
    (draft / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama"}))
    path = tmp_path / "s.yaml"
    path.write_text(f"""
name: s
search_space: eagle3
server: {{backend: sglang, model_path: {model}, draft_model_path: {draft}, tp_size: 1, facts: {{gpu_compute_capability: "9.0"}}{args}}}
bench: {{suite: quick}}
budget: {{n_trials: 4}}
{seeds}""")
    return load_study(path)


def test_a_chains_only_line_names_sglang_s_own_backend_not_none(tmp_path):
    config = _study(tmp_path, "Olmo2ForCausalLM")
    said = []
    create_study(config, config.storage, note=said.append)
    line = next(s for s in said if s.startswith("search space without trees"))
    assert line.startswith("search space without trees: SGLang's own attention backend runs topk 1 only"), line
    assert "None" not in line, line


def test_a_tree_seed_on_it_names_sglang_s_own_backend(tmp_path):
    config = _study(tmp_path, "Olmo2ForCausalLM", seeds="seed_trials: [{speculative_num_steps: 2, "
                    "speculative_eagle_topk: 4, speculative_num_draft_tokens: 8}]\n")
    with pytest.raises(ConfigError) as err:
        create_study(config, config.storage, note=lambda line: None)
    assert "is a tree, and SGLang's own attention backend runs topk 1 only" in str(err.value), err.value


def test_a_backend_the_model_refuses_is_refused_under_server_args(tmp_path):
    from tuner.engine.preflight import preflight

    config = _study(tmp_path, "GptOssForCausalLM", args=", args: {attention_backend: flashinfer}")
    with pytest.raises(ConfigError) as err:
        preflight(config, None, tmp_path / "s.yaml")
    assert err.value.key == "server.args", (err.value.key, str(err.value))
    assert "model-backend" in str(err.value), err.value
