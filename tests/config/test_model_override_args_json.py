"""``json_model_override_args`` that SGLang cannot read as a JSON object is refused at ``tuner study
create``, in ``server.args`` and a space's ``fixed``, in one line naming the file and the key
(tuner/sglang/arg_types.py ``model_override_problem``); a stored study holding one stays readable.

QA (qa228): SGLang 0.5.23's parser takes the option as any text (type str,
``arg_groups/fields/model.py``: "a dictionary in JSON string format"), and every launch reads it with
``json.loads`` (``configs/model_config.py``) and applies it with ``.items()``
(``utils/hf_transformers/config.py``). ``json_model_override_args: '{rope_scaling: {factor: 2}}'``
(YAML flow, not JSON) or ``'{"a": yes}'`` was created, launched and exported as it was: on SGLang
every launch, the baseline's first, would fail with JSONDecodeError."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from support.demo_study import ROOT, demo_study

from tuner.cli import cli
from tuner.config.server_arg_checks import check_server_args


def _create(tmp_path, args=None, fixed=None):
    space = tmp_path / "space.yaml"
    data = yaml.safe_load((ROOT / "search_spaces" / "eagle3.yaml").read_text())
    data["fixed"] = fixed or {}
    space.write_text(yaml.safe_dump(data))
    study = demo_study(tmp_path, "ov", **{"search_space": str(space), "server.args": args or {}})
    return CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)


@pytest.mark.parametrize("text, said", [
    ("{rope_scaling: {factor: 2}}", "it is not JSON"),     # YAML's flow style, not JSON
    ('{"a": yes}', "it is not JSON"),                       # YAML 1.1's boolean
    ("{'a': 1}", "it is not JSON"),                         # Python's quotes
    ('[{"a": 1}]', "JSON list, not an object"),
    ('"rope"', "JSON str, not an object"),
    ("", "it is not JSON"),                                 # json.loads('') fails too
])
@pytest.mark.parametrize("where", ["server.args", "fixed"])
def test_text_sglang_cannot_apply_is_refused_at_create(tmp_path, text, said, where):
    r = _create(tmp_path, **{"args" if where == "server.args" else "fixed": {"json_model_override_args": text}})
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    file = "ov.yaml" if where == "server.args" else "space.yaml"
    assert f"{file}: {where}: json_model_override_args: " in lines[0], r.output
    assert said in lines[0] and "write a JSON object in quotes" in lines[0], r.output
    assert not (tmp_path / "ov.db").exists() and not (tmp_path / "work").exists()


@pytest.mark.parametrize("text", ['{"rope_scaling": {"factor": 2.0}}', "{}", "null"])
def test_a_json_object_or_nothing_is_taken(text):
    # SGLang applies a falsy result (`if model_override_args:`) as no override
    assert check_server_args({"json_model_override_args": text}, "server.args") == \
        {"json_model_override_args": text}


def test_a_stored_study_holding_one_stays_readable():
    # status and export rebuild a stored study's config with stored=True: what it stored is kept
    assert check_server_args({"json_model_override_args": '{"a": yes}'}, "server.args", stored=True) == \
        {"json_model_override_args": '{"a": yes}'}


@pytest.mark.parametrize("extra", [["--json-model-override-args", "{a: 1}"], ["--json-model-override-args={a: 1}"]])
def test_in_extra_args_it_is_refused_alike(tmp_path, extra):
    study = demo_study(tmp_path, "ov", **{"server.extra_args": extra})
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert "ov.yaml: server: extra_args: --json-model-override-args '{a: 1}': SGLang reads it with json.loads" \
        in lines[0], r.output
    assert not (tmp_path / "ov.db").exists()


def test_in_extra_args_a_json_object_is_taken_and_a_stored_one_kept(tmp_path):
    study = demo_study(tmp_path, "ov", **{"server.extra_args": ["--json-model-override-args", '{"a": 1}']})
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    from tuner.config.study import study_from_dict
    data = yaml.safe_load(study.read_text())
    data["server"]["extra_args"] = ["--json-model-override-args", "{a: 1}"]
    assert study_from_dict(data).server.extra_args[1] == "{a: 1}"


@pytest.mark.parametrize("text", ["{rope: 1}", '{"a": NaN}'])
def test_model_loader_extra_config_is_held_to_what_orjson_reads(tmp_path, text):
    # configs/load_config.py: LoadConfig reads a non-empty text with orjson.loads at every launch
    r = _create(tmp_path, args={"model_loader_extra_config": text})
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert "ov.yaml: server.args: model_loader_extra_config: " in lines[0], r.output
    assert "SGLang reads it with orjson.loads at every launch" in lines[0], r.output


def test_a_yaml_number_is_read_as_the_text_argv_holds(tmp_path):
    # json_model_override_args: 1 goes on the command line as '1': JSON, but no object
    r = _create(tmp_path, args={"json_model_override_args": 1})
    assert r.exit_code == 2 and "JSON int, not an object" in r.output, r.output


@pytest.mark.parametrize("text", ["", "{}", '{"presharded_path": "/cache"}'])
def test_model_loader_extra_config_empty_or_json_is_taken(text):
    assert check_server_args({"model_loader_extra_config": text}, "server.args") == {"model_loader_extra_config": text}
