"""The export compares each value it writes with what the trial's server reported in
``/server_info`` and warns of a difference ("the trial's server ran X, the export sets Y"). A value
is the same when SGLang's argparse reads the text its ``--config`` loader hands it (``str(value)``,
item by item for a list) as the value the server reported: a float option given as an integer
(``watchdog_timeout: 600`` reports ``600.0``), a list's items written as text (``gc_threshold:
["700", "10"]`` reports ``[700, 10]``), a JSON option's text (SGLang 0.5.23 reports the parsed
object for ``default_chat_template_kwargs``, ``forward_hooks``, ``cuda_graph_config``: run on CPU with
its own ``prepare_server_args``). QA: each was warned as a mismatch, on an export that loads exactly
the measured server."""

import json
import sqlite3

import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli
from tuner.engine.study import open_study

_SAYS = "the trial's server ran"

SIM_STUDY = """
name: floats
search_space: eagle3
server:
  backend: sim
  model_path: sim/kimi-k2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  startup_timeout_s: 30
  stop_grace_s: 5
  args: {watchdog_timeout: 600, schedule_conservativeness: 1}
  sim: {speedup: 200, load_seconds: 0, noise: 0.0, seed: 1}
bench:
  suite:
    name: tiny
    prompts: [{name: fib, text: "Write a Python function that returns the n-th Fibonacci number."}]
    single: {lengths: [16], repeats: 1}
    sweep: {concurrencies: [1, 2], max_tokens: 16}
    warmup: {requests: 1, max_tokens: 4}
    timeout_s: 30
    temperature: 0.0
    ignore_eos: true
objectives: [single_speedup, speedup@2]
budget: {n_trials: 1}
"""


def _record_server_args(db, trial_id: int, server_args: dict) -> None:
    """Store ``server_args`` as the trial's recorded ``/server_info`` (a finished trial: by hand, in the
    SQLite file, as Optuna stores a user attribute)."""
    con = sqlite3.connect(db)
    try:
        con.execute("DELETE FROM trial_user_attributes WHERE trial_id = ? AND key = 'server_args'", (trial_id,))
        con.execute("INSERT INTO trial_user_attributes (trial_id, key, value_json) VALUES (?, 'server_args', ?)",
                    (trial_id, json.dumps(server_args)))
        con.commit()
    finally:
        con.close()


def _export(path, out):
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", "0", "-o", str(out)])
    assert r.exit_code == 0, r.output
    return r.stderr, out.read_text()


def test_a_float_option_given_an_integer_is_what_the_simulated_server_ran(tmp_path):
    path = tmp_path / "floats.yaml"
    path.write_text(SIM_STUDY)
    r = CliRunner().invoke(cli, ["study", "run", str(path)])
    assert r.exit_code == 0, r.output
    trial = next(t for t in open_study("floats", f"sqlite:///{tmp_path / 'floats.db'}").trials if t.number == 0)
    assert trial.user_attrs["server_args"]["watchdog_timeout"] == 600.0  # what /server_info said
    stderr, text = _export(path, tmp_path / "best.yaml")
    assert _SAYS not in stderr and _SAYS not in text, stderr
    assert yaml.safe_load(text)["watchdog-timeout"] == 600


def test_values_sglang_parsed_are_what_it_reported_and_a_real_difference_is_still_said(tmp_path):
    data = model_study_data("parsed", seed=1)
    data["budget"]["n_trials"] = 1
    data["server"]["args"] = {
        "gc_threshold": ["700", "10", "10"], "bucket_time_to_first_token": [0.1, 1],
        "default_chat_template_kwargs": '{"enable_thinking": false}', "forward_hooks": '[{"name": "a"}]',
        "cuda_graph_config": '{"decode": {"max_bs": 16}}', "watchdog_timeout": 600}
    path = tmp_path / "parsed.yaml"
    path.write_text(yaml.safe_dump(data))
    assert CliRunner().invoke(cli, ["study", "run", str(path)]).exit_code == 0
    study = open_study("parsed", f"sqlite:///{tmp_path / 'parsed.db'}")
    trial = next(t for t in study.trials if t.number == 0)
    # what SGLang 0.5.23's resolved_dict() reports for these arguments (its /server_info)
    reported = {"gc_threshold": [700, 10, 10], "bucket_time_to_first_token": [0.1, 1.0],
                "default_chat_template_kwargs": {"enable_thinking": False}, "forward_hooks": [{"name": "a"}],
                "cuda_graph_config": {"decode": {"max_bs": 16}}, "watchdog_timeout": 600.0}
    _record_server_args(tmp_path / "parsed.db", trial._trial_id, reported)
    stderr, text = _export(path, tmp_path / "best.yaml")
    assert _SAYS not in stderr and _SAYS not in text, stderr

    _record_server_args(tmp_path / "parsed.db", trial._trial_id,
                        {**reported, "gc_threshold": [700, 20, 10], "watchdog_timeout": 300.0})
    stderr, _ = _export(path, tmp_path / "best.yaml")
    said = [line for line in stderr.splitlines() if _SAYS in line]
    assert len(said) == 2 and "gc-threshold" in said[0] + said[1] and "watchdog-timeout" in said[0] + said[1], stderr
