"""What the property-based fuzz of the tuner's inputs (`tests/cli/test_fuzz_inputs.py`) found, each
pinned as a plain example: the input, through the real command, is one line naming the file (or
the flag) and the key with the fix, exit 2, and nothing written; the same file without the fault
is accepted."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from support.cli_inputs import SUITE, accepted, refused

from tuner.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SPACE = (ROOT / "search_spaces" / "eagle3.yaml").read_text()


def study_folder(tmp: Path, suite: dict | None = None) -> Path:
    """sim-demo.yaml with its search space and suite beside it (names relative to the study file)."""
    study = yaml.safe_load((ROOT / "studies" / "sim-demo.yaml").read_text())
    study.update(search_space="space.yaml", bench={**study["bench"], "suite": "suite.yaml"})
    (tmp / "study.yaml").write_text(yaml.safe_dump(study, sort_keys=False))
    (tmp / "space.yaml").write_text(SPACE)
    (tmp / "suite.yaml").write_text(yaml.safe_dump(suite or SUITE, sort_keys=False))
    return tmp / "study.yaml"


@pytest.mark.parametrize("name, char", [("study.yaml", "\x00"), ("space.yaml", "\x1b"), ("suite.yaml", "\x07")],
                         ids=["NUL in the study", "ESC in the space", "BEL in the suite"])
def test_a_control_character_in_a_yaml_file_is_one_line_naming_its_line(tmp_path, name, char):
    # QA (fuzz): PyYAML's "unacceptable character #x0000: special characters are not allowed\n  in
    # "<unicode string>", position 10" was printed as it is: two lines, and a position, not a line
    study = study_folder(tmp_path)
    text = (tmp_path / name).read_text()
    at = text.index("\n", text.index("\n") + 1) + 1  # the start of line 3
    (tmp_path / name).write_text(text[:at] + f"x{char}y: 1\n" + text[at:])
    line = refused(tmp_path, ["study", "create", str(study)])
    assert f"{tmp_path / name}: line 3: not valid YAML (control character U+{ord(char):04X} is not allowed" in line
    assert line.endswith("remove it)"), line
    (tmp_path / name).write_text(text)
    accepted(["study", "create", str(study)])


@pytest.mark.parametrize("key, value, says", [
    ("sweep.concurrencies", [1, 10 ** 23], "suite.yaml: sweep.concurrencies: goes up to "
                                           "100000000000000000000000; the tuner's cap is 16384 requests at once"),
    ("warmup.requests", 10 ** 9, "suite.yaml: warmup.requests: input should be less than or equal to 16384"),
], ids=["concurrency 10^23", "warm-up 10^9 requests"])
def test_a_request_count_past_the_cap_is_refused_before_anything_is_built(tmp_path, key, value, says):
    # QA (fuzz): `study create` built every request of the batch (Suite.cycled) and ran for ever
    # (over 2 minutes, then out of memory); the cap is far above any concurrency a study measures
    section, field = key.split(".")
    suite = {**SUITE, section: {**SUITE[section], field: value}}
    study = study_folder(tmp_path, suite)
    assert says in refused(tmp_path, ["study", "create", str(study)])
    suite[section][field] = [1, 32, 16_384] if field == "concurrencies" else 16_384  # the cap itself is taken
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    accepted(["study", "run", "--dry-run", str(study)])


def test_sim_landscape_refuses_a_concurrency_past_the_cap(tmp_path, monkeypatch):
    # QA (fuzz): `tuner sim landscape --concurrency 1,10**23` ran the model for ever
    monkeypatch.chdir(tmp_path)
    line = refused(tmp_path, ["sim", "landscape", "--concurrency", f"1,{10 ** 23}", "--table", "t.json"])
    assert line == ("error: Invalid value for '--concurrency': 100000000000000000000000 is more than the "
                    "tuner's cap of 16384 requests at once")


@pytest.mark.parametrize("flag", ["--profile", "--suite", "--space"])
def test_sim_landscape_refuses_an_empty_file_flag_by_its_name(tmp_path, monkeypatch, flag):
    # QA (fuzz): `--profile ''` and `--suite ''` (a script's unset "$VAR") said `error: .: is a folder;
    # give a file`, naming neither the flag nor what to give; --space named no flag
    monkeypatch.chdir(tmp_path)
    line = refused(tmp_path, ["sim", "landscape", flag, "", "--table", "t.json"])
    assert line.startswith(f"error: {flag}: is empty: give a shipped "), line


def test_an_empty_suite_name_says_so(tmp_path, monkeypatch):
    # the suite loader itself, for every command that takes a suite (`tuner bench --suite ''` too)
    from tuner.config.suite import load_suite
    from tuner.config.yamlfile import ConfigError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as caught:
        load_suite("")
    assert str(caught.value) == ("<suite>: empty; give a shipped suite's name (seed, quick, mixed, sharegpt-mini) "
                                 "or a suite YAML file")


@pytest.mark.parametrize("layout, key, says", [
    ("jsonl", "category", "d.jsonl: line 2: category: holds a lone UTF-16 surrogate '\\ud800'"),
    ("jsonl", "id", "d.jsonl: line 2: id: holds a lone UTF-16 surrogate '\\ud800'"),
    ("sharegpt", "category", "d.json: [1].category: holds a lone UTF-16 surrogate '\\ud800'"),
], ids=["jsonl category", "jsonl id", "sharegpt category"])
def test_a_lone_surrogate_in_a_dataset_label_is_refused(tmp_path, layout, key, says):
    # QA (fuzz): a row's category (or id, the prompt's name) holding "\ud800" was stored with the
    # study; `tuner study status` and `tuner study report` then ended in UnicodeEncodeError
    def rows(label: str) -> str:
        if layout == "jsonl":
            return "".join(json.dumps({"prompt": f"request number {i}", "max_tokens": 8, key: f"{label}{i}"}) + "\n"
                           for i in range(3))
        return json.dumps([{"id": f"c{i}", key: f"{label}{i}", "conversations": [
            {"from": "human", "value": f"request number {i}"}, {"from": "gpt", "value": "a reply of some length"}]}
            for i in range(3)])

    name = "d.jsonl" if layout == "jsonl" else "d.json"
    suite = {**{k: v for k, v in SUITE.items() if k != "prompts"}, "dataset": {"path": name}}
    study = study_folder(tmp_path, suite)
    (tmp_path / name).write_text(rows("ok").replace("ok1", "\\ud800"))  # JSON's escape of a lone surrogate
    assert says in refused(tmp_path, ["study", "create", str(study)])
    (tmp_path / name).write_text(rows("ok"))
    accepted(["study", "run", "--dry-run", str(study)])


def test_a_landscape_table_with_a_byte_order_mark_is_read(tmp_path):
    # QA (fuzz): a table saved by a Windows editor (a UTF-8 BOM first) was refused with json's
    # "Unexpected UTF-8 BOM (decode using utf-8-sig)"; the study, suite and dataset files take it
    table = tmp_path / "t.json"
    r = CliRunner().invoke(cli, ["sim", "landscape", "--table", str(table)])
    assert r.exit_code == 0, r.output
    study = yaml.safe_load((ROOT / "studies" / "model-demo.yaml").read_text())
    study["server"]["model"] = {"landscape": "t.json", "noise": 0.02, "seed": 1}
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(study, sort_keys=False))
    table.write_text("\ufeff" + table.read_text())
    accepted(["study", "run", "--dry-run", str(tmp_path / "study.yaml")])


def _demo_with(tmp: Path, **server) -> Path:
    study = yaml.safe_load((ROOT / "studies" / "sim-demo.yaml").read_text())
    study["server"] = {**study["server"], **server}
    (tmp / "study.yaml").write_text(yaml.safe_dump(study, sort_keys=False))
    return tmp / "study.yaml"


@pytest.mark.parametrize("args, says", [
    ([""], "server.extra_args: entry 0 is '', the value of no option before it: every launch would fail with "
           "SGLang's 'unrecognized arguments'; remove it"),
    (["--log-level=info", " "], "server.extra_args: entry 1 is ' ', the value of no option before it"),
], ids=["alone", "after a flag=value"])
def test_an_empty_extra_arg_that_is_no_options_value_is_refused(tmp_path, args, says):
    # QA (fuzz): `extra_args: [""]` was created; the run's baseline then failed with "python -m
    # tuner.sim: error: unrecognized arguments:" (exit 1), as SGLang's parser would on the GPU node
    line = refused(tmp_path, ["study", "create", str(_demo_with(tmp_path, extra_args=args))])
    assert says in line, line
    _demo_with(tmp_path, extra_args=["--chat-template", ""])  # an option's empty value is a value
    accepted(["study", "run", "--dry-run", str(tmp_path / "study.yaml")])


@pytest.mark.parametrize("key", ["startup_timeout_s", "stop_grace_s"])
def test_server_timeouts_are_at_most_a_year(tmp_path, key):
    # QA (fuzz): 1e308 was taken; the run said each trial "may take up to" a 300-digit number
    line = refused(tmp_path, ["study", "create", str(_demo_with(tmp_path, **{key: 1e308}))])
    assert f"server.{key}: 1e+308 s is longer than a year (the most a study may give: 366 days)" in line, line
    _demo_with(tmp_path, **{key: 366 * 86400})
    accepted(["study", "run", "--dry-run", str(tmp_path / "study.yaml")])


@pytest.mark.parametrize("value", ["", "studies/x.db"], ids=["empty", "a path, no URL"])
@pytest.mark.parametrize("command", ["create", "run --dry-run", "status"])
def test_a_study_files_storage_that_is_no_url_is_said_as_the_files(tmp_path, value, command):
    # QA (fuzz): the study file's `storage: ""` was said as `error: --storage: storage: '' is not a
    # storage URL`: a flag nobody gave, and no file
    study = yaml.safe_load((ROOT / "studies" / "sim-demo.yaml").read_text())
    (tmp_path / "study.yaml").write_text(yaml.safe_dump({**study, "storage": value}, sort_keys=False))
    line = refused(tmp_path, ["study", *command.split(), str(tmp_path / "study.yaml")])
    assert line == (f"error: {tmp_path / 'study.yaml'}: storage: {value!r} is not a storage URL; expected e.g. "
                    "sqlite:///studies/NAME.db or postgresql://user@host/db"), line


@pytest.mark.parametrize("command", ["create", "status"])
def test_a_study_files_storage_variable_that_is_unset_is_said_as_the_files(tmp_path, monkeypatch, command):
    # QA: the study file's `storage: ${VAR}`, VAR unset, was said as `error: --storage: storage: ...`;
    # a --storage variable and $TUNER_STORAGE's default are still said as the flag that replaces them
    monkeypatch.delenv("TUNER_NO_SUCH_VAR", raising=False)
    study = yaml.safe_load((ROOT / "studies" / "sim-demo.yaml").read_text())
    (tmp_path / "study.yaml").write_text(yaml.safe_dump({**study, "storage": "${TUNER_NO_SUCH_VAR}"}))
    line = refused(tmp_path, ["study", command, str(tmp_path / "study.yaml")])
    assert line.startswith(f"error: {tmp_path / 'study.yaml'}: storage: environment variable TUNER_NO_SUCH_VAR "
                           "is not set; export it"), line
    line = refused(tmp_path, ["study", command, str(tmp_path / "study.yaml"), "--storage", "$TUNER_NO_SUCH_VAR"])
    assert line.startswith("error: --storage: environment variable TUNER_NO_SUCH_VAR is not set"), line
    monkeypatch.setenv("TUNER_STORAGE", "nourl")
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(study))
    line = refused(tmp_path, ["study", command, str(tmp_path / "study.yaml")])
    assert line.startswith("error: --storage: 'nourl' (from $TUNER_STORAGE) is not a storage URL"), line


@pytest.mark.parametrize("key, says", [
    ("search_space", "search_space: is empty; give a shipped space's name (eagle3) or a search-space file"),
    ("bench.suite", "bench.suite: is empty; give a shipped suite's name (seed, quick, mixed, sharegpt-mini)"),
    ("workdir", "workdir: is empty; give a folder, or remove the key for NAME/ beside the study file"),
])
def test_an_empty_path_in_the_study_file_says_so(tmp_path, key, says):
    # QA (fuzz): an empty search_space or bench.suite was "STUDY_FOLDER: is a folder; give a file";
    # an empty workdir was read as the key left out (NAME/ beside the study file)
    study = yaml.safe_load((ROOT / "studies" / "sim-demo.yaml").read_text())
    section, _, field = key.rpartition(".")
    (study[section] if section else study)[field] = ""
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(study, sort_keys=False))
    line = refused(tmp_path, ["study", "create", str(tmp_path / "study.yaml")])
    assert line.startswith(f"error: {tmp_path / 'study.yaml'}: {says}"), line


@pytest.mark.parametrize("section, field", [("single", "repeats"), ("sweep", "repeats"), ("adaptive", "max_repeats")])
def test_repeats_past_the_cap_are_refused(tmp_path, section, field):
    # QA (fuzz): single.repeats: 1000000000 was created; `study run --dry-run` (and a run) then
    # built a stage per repeat (tuner.bench.plan) until the kernel killed it for memory. Checked
    # through `create`, which builds no plan: without the cap it accepts the suite (exit 0)
    suite = copy.deepcopy(SUITE)
    suite.setdefault(section, {"rel_ci95": 0.1})[field] = 10 ** 9
    study = study_folder(tmp_path, suite)
    line = refused(tmp_path, ["study", "create", str(study)])
    assert f"suite.yaml: {section}.{field}: input should be less than or equal to 1000" in line, line
    suite[section][field] = 1000  # the cap itself is taken
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    accepted(["study", "run", "--dry-run", str(study)])
