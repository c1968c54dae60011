"""`tuner study compare` names two studies' other search spaces and other server arguments: both
shape what a front and a figure are, and neither showed in its rows or warnings."""

from __future__ import annotations

import optuna
from optuna.trial import create_trial

from tuner.engine.records import MEASURED
from tuner.engine.study import SPACE_ATTR
from tuner.results.compare import compare_studies

EAGLE3 = {"algorithm": "EAGLE3", "fixed": {},
          "params": {"speculative_num_steps": {"low": 1, "high": 8, "step": 1},
                     "speculative_eagle_topk": {"choices": [1, 2, 4, 8]},
                     "speculative_num_draft_tokens": {"low": 2, "high": 64, "step": 1}}}


def study_with(space: dict = EAGLE3, **server) -> optuna.Study:
    study = optuna.create_study(directions=["maximize", "maximize"])
    study.set_metric_names(["single_speedup", "speedup@32"])
    study.set_user_attr("tuner_config", {"objectives": ["single_speedup", "speedup@32"],
                                         "server": {"backend": "model", "args": {}, "extra_args": [], "env": {},
                                                    **server}})
    study.set_user_attr(SPACE_ATTR, space)
    study.add_trial(create_trial(values=[2.0, 0.9], system_attrs={"constraints": [0.0]}, user_attrs={
        "status": MEASURED, "effective_key": "3-1-4",
        "effective": {"num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}}))
    return study


def test_another_search_space_is_named():
    """QA: B searched chains of up to 4 steps only (topk [1]); `compare` named no difference and set
    B's best single_speedup beside A's, which searched trees up to 8 steps, as of one search."""
    chains = {**EAGLE3, "params": {**EAGLE3["params"], "speculative_eagle_topk": {"choices": [1]},
                                   "speculative_num_steps": {"low": 1, "high": 4, "step": 1}}}
    got = compare_studies(study_with(), study_with(chains))
    assert got["warnings"] == ["the search spaces differ (params.speculative_eagle_topk, "
                               "params.speculative_num_steps): each front and best is over its own settings; "
                               "the settings measured in both compare alike"]


def test_other_server_arguments_are_named_and_an_environment_value_never_shown():
    """QA: B's servers ran with mem_fraction_static 0.8 (its space's fixed), an extra argument and
    another HF_TOKEN; `compare` named none of it."""
    fixed = {**EAGLE3, "fixed": {"mem_fraction_static": 0.8}}
    b = study_with(fixed, extra_args=["--enable-torch-compile"], env={"HF_TOKEN": "hf_secret_b"})
    got = compare_studies(study_with(env={"HF_TOKEN": "hf_secret_a"}), b)
    assert got["warnings"] == ["the servers ran with other arguments (mem_fraction_static, extra_args, "
                               "env HF_TOKEN): figures measure different servers"]
    assert "hf_secret" not in str(got)


def test_an_argument_given_in_the_space_or_in_server_args_is_the_same_launch():
    a = study_with(args={"mem_fraction_static": 0.8})
    b = study_with({**EAGLE3, "fixed": {"mem_fraction_static": 0.8}})
    assert compare_studies(a, b)["warnings"] == []


def test_a_warning_naming_an_odd_variable_is_printed_as_written(tmp_path):
    """An environment variable's name is the user's text: `[/x]` is no rich markup to the table
    printer (rich.errors.MarkupError: closing tag '[/x]' ... doesn't match any open tag)."""
    import yaml
    from support.cli_in_process import tuner_here
    from support.model_study import model_study_data

    for name, env in (("plain", {}), ("odd", {"[/x]": "1", "[red]R": "2"})):
        data = model_study_data(name, seed=1)
        data["server"]["env"] = env
        data["budget"] = {"n_trials": 1}
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(data))
        assert tuner_here("study", "run", f"{name}.yaml", cwd=tmp_path).exit_code == 0
    r = tuner_here("study", "compare", "plain.yaml", "odd.yaml", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert ("warning: the servers ran with other arguments (env [/x], env [red]R): figures measure different "
            "servers") in r.stdout


def test_an_older_study_s_stored_forms_are_read_as_this_tuner_reads_them(tmp_path):
    """An older tuner stored `mem_fraction_static: "0.85"` as written and no `env`/`extra_args`; this
    tuner launches the same server (0.85, nothing more): no difference to name."""
    import copy

    from support.model_study import model_study_data

    from tuner.config.study import study_from_dict

    data = model_study_data("n", seed=1)
    data["server"]["args"] = {"mem_fraction_static": 0.85}
    config = study_from_dict(data).model_dump(mode="json")
    older = copy.deepcopy(config)
    older["server"]["args"] = {"mem_fraction_static": "0.85"}
    del older["server"]["env"], older["server"]["extra_args"]

    def stored(cfg):
        study = study_with()
        study.set_user_attr("tuner_config", cfg)
        return study

    assert compare_studies(stored(older), stored(config))["warnings"] == []
    newer = copy.deepcopy(config)
    newer["server"]["args"] = {"mem_fraction_static": 0.8}
    assert compare_studies(stored(older), stored(newer))["warnings"] == [
        "the servers ran with other arguments (mem_fraction_static): figures measure different servers"]
