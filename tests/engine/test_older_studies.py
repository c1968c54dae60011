"""A study created by an older tuner, opened by this one (users upgrade in the middle of a campaign).

The stored attributes are rewritten here as the older tuners wrote them (QA: studies made by the
tuner at commits 207dc8d and ceeb9a4 with `tuner study run studies/sim-demo.yaml`): keys added to
the study file's schema since then are absent from the stored config and suite, not null. The same
file run by this tuner must continue the study, not be refused as "a different config".
"""

import optuna
import pytest
from support.older_study import OLDER_STUDY, older_dsa_study_with_a_tree_seed

from tuner.config.space import SearchSpace
from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError
from tuner.engine.facts import prepare
from tuner.engine.study import CONFIG_ATTR, SUITE_ATTR, check_file_against_study, create_study, open_study

STUDY = OLDER_STUDY

#: What the tuner of 207dc8d (2026-11-30) did not store: keys added to the schema since.
OLDER_CONFIG_LACKS = {"bench": ("lossless", "trial_timeout"), "server": ("facts", "model", "log_max_mb"),
                      "budget": ("prune",), "": ("slo",)}
OLDER_PROMPT_LACKS = ("messages", "max_tokens", "category")


def _as_older_tuner_stored_it(study) -> tuple[dict, dict]:
    config = {k: (dict(v) if isinstance(v, dict) else v) for k, v in study.user_attrs[CONFIG_ATTR].items()}
    for part, keys in OLDER_CONFIG_LACKS.items():
        for key in keys:
            (config[part] if part else config).pop(key)
    suite = dict(study.user_attrs[SUITE_ATTR])
    suite.pop("dataset")
    suite["single"] = {k: v for k, v in suite["single"].items() if k != "prompts"}
    suite["prompts"] = [{k: v for k, v in p.items() if k not in OLDER_PROMPT_LACKS} for p in suite["prompts"]]
    study.set_user_attr(CONFIG_ATTR, config)
    study.set_user_attr(SUITE_ATTR, suite)
    return config, suite


def _older_study(tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text(STUDY)
    config = load_study(path)
    create_study(config, config.storage)
    study = open_study("old", config.storage)
    return config, path, study, *_as_older_tuner_stored_it(study)


def test_the_same_file_continues_a_study_an_older_tuner_stored(tmp_path):
    config, path, study, old_config, old_suite = _older_study(tmp_path)
    # before: "the study exists with a different config (bench.lossless differs)", though the file
    # is the one the study was created from
    attention = prepare(config, SearchSpace.load(config.search_space))[2]
    assert check_file_against_study(config, path, attention) is True  # tuner launch's check
    said = []
    create_study(config, config.storage, note=said.append)
    # the file's budget.prune is the default, as an absent one reads: no change; nothing stored is
    # rewritten in this tuner's form (which the older tuner refuses: 'budget.prune: unknown key')
    assert said == []
    again = open_study("old", config.storage).user_attrs
    assert again[CONFIG_ATTR] == old_config and again[SUITE_ATTR] == old_suite
    off = config.model_copy(update={"budget": config.budget.model_copy(
        update={"prune": config.budget.prune.model_copy(update={"enabled": False})})})
    create_study(off, config.storage, note=said.append)
    assert said == ["study old: budget.prune True -> False"]


def test_a_larger_budget_changes_only_the_budget_of_an_older_study(tmp_path):
    config, path, study, old_config, old_suite = _older_study(tmp_path)
    said = []
    bigger = config.model_copy(update={"budget": config.budget.model_copy(update={"n_trials": 6})})
    create_study(bigger, config.storage, note=said.append)
    assert any("budget.n_trials 4 -> 6" in s for s in said)
    stored = open_study("old", config.storage).user_attrs[CONFIG_ATTR]
    assert stored == {**old_config, "budget": {**old_config["budget"], "n_trials": 6}}


def test_a_real_difference_is_still_refused(tmp_path):
    config, path, study, old_config, old_suite = _older_study(tmp_path)
    changed = config.model_copy(update={"server": config.server.model_copy(update={"tp_size": 4})})
    with pytest.raises(ConfigError, match=r"different config \(server.tp_size differs\)"):
        create_study(changed, config.storage)


def test_a_shipped_suite_changed_since_the_study_was_made_says_so_and_how_to_go_on(tmp_path):
    """The shipped quick suite's timeout_s was 60 until 6645453 (2026-12-01): a study made before
    it stored that suite, and the file naming `quick` now loads another one."""
    config, path, study, old_config, old_suite = _older_study(tmp_path)
    study.set_user_attr(SUITE_ATTR, {**old_suite, "timeout_s": 60.0})
    with pytest.raises(ConfigError) as err:
        create_study(config, config.storage)
    text = str(err.value)
    assert "different suite (timeout_s differs)" in text
    assert "the shipped suite 'quick' is not the one this study stored" in text
    assert "tuner study run --study old --storage sqlite:///" in text
    assert optuna.load_study(study_name="old", storage=config.storage).user_attrs[SUITE_ATTR]["timeout_s"] == 60.0


def test_an_older_study_with_no_stored_attention_decision_proposes_no_tree_its_backend_cannot_run(tmp_path):
    """Studies made before the attention decision was stored (tuner_attention; before 2026-12-01)
    launched with the launcher's pin, flashinfer, and still do. On this MLA model flashinfer runs no
    trees (SGLang: `Currently Flashinfer MLA only supports topk=1`): continued, such a study proposed
    and launched trees (QA: trial steps=2 topk=2 draft=3 failed after the load), its rules blind to
    the model. Now the rules judge its proposals with the pinned backend and the model's facts."""
    from tuner.engine.facts import ATTENTION_ATTR
    from tuner.engine.study import config_from_study
    from tuner.sglang.rules import SpecConfig

    config, path, study, *_ = _older_study(tmp_path)
    optuna.load_study(study_name="old", storage=config.storage)._storage.set_study_user_attr(
        study._study_id, ATTENTION_ATTR, None)
    stored = open_study("old", config.storage)
    assert stored.user_attrs[ATTENTION_ATTR] is None
    _, space, _ = config_from_study(stored, str(tmp_path / "wd"))
    assert space.attention.backend == "flashinfer" and space.attention.pinned  # as its launches always ran
    # the trees stay in its distributions (Optuna refuses another choice list for a parameter its
    # trials were asked with); the rules refuse them, so they are never launched
    assert space.values("speculative_eagle_topk") == [1, 2, 4, 8]
    refused = space.resolve(SpecConfig(2, 2, 3)).violation
    assert refused is not None and refused.rule == "mla-tree-backend", refused
    assert space.resolve(SpecConfig(2, 1, 3)).ok


def test_the_shipped_suite_and_a_copy_of_it_in_a_file_are_the_same_study(tmp_path):
    """After an upgrade changed a shipped suite, the natural way on is a file holding the suite the
    study ran; a suite is compared by content (tuner_suite), so the name `quick` and a file with the
    same content are the same study (QA: 'different config (bench.suite differs)'), as the same
    search space by name or by path already were."""
    from tuner.config.suite import SUITES_DIR

    config, path, *_ = _older_study(tmp_path)
    copy = tmp_path / "quick-as-it-ran.yaml"
    copy.write_bytes((SUITES_DIR / "quick.yaml").read_bytes())
    path.write_text(STUDY.replace("suite: quick", f"suite: {copy.name}"))
    create_study(load_study(path), config.storage)
    copy.write_text(copy.read_text().replace("max_tokens: 512", "max_tokens: 256"))
    with pytest.raises(ConfigError, match=r"different suite \(sweep.max_tokens differs\)"):
        create_study(load_study(path), config.storage)


def test_a_reader_of_an_older_real_backend_study_needs_no_model_folder_it_may_not_look_into(tmp_path):
    """A reader (export, confirm: config_from_study) of a study made before the attention decision was
    stored now judges the study's backend with this node's facts (older_study_record). On a laptop or
    a login node the model's folder may be another user's: pathlib raised PermissionError there, a
    traceback for `tuner study export` (QA, run as another user: model folder mode 700). The facts
    are then the study's server.facts, as for any fact this node cannot read."""
    from tuner.engine.facts import ATTENTION_ATTR
    from tuner.engine.study import config_from_study
    from tuner.sglang.rules import SpecConfig

    unreadable = tmp_path / ("m" * 300)  # stat fails (ENAMETOOLONG) as EACCES does, even for root
    path = tmp_path / "real.yaml"
    path.write_text(f"""
name: real
search_space: eagle3
server:
  backend: sglang
  model_path: {unreadable}
  tp_size: 8
  facts: {{model_attention: mla}}
bench: {{suite: quick}}
budget: {{n_trials: 4}}
""")
    config = load_study(path)
    create_study(config, config.storage)
    study = open_study("real", config.storage)
    study._storage.set_study_user_attr(study._study_id, ATTENTION_ATTR, None)  # as an older tuner stored it
    _, space, _ = config_from_study(open_study("real", config.storage), str(tmp_path / "wd"))
    assert space.attention.backend == "flashinfer"  # the pin its launches ran
    # the stated MLA model: flashinfer runs chains only
    refused = space.resolve(SpecConfig(2, 2, 3)).violation
    assert refused is not None and refused.rule == "mla-tree-backend", refused


def test_a_landscape_study_stored_before_tables_were_pinned_by_content_continues_from_its_file(tmp_path):
    """A `backend: model` study stored before server.model.landscape_sha256 existed is compared by the
    table's path. Its stored config read in this tuner's form has the digest as None (current_config),
    and the file's was dropped, not set to None: the same file was refused, `different config
    (server.model differs)`, where the tuner of 7de5686 continued it. Its extension stores no digest."""
    from support.landscapes import table_from_profile, write_table

    write_table(tmp_path / "node.json", table_from_profile(keep=lambda s: s.num_draft_tokens <= 8))
    path = tmp_path / "m.yaml"
    path.write_text("""
name: m
search_space: eagle3
server:
  backend: model
  model_path: some/model
  draft_model_path: some/draft
  model: {landscape: node.json, noise: 0, seed: 1}
bench: {suite: quick}
budget: {n_trials: 3}
""")
    config = load_study(path)
    create_study(config, config.storage)
    study = open_study("m", config.storage)
    stored = study.user_attrs[CONFIG_ATTR]
    stored["server"]["model"].pop("landscape_sha256")  # as a tuner before the digest stored it
    study.set_user_attr(CONFIG_ATTR, stored)
    said = []
    create_study(config, config.storage, note=said.append)
    assert said == []
    bigger = config.model_copy(update={"budget": config.budget.model_copy(update={"n_trials": 5})})
    create_study(bigger, config.storage, note=said.append)
    assert said == ["study m: budget.n_trials 3 -> 5"]
    again = open_study("m", config.storage).user_attrs[CONFIG_ATTR]
    assert again == {**stored, "budget": {**stored["budget"], "n_trials": 5}}


def test_run_does_not_say_this_node_s_chain_only_backend_of_an_older_study(tmp_path):
    """On a DSA model this tuner pins dsa, which runs chains only, and says 'search space without
    trees: attention backend dsa ... topk is held at 1'. A study an older tuner made runs its own
    pin, flashinfer, with its trees (older_study_record): `study run` on it said the dsa line all the
    same, of a backend it never launches and a space it does not hold."""
    from tuner.engine.facts import ATTENTION_ATTR
    from tuner.engine.study import config_from_study

    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text('{"architectures": ["DeepseekV32ForCausalLM"], "index_topk": 2048, '
                                       '"kv_lora_rank": 512}')
    path = tmp_path / "d.yaml"
    path.write_text(f"""
name: d
search_space: eagle3
server: {{backend: sglang, model_path: {model}, tp_size: 8}}
bench: {{suite: quick}}
budget: {{n_trials: 4}}
""")
    config = load_study(path)
    said = []
    create_study(config, config.storage, note=said.append)
    assert any(s.startswith("search space without trees: attention backend dsa") for s in said), said
    study = open_study("d", config.storage)
    study._storage.set_study_user_attr(study._study_id, ATTENTION_ATTR, None)  # as an older tuner stored it
    said = []
    create_study(config, config.storage, note=said.append)
    assert said == []
    _, space, _ = config_from_study(open_study("d", config.storage), str(tmp_path / "wd"))
    assert space.attention.backend == "flashinfer" and 4 in space.values("speculative_eagle_topk")


def test_an_older_dsa_study_s_tree_seed_is_judged_with_the_backend_its_launches_ran(tmp_path):
    """QA: `tuner study run` refused the older study's own file: `seed_trials[0]: steps=2 topk=4
    draft=8 is a tree, and attention backend dsa runs topk 1 only for this model`, dsa being this
    node's choice for a new study, not the backend the study launches (flashinfer, with its trees
    in the space: a tree its rules refuse is stored invalid, never launched). The preflight and
    create_study now judge a study already in storage without a decision by that backend; a new
    study's file is still refused before anything is written."""
    from tuner.engine.preflight import preflight

    path, config = older_dsa_study_with_a_tree_seed(tmp_path)
    preflight(config, None, path)  # refused before
    said = []
    assert create_study(config, config.storage, note=said.append).study_name == "d"
    assert said == []
    # the same file for a study not in storage yet: this node's decision, dsa, refuses the seed at once
    fresh = config.model_copy(update={"name": "d2"})
    for check in (lambda: preflight(fresh, None, path), lambda: create_study(fresh, fresh.storage)):
        with pytest.raises(ConfigError, match=r"seed_trials\[0\]: steps=2 topk=4 draft=8 is a tree, and "
                                              r"attention backend dsa runs topk 1 only"):
            check()
    assert not study_names(config.storage) - {"d", "d.baseline"}  # nothing of d2 written


def study_names(url: str) -> set[str]:
    return {s.study_name for s in optuna.get_all_study_summaries(url)}
