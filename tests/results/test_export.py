"""`tuner study export`: the SGLang --config YAML, JSON, the command line and the adaptive policy,
from real Optuna studies measured through the ModelBackend (no processes). The round trip through
the simulated server is in test_export_roundtrip.py."""

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import SPACE, make_model_study
from support.prepared_once import prepared_once
from support.small_space import small_space

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.baseline import find_baseline
from tuner.engine.records import TrialRecord, load_records
from tuner.engine.study import config_from_study, create_study, open_study
from tuner.results.pareto import PickError, study_front
from tuner.server.command import plan_launch
from tuner.sglang.rules import SpecConfig
from tuner.sim.args import build_parser, merge_config


@pytest.fixture(scope="module")
def study_file(tmp_path_factory):
    # run once per session, whichever xdist worker asks first; each worker reads its own copy
    return prepared_once(tmp_path_factory, "export", lambda f: make_model_study(f, name="exp", n_trials=14)) / "exp.yaml"


def _open(path):
    config = load_study(path)
    return open_study(config.name, config.storage)


def run(*args):
    return CliRunner().invoke(cli, ["study", "export", *map(str, args)])


def comments_and_mapping(path: Path):
    text = path.read_text()
    comments = [line for line in text.splitlines() if line.startswith("#")]
    return comments, yaml.safe_load(text)


def sglang_adaptive_entries(path: Path) -> dict[int, list[int]]:
    """What SGLang 0.5.23's ``_load_adaptive_config`` accepts (adaptive_spec_params.py): digit-string
    keys, each a non-empty list of non-negative ints in ``candidate_steps``; other keys skipped."""
    cfg = json.loads(path.read_text())
    out = {}
    for key, entry in cfg.items():
        if not key.isdigit():
            continue
        steps = entry.get("candidate_steps")
        assert isinstance(steps, list) and steps and all(isinstance(s, int) and s >= 0 for s in steps), entry
        out[int(key)] = steps
    assert out, "SGLang needs at least one digit-string batch-size key"
    return out


# -- the YAML -----------------------------------------------------------------------------------


def test_yaml_is_a_flat_dash_keyed_sglang_config_of_the_effective_setting(tmp_path, study_file):
    out = tmp_path / "best.yaml"
    r = run(study_file, "--pick", "knee", "-o", out)
    assert r.exit_code == 0, r.output
    comments, mapping = comments_and_mapping(out)
    study = _open(study_file)
    knee = study_front(study).knee.record
    # flat, dashes only, scalars only, no deployment choices
    assert all("_" not in k for k in mapping), mapping
    assert all(isinstance(v, (str, int, float, bool)) for v in mapping.values())
    assert "host" not in mapping and "port" not in mapping
    eff = knee.effective
    assert mapping["speculative-num-steps"] == eff.num_steps
    assert mapping["speculative-eagle-topk"] == eff.eagle_topk
    assert mapping["speculative-num-draft-tokens"] == eff.num_draft_tokens
    assert mapping["model-path"] == "moonshotai/Kimi-K2.6" and mapping["tp-size"] == 8
    assert mapping["speculative-algorithm"] == "EAGLE3"
    assert mapping["speculative-draft-model-path"] == "sim/kimi-k2.6-eagle3"
    assert mapping["trust-remote-code"] is True and mapping["mem-fraction-static"] == 0.85
    # the launcher's pins, exactly as plan_launch decides them for this study on SGLang
    config, space, _ = config_from_study(study)
    sglang = config.server.model_copy(update={"backend": "sglang", "python": "python"})
    plan = plan_launch(sglang, eff, algorithm="EAGLE3", fixed_args=space.config.fixed, max_concurrency=32,
                       attention=space.attention)
    assert mapping["attention-backend"] == "fa3"  # the study's decision: MLA on Hopper (issue 15)
    for name, value in plan.server_args.items():
        assert mapping[name.replace("_", "-")] == value
    assert mapping["max-running-requests"] == 32
    # provenance at the top: study, trial, figures against the baseline, date, version, hardware
    head = "\n".join(comments)
    base = find_baseline(study).attrs
    a = knee.attrs
    assert f"--pick knee -> trial {knee.number}" in head and "study exp" in head
    assert f"{a['tok_per_s@32']:.1f} vs {base['tok_per_s@32']:.1f} tok/s (model time) = " \
           f"{a['tok_per_s@32'] / base['tok_per_s@32']:.2f}x" in head
    assert f"single request: {a['single_tok_per_s']:.1f} vs {base['single_tok_per_s']:.1f}" in head
    assert "SGLang version: not recorded" in head
    assert "profile k2.6-tp8-pcie, tp-size 8" in head and "MODEL time" in head
    assert "host and port are left out" in head
    assert out.read_text().startswith("# SGLang server config exported by tuner")
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # readable like any file the user writes


def test_yaml_loads_into_the_same_argv_as_print_command(tmp_path, study_file):
    out = tmp_path / "best.yaml"
    r = run(study_file, "--pick", "single", "-o", out, "--print-command")
    assert r.exit_code == 0, r.output
    command = r.stdout.strip().split()
    assert command[:3] == ["python", "-m", "sglang.launch_server"]
    assert "--host" not in command and "--port" not in command
    # SGLang's --config rules (as the simulator implements them): keys as flags, true -> bare flag
    from_yaml = merge_config(["--config", str(out)], build_parser())
    assert from_yaml == command[3:]


def test_picks_single_throughput_and_trial_number(tmp_path, study_file):
    study = _open(study_file)
    front = study_front(study)
    for pick, expected in (("single", front.single.number), ("throughput", front.throughput.number)):
        out = tmp_path / f"{pick}.yaml"
        assert run(study_file, "--pick", pick, "-o", out).exit_code == 0
        comments, _ = comments_and_mapping(out)
        assert any(f"--pick {pick} -> trial {expected}" in c for c in comments)
    # a trial off the front is allowed by number; a reused trial exports the measurement it reused
    records = load_records(study)
    off = next(r for r in records if r.status == "measured" and r.feasible
               and r.number not in [p.number for p in front.points])
    out = tmp_path / "off.yaml"
    assert run(study_file, "--pick", off.number, "-o", out).exit_code == 0
    _, mapping = comments_and_mapping(out)
    assert mapping["speculative-num-steps"] == off.effective.num_steps
    reused = next(r for r in records if r.status == "reused")
    out = tmp_path / "reused.yaml"
    assert run(study_file, "--pick", reused.number, "-o", out).exit_code == 0
    comments, _ = comments_and_mapping(out)
    assert any(f"-> trial {reused.attrs['reused_from']}" in c for c in comments)


def test_min_speedup_c32_limits_the_pick(tmp_path, study_file):
    study = _open(study_file)
    records = load_records(study)
    out = tmp_path / "fast.yaml"
    r = run(study_file, "--pick", "single", "--min-speedup-c32", "1.0", "-o", out)
    assert r.exit_code == 0, r.output
    _, mapping = comments_and_mapping(out)
    spec = SpecConfig(mapping["speculative-num-steps"], mapping["speculative-eagle-topk"],
                      mapping["speculative-num-draft-tokens"])
    chosen = next(r for r in records if r.effective == spec and r.status == "measured")
    assert chosen.attrs["speedup@32"] >= 1.0
    best_eligible = max(r.attrs["single_speedup"] for r in records
                        if r.status == "measured" and r.feasible and r.attrs["speedup@32"] >= 1.0)
    assert chosen.attrs["single_speedup"] == best_eligible


def test_json_format(tmp_path, study_file):
    out = tmp_path / "best.json"
    r = run(study_file, "--pick", "knee", "-o", out)  # the .json name selects the format
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    knee = study_front(_open(study_file)).knee.record
    assert data["trial"] == knee.number and data["effective"] == knee.effective.as_dict()
    assert all("_" not in k for k in data["server_args"])
    assert data["command"].startswith("python -m sglang.launch_server --model-path")
    assert data["provenance"]["figures"]["tok_per_s@32"] == knee.attrs["tok_per_s@32"]
    assert data["provenance"]["model_time"] is True
    r = run(study_file, "--pick", "knee", "--format", "json")  # to stdout
    assert r.exit_code == 0 and json.loads(r.stdout)["trial"] == knee.number


# -- the adaptive policy ------------------------------------------------------------------------


def test_adaptive_policy_picks_the_best_measured_steps_per_concurrency(tmp_path, study_file):
    out = tmp_path / "policy.json"
    r = run(study_file, "--adaptive", "-o", out)
    assert r.exit_code == 0, r.output
    entries = sglang_adaptive_entries(out)
    study = _open(study_file)
    base = find_baseline(study).attrs
    topk1 = {}
    for rec in load_records(study):
        if rec.status == "measured" and rec.feasible and rec.effective.eagle_topk == 1:
            topk1.setdefault(rec.effective.num_steps, rec)
    assert sorted(entries) == [1, 8, 32]
    for c, steps in entries.items():
        options = {0: base[f"tok_per_s@{c}"], **{s: r.attrs[f"tok_per_s@{c}"] for s, r in topk1.items()}}
        assert steps == [max(options, key=options.get)], (c, options)
    evidence = json.loads(out.read_text())["_tuner"]["measured"]["32"]["by_steps"]
    assert evidence["0"]["trial"] == "baseline" and len(evidence) == len(topk1) + 1
    assert "batch size >= 32: steps" in r.stderr


def test_adaptive_out_alongside_the_yaml(tmp_path, study_file):
    out, policy = tmp_path / "best.yaml", tmp_path / "policy.json"
    r = run(study_file, "-o", out, "--adaptive-out", policy, "--print-command")
    assert r.exit_code == 0, r.output
    entries = sglang_adaptive_entries(policy)
    union = sorted({s for steps in entries.values() for s in steps})
    _, mapping = comments_and_mapping(out)
    assert mapping["speculative-adaptive"] is True
    assert mapping["speculative-adaptive-config"] == str(policy)
    # SGLang's launch checks (speculative_hook.py, _init_adaptive_speculative_params)
    assert mapping["speculative-eagle-topk"] == 1
    assert mapping["speculative-num-steps"] in union and mapping["speculative-num-steps"] > 0
    assert mapping["speculative-num-draft-tokens"] == mapping["speculative-num-steps"] + 1
    assert "--speculative-adaptive" in r.stdout.split()
    # a pick that cannot start the policy is refused, and nothing is written
    topk4 = next(x for x in load_records(_open(study_file)) if x.status == "measured" and x.effective.eagle_topk > 1)
    out2, policy2 = tmp_path / "b2.yaml", tmp_path / "p2.json"
    r = run(study_file, "--pick", topk4.number, "-o", out2, "--adaptive-out", policy2)
    assert r.exit_code == 2 and "cannot start SGLang's adaptive mode" in r.stderr
    assert not out2.exists() and not policy2.exists()


@pytest.mark.parametrize("args, reason", [
    ({"enable_dp_attention": True, "dp_size": 8}, "attention DP is not supported"),
    ({"enable_two_batch_overlap": True}, "enable_two_batch_overlap=True is not supported"),
])
def test_adaptive_is_refused_where_sglang_switches_it_off(tmp_path, args, reason):
    # adaptive_spec_params.py, adaptive_unsupported_reason: SGLang logs one warning and runs static.
    # One launch, the first seed (3, 1, 4): a topk-1 setting, so --adaptive and --pick single would
    # both export were it not for the refusal (four launches showed nothing more)
    path = make_model_study(tmp_path, name="dp", n_trials=1, args=args, space=small_space(tmp_path))
    out, best, policy = tmp_path / "policy.json", tmp_path / "best.yaml", tmp_path / "p.json"
    r = run(path, "--adaptive", "-o", out)
    _refused(r, out, 2, f"SGLang 0.5.23 switches adaptive speculation off on this study's servers: {reason}")
    r = run(path, "--pick", "single", "-o", best, "--adaptive-out", policy)
    _refused(r, best, 2, reason)
    assert not policy.exists()


def test_adaptive_needs_topk_1_measurements(tmp_path):
    space = tmp_path / "space.yaml"
    space.write_text(yaml.safe_dump({"params": {
        "speculative_num_steps": {"choices": [2, 3]}, "speculative_eagle_topk": {"choices": [2]},
        "speculative_num_draft_tokens": {"choices": [4, 6]}}}))
    path = make_model_study(tmp_path, name="trees", n_trials=2, space=space)
    out = tmp_path / "policy.json"
    r = run(path, "--adaptive", "-o", out)
    assert r.exit_code == 1 and "topk 1 only" in r.stderr and not out.exists()


def test_adaptive_when_every_setting_breaks_the_slos_names_them_not_topk_1(tmp_path):
    """QA: on a study whose every measured setting (topk 1 among them) broke its SLOs, --adaptive
    advised adding topk 1 to the search space."""
    from support.suite_backend import SuiteBackend

    from tuner.engine.runner import run_study

    path = tmp_path / "tight.yaml"
    path.write_text(f"""
name: tight
search_space: {SPACE}
server: {{backend: sim, model_path: moonshotai/Kimi-K2.6, draft_model_path: d, tp_size: 8}}
bench: {{suite: quick, stream: true}}
sampler: {{seed: 5}}
budget: {{n_trials: 40}}
slo: [{{concurrency: 32, e2e_p99_ms: 1000, ttft_p99_ms: 100000}}]
""")
    config = load_study(path)
    create_study(config, config.storage)
    run_study(config, config.storage, SuiteBackend("k2.6-tp8-pcie", load_suite("quick"), seed=2), n_trials=3)
    measured = [r for r in load_records(_open(path)) if r.status == "measured"]
    assert len(measured) == 3 and any(r.effective.eagle_topk == 1 for r in measured)
    out = tmp_path / "policy.json"
    r = run(path, "--adaptive", "-o", out)
    _refused(r, out, 1, "no measured setting of study tight meets its SLOs (e2e_p99_ms@32 broken by 3 of 3)")
    assert "topk 1 to the search space" not in r.stderr and "tuner study run --add-trials N" in r.stderr


def test_adaptive_when_only_the_topk_1_settings_break_the_slos():
    from tuner.results.adaptive import build_policy

    def record(n, topk, ok):
        check = {"limit": "ttft_p99_ms", "concurrency": 32, "ok": ok, "measured_ms": 10.0, "limit_ms": 5.0,
                 "excess": 1.0}
        return TrialRecord(n, "COMPLETE", "measured", SpecConfig(2, topk, 3), SpecConfig(2, topk, 3), [1.0, 1.0],
                           ok, {"slo_checks": [check], "tok_per_s@32": 100.0}, 1.0)

    with pytest.raises(PickError, match=r"no topk-1 setting of study s meets its SLOs \(ttft_p99_ms@32 broken by "
                                        r"1 of 1\), and SGLang's adaptive mode runs --speculative-eagle-topk 1 only"):
        build_policy("s", [record(0, 1, False), record(1, 4, True)], {"tok_per_s@32": 90.0})


def test_adaptive_judges_a_setting_measured_again_by_the_mean_of_its_readings():
    """QA: a study sweeping C=64 measured (1, 1, 2) three times (1017, 993, 999 tok/s; mean 1003, below
    the baseline's 1012): --adaptive gave batch size >= 64 steps 1 on its first, lucky reading, where
    status, pareto and export judge a setting by the mean of its readings."""
    from tuner.results.adaptive import build_policy

    def record(n, tok_per_s):
        spec = SpecConfig(1, 1, 2)
        return TrialRecord(n, "COMPLETE", "measured", spec, spec, [tok_per_s / 1012.0], True,
                           {"effective_key": "1,1,2", "tok_per_s@64": tok_per_s, "single_tok_per_s": 43.0}, 1.0)

    policy = build_policy("s", [record(4, 1017.0), record(10, 993.0), record(11, 999.0)],
                          {"tok_per_s@64": 1012.0, "single_tok_per_s": 26.5})
    at64 = next(t for t in policy.thresholds if t.batch_size == 64)
    assert at64.measured[0].steps == 0 and at64.measured[1].tok_per_s == pytest.approx(1003.0)


# -- bad input: one line, non-zero exit, nothing written ----------------------------------------


def _refused(r, out: Path, code: int, words: str):
    assert r.exit_code == code, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and words in lines[0], r.stderr
    assert not out.exists()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]


def test_bad_input_writes_nothing(tmp_path, study_file):
    out = tmp_path / "best.yaml"
    storage = load_study(study_file).storage
    _refused(run("nosuch", "--storage", storage, "--pick", "knee", "-o", out), out, 2, "no such study")
    _refused(run(study_file, "--pick", "999", "-o", out), out, 2, "has no trial 999")
    invalid = next(r for r in load_records(_open(study_file)) if r.status == "invalid")
    _refused(run(study_file, "--pick", invalid.number, "-o", out), out, 1, "measured nothing")
    _refused(run(study_file, "--pick", "knee", "--min-speedup-c32", "5", "-o", out), out, 1,
             "reaches speedup@32 >= 5")
    _refused(run(study_file, "-o", out), out, 2, "give --pick")
    bad_name = tmp_path / "best.txt"
    _refused(run(study_file, "--pick", "knee", "-o", bad_name), bad_name, 2, "loads only .yaml/.yml")
    nodir = tmp_path / "missing" / "best.yaml"
    r = run(study_file, "--pick", "knee", "-o", nodir)
    assert r.exit_code == 2 and "does not exist" in r.stderr and not nodir.parent.exists()
    empty = make_model_study(tmp_path, name="empty", n_trials=None, space=small_space(tmp_path))
    _refused(run(empty, "--pick", "knee", "-o", out), out, 1, "no completed trial")
    _refused(run(empty, "--adaptive", "-o", out.with_suffix(".json")), out.with_suffix(".json"), 1,
             "no measured baseline")


def test_a_refused_export_keeps_the_previous_file(tmp_path, study_file):
    out = tmp_path / "best.yaml"
    assert run(study_file, "--pick", "knee", "-o", out).exit_code == 0
    before = out.read_text()
    r = run(study_file, "--pick", "knee", "--min-speedup-c32", "5", "-o", out)
    assert r.exit_code == 1 and out.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best.yaml"]


def test_no_text_of_the_study_breaks_out_of_the_header_comments(tmp_path):
    """QA: a suite name holding U+2028 (a line break to YAML, not to the old header code) ended
    the comment line, and the rest became a key SGLang's --config loader read: mem-fraction-static
    0.1 that no trial ran with."""
    (tmp_path / "inj.yaml").write_text(f"""name: inj
search_space: {small_space(tmp_path)}
server: {{backend: model, model_path: m, draft_model_path: d, model: {{profile: k2.6-tp8-pcie, seed: 1}},
         env: {{"A\\u2028B": x}}}}
bench:
  suite: {{name: "traffic\\u2028mem-fraction-static: 0.1\\u2028#\\x85dtype: half", prompts: [{{name: p, text: hello}}],
          single: {{lengths: [64], repeats: 1}}, sweep: {{concurrencies: [1, 32], max_tokens: 64}}}}
objectives: [single_speedup, speedup@32]
budget: {{n_trials: 3}}
""")
    r = CliRunner().invoke(cli, ["study", "run", str(tmp_path / "inj.yaml")])
    assert r.exit_code == 0, r.output
    out = tmp_path / "best.yaml"
    r = run(tmp_path / "inj.yaml", "--pick", "knee", "-o", out)
    assert r.exit_code == 0, r.output
    text = out.read_text()
    body = [line for line in text.splitlines() if not line.startswith("#")]
    loaded = yaml.safe_load(text)
    assert "mem-fraction-static" not in loaded and "dtype" not in loaded, loaded
    assert all(":" in line for line in body)  # every line past the comments is a key of the config
    assert "traffic mem-fraction-static: 0.1 #" in text  # said, inside its comment
    argv = merge_config(["--config", str(out)], build_parser())
    assert not any("mem-fraction-static" in a or "dtype" in a for a in argv), argv


def test_flag_no_flag_switches_reach_the_server_and_stay_out_of_the_yaml(tmp_path):
    """QA: `enable_tf32_matmul: false` was left off the command line (SGLang's default kept), and
    the export wrote it into the YAML, which SGLang 0.5.23's --config loader refuses
    (ConfigArgumentMerger: BooleanOptionalAction is an unsupported config option)."""
    path = make_model_study(tmp_path, name="sw", n_trials=2, space=small_space(tmp_path),
                            args={"enable_tf32_matmul": False, "lora_strict_loading": True})
    config = load_study(path)
    plan = plan_launch(config.server, SpecConfig(3, 1, 4), port=1, max_concurrency=32)
    assert "--no-enable-tf32-matmul" in plan.argv and "--lora-strict-loading" in plan.argv
    out = tmp_path / "best.yaml"
    r = run(path, "--pick", "knee", "-o", out)
    assert r.exit_code == 0, r.output
    _, mapping = comments_and_mapping(out)
    assert "enable-tf32-matmul" not in mapping and "lora-strict-loading" not in mapping
    assert "add them to the command line: --no-enable-tf32-matmul --lora-strict-loading" in r.stderr
    merge_config(["--config", str(out)], build_parser())  # loads as it is
    bad = tmp_path / "bad.yaml"
    bad.write_text("model-path: m\nenable-tf32-matmul: false\n")
    with pytest.raises(ValueError, match="Unsupported config option 'enable_tf32_matmul' with action "
                                         "'BooleanOptionalAction'"):
        merge_config(["--config", str(bad)], build_parser())


def test_options_sglangs_loader_refuses_go_to_the_command_line_not_the_yaml(tmp_path):
    """QA: `enable_dp_attention: true` and `disable_cuda_graph: true` were exported into the YAML;
    SGLang 0.5.23's loader refuses them (DeprecatedStoreTrueAction, a plain nargs=0 Action), and
    `lora_paths` (LoRAPathAction) alike. A false one is SGLang's default and simply left out."""
    path = make_model_study(tmp_path, name="dep", n_trials=2, space=small_space(tmp_path), args={
        "enable_dp_attention": True, "dp_size": 2, "disable_cuda_graph": False, "lora_paths": ["a=/x", "b=/y"]})
    out = tmp_path / "best.yaml"
    r = run(path, "--pick", "knee", "-o", out)
    assert r.exit_code == 0, r.output
    _, mapping = comments_and_mapping(out)
    assert mapping["dp-size"] == 2
    assert not {"enable-dp-attention", "disable-cuda-graph", "lora-paths"} & set(mapping), mapping
    assert ("add them to the command line: --enable-dp-attention --lora-paths a=/x b=/y" in r.stderr
            and "DeprecatedStoreTrueAction, LoRAPathAction" in r.stderr), r.stderr
    merge_config(["--config", str(out)], build_parser())  # loads as it is
    for key, action in (("enable-dp-attention: true", "DeprecatedStoreTrueAction"),
                        ("lora-paths: a=/x", "LoRAPathAction")):
        bad = tmp_path / "bad.yaml"
        bad.write_text(f"model-path: m\n{key}\n")
        with pytest.raises(ValueError, match=f"Unsupported config option '.*' with action '{action}'"):
            merge_config(["--config", str(bad)], build_parser())


def test_an_argument_spelled_otherwise_than_its_name_launches_and_exports_by_its_flag(tmp_path):
    """QA: `fp8_gemm_backend: cutlass` (SGLang's dest fp8_gemm_runner_backend, flag --fp8-gemm-backend)
    launched as --fp8-gemm-runner-backend and exported as the key fp8-gemm-runner-backend: SGLang's
    argparse refuses both ("unrecognized arguments"). Both use SGLang's own flag now."""
    path = make_model_study(tmp_path, name="cli", n_trials=1, space=small_space(tmp_path), args={
        "fp8_gemm_backend": "cutlass", "elastic_ep_join_rank_offset": 2})
    plan = plan_launch(load_study(path).server, SpecConfig(3, 1, 4), port=1, max_concurrency=32)
    assert plan.argv[plan.argv.index("--fp8-gemm-backend") + 1] == "cutlass", plan.argv
    out = tmp_path / "best.yaml"
    r = run(path, "--pick", "knee", "-o", out)
    assert r.exit_code == 0, r.output
    _, mapping = comments_and_mapping(out)
    assert mapping["fp8-gemm-backend"] == "cutlass" and mapping["elastic-ep-join-rank-offset"] == 2, mapping
    parser = build_parser()
    ns = parser.parse_args(merge_config(["--config", str(out)], parser))
    assert ns.fp8_gemm_runner_backend == "cutlass" and ns.ep_join_rank_offset == 2


@pytest.fixture(scope="module")
def two_launch_study(tmp_path_factory):
    """Study ``w`` of two launches, run once per session (whichever worker asks first); copy its folder per test."""
    return prepared_once(tmp_path_factory, "w", lambda f: make_model_study(f, name="w", n_trials=2))


@pytest.mark.parametrize("args, says", [
    (["-o", "/proc/tuner-x.yaml"], "-o: /proc/tuner-x.yaml: cannot write in /proc"),
    (["-o", "{tmp}/afile/x.yaml"], "afile is a file, not a folder"),
    (["-o", "{tmp}/b.yaml", "--adaptive-out", "{tmp}/b.yaml"], "is the -o file too"),
    (["-o", "{tmp}/c.yaml", "--adaptive-out", "{tmp}/nofolder/p.json"], "--adaptive-out: "),
])
def test_an_output_that_cannot_be_written_is_one_line_before_anything_is_written(two_launch_study, tmp_path,
                                                                                  args, says):
    """QA: -o in a folder that cannot be written (/proc) ended in a traceback; -o and --adaptive-out
    naming one file wrote a config whose policy file was the config itself; errors named -o for
    --adaptive-out, and a file in the way as a missing folder."""
    shutil.copytree(two_launch_study, tmp_path, dirs_exist_ok=True)
    path = tmp_path / "w.yaml"
    (tmp_path / "afile").write_text("")
    before = sorted(p.name for p in tmp_path.iterdir())
    r = run(path, "--pick", "knee", *[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and "Traceback" not in r.output, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_the_export_is_ascii_and_loads_to_the_same_values(tmp_path):
    """QA: the header comments carried raw UTF-8 (a suite's name, dataset categories) while the values
    were escaped; SGLang reads a --config file with a plain open(file_path), so under a non-UTF-8
    locale loading the export failed with UnicodeDecodeError. Every byte is ASCII now: comments say
    non-ASCII as escapes (\\u4ee3), values as YAML's, and the YAML loads to the values the JSON export
    holds; the --adaptive-out policy (JSON) is ASCII too."""
    (tmp_path / "uni.yaml").write_text(f"""name: uni
search_space: {SPACE}
server: {{backend: model, model_path: "models/キミ-K2.6", draft_model_path: d, model: {{profile: k2.6-tp8-pcie, seed: 1}}}}
bench:
  suite: {{name: "代码 emoji😀 café", prompts: [{{name: p, text: hello}}],
          single: {{lengths: [64], repeats: 1}}, sweep: {{concurrencies: [1, 32], max_tokens: 64}}}}
objectives: [single_speedup, speedup@32]
budget: {{n_trials: 3}}
""", encoding="utf-8")
    r = CliRunner().invoke(cli, ["study", "run", str(tmp_path / "uni.yaml")])
    assert r.exit_code == 0, r.output
    out, policy, as_json = tmp_path / "best.yaml", tmp_path / "política.json", tmp_path / "best.json"
    r = run(tmp_path / "uni.yaml", "--pick", "knee", "-o", out, "--adaptive-out", policy)
    assert r.exit_code == 0, r.output
    assert run(tmp_path / "uni.yaml", "--pick", "knee", "-o", as_json, "--adaptive-out", policy).exit_code == 0
    for path in (out, policy, as_json):
        path.read_bytes().decode("ascii")  # what open() reads under LC_ALL=C (Python's ascii codec)
    text = out.read_text(encoding="ascii")
    assert "\\u4ee3\\u7801 emoji\\U0001f600 caf\\xe9" in text  # said, readably, inside its comment
    mapping = yaml.safe_load(text)
    assert mapping == json.loads(as_json.read_text())["server_args"]
    assert mapping["model-path"] == "models/キミ-K2.6" and mapping["speculative-adaptive-config"] == str(policy)
    assert json.loads(policy.read_text())  # the policy: JSON's own escapes, the same values
