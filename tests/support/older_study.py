"""The study file the tests of studies made by an older tuner start from (``tests/engine/
test_older_studies.py``, ``tests/cli/test_older_study_launch.py``): a small MLA study on the
simulator, whose stored attributes each test then rewrites as an older tuner stored them; and
:func:`measured_model_study`, the measured study the CLI tests of older studies rewrite; and
:func:`older_dsa_study_with_a_tree_seed`, an older tuner's study on a model this tuner would now
run chains only on."""

from pathlib import Path

OLDER_STUDY = """
name: old
search_space: eagle3
server:
  backend: sim
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
bench: {suite: quick}
objectives: [single_speedup, speedup@32]
budget: {n_trials: 4}
"""


def measured_model_study(tmp_path: Path):
    """Study ``c`` on the performance model (``support.model_study``), its three default seeds
    measured by `tuner study run` -- (3, 1, 4), (4, 8, 64), (2, 4, 8) -- in ``tmp_path/c.db``:
    the study file and the Optuna study."""
    import optuna
    import yaml
    from click.testing import CliRunner
    from support.model_study import model_study_data

    from tuner.cli import cli

    path = tmp_path / "c.yaml"
    data = model_study_data("c", seed=1)
    data["budget"] = {"n_trials": 3}
    path.write_text(yaml.safe_dump(data))
    r = CliRunner().invoke(cli, ["study", "run", str(path)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return path, optuna.load_study(study_name="c", storage=f"sqlite:///{tmp_path / 'c.db'}")


def older_dsa_study_with_a_tree_seed(tmp_path: Path):
    """A study an older tuner made on a DSA model (DeepSeek V3.2) with a tree seed in its file: that
    tuner ran the pin flashinfer and stored no decision. Made here while the model's config.json
    does not yet say DSA (this tuner then keeps trees), stripped of its decision, then the
    config.json says DSA, as the real model's does: this tuner would pin dsa, chains only."""
    from tuner.config.study import load_study
    from tuner.engine.facts import ATTENTION_ATTR
    from tuner.engine.study import create_study, open_study

    model, draft = tmp_path / "model", tmp_path / "draft"
    model.mkdir(), draft.mkdir()
    (draft / "config.json").write_text('{"architectures": ["LlamaForCausalLMEagle3"]}')
    (model / "config.json").write_text('{"architectures": ["DeepseekV32ForCausalLM"], "kv_lora_rank": 512}')
    path = tmp_path / "d.yaml"
    path.write_text(f"""
name: d
search_space: eagle3
server: {{backend: sglang, model_path: {model}, draft_model_path: {draft}, tp_size: 8}}
bench: {{suite: quick}}
budget: {{n_trials: 4}}
seed_trials:
  - {{speculative_num_steps: 2, speculative_eagle_topk: 4, speculative_num_draft_tokens: 8}}
""")
    config = load_study(path)
    create_study(config, config.storage)
    study = open_study("d", config.storage)
    study._storage.set_study_user_attr(study._study_id, ATTENTION_ATTR, None)  # as an older tuner stored it
    (model / "config.json").write_text('{"architectures": ["DeepseekV32ForCausalLM"], "kv_lora_rank": 512, '
                                       '"index_topk": 2048}')
    return path, config


def created_older_or_newer(tmp_path: Path, name: str, *, older: bool, args: str = "") -> Path:
    """:data:`OLDER_STUDY` as study ``name`` (``args``: its ``server.args`` flow mapping's inside),
    created in its storage; with ``older``, stripped of its attention decision as a tuner before
    2026-12-01 stored it. Returns the study file."""
    import optuna

    from tuner.config.study import load_study
    from tuner.engine.facts import ATTENTION_ATTR
    from tuner.engine.study import create_study

    path = tmp_path / f"{name}.yaml"
    text = OLDER_STUDY.replace("name: old", f"name: {name}")
    if args:
        text = text.replace("  tp_size: 8\n", f"  tp_size: 8\n  args: {{{args}}}\n")
    path.write_text(text)
    config = load_study(path)
    create_study(config, config.storage)
    if older:
        optuna.load_study(study_name=name, storage=config.storage).set_user_attr(ATTENTION_ATTR, None)
    return path
