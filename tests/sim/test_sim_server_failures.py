"""The simulated server's command line and failure modes, each as a real process (``python -m
tuner.sim``, what the launcher starts, forked from an interpreter that imported the simulator once:
tests/support/forked_sim.py); ``tuner sim serve``, the CLI's thin wrapper over the same
parser, is run in this process (click's runner) where only its refusal of a command line is read.

SGLang's behaviour mirrored: argparse rejects unknown flags (exit 2); bad speculative combinations
raise AssertionError/TypeError/ValueError at launch, printed as a traceback, before any loading;
out of memory, injected start-up failures, an MLA tree on a chain-only backend and a draft tree too
large for its candidates come after the load delay and before the server is ready (exit 1).
"""

from __future__ import annotations

import signal
import subprocess
import time

import pytest
import requests
from click.testing import CliRunner
from support.forked_sim import run_forked_sim, sim_zygote
from support.forked_sim import running_forked_sim as running_sim
from support.simproc import sim_argv

from tuner.cli import cli

from tuner.sglang.rules import WARN_DRAFT_TOKENS_ADJUSTED

SPEEDUP = 200.0


@pytest.fixture(scope="module")
def zygote(tmp_path_factory):
    """The simulators of this module forked from one interpreter that imported the simulator once
    (support/forked_sim.py): each a real process, as ``python -m tuner.sim`` is."""
    yield from sim_zygote(tmp_path_factory)


def _run(zygote, *args: str, timeout_s: float = 20.0) -> subprocess.CompletedProcess:
    """Run the simulator to completion (for start-up failures); bounded by ``timeout_s``."""
    return run_forked_sim(zygote, *args, speedup=SPEEDUP, timeout_s=timeout_s)


def _serve(*args: str) -> subprocess.CompletedProcess:
    """``tuner sim serve ARGS`` in this process, for command lines it refuses before serving: the
    same exit code and output as the real command; an escaping exception fails the test."""
    r = CliRunner().invoke(cli, ["sim", "serve", *args], catch_exceptions=False)
    return subprocess.CompletedProcess(list(args), r.exit_code, r.stdout, r.stderr)


def _spec(steps=None, topk=None, draft=None, *more: str) -> list[str]:
    flags = ["--speculative-algorithm", "EAGLE3"]
    for name, value in (("--speculative-num-steps", steps), ("--speculative-eagle-topk", topk),
                        ("--speculative-num-draft-tokens", draft)):
        if value is not None:
            flags += [name, str(value)]
    return flags + list(more)


# ------------------------------------------------------------------------------ command line


def test_unknown_flag_exits_2(zygote):
    r = _run(zygote, "--no-such-flag", "3")
    assert r.returncode == 2
    assert "unrecognized arguments: --no-such-flag" in r.stderr


def test_bad_value_exits_2(zygote):
    r = _run(zygote, "--sim-speedup", "0")
    assert r.returncode == 2 and "--sim-speedup" in r.stderr


@pytest.mark.parametrize("args, line", [
    (["--sim-speedup", "0"], "error: --sim-speedup: must be > 0, got 0; give a finite number above 0"),
    (["--sim-speedup", "abc"], "error: --sim-speedup: invalid float value: 'abc'; give a finite number"),
    (["--sim-speedup", "nan"], "error: --sim-speedup: must be a finite number, got nan; give"),
    (["--sim-load-seconds", "inf"], "error: --sim-load-seconds: must be a finite number, got inf; give finite"),
    (["--sim-noise", "-1"], "error: --sim-noise: must be >= 0, got -1; give a finite relative jitter"),
    (["--sim-seed", "x"], "error: --sim-seed: invalid int value: 'x'; give an integer"),
    (["--sim-crash-after-requests", "0"], "error: --sim-crash-after-requests: must be >= 1, got 0; give a whole"),
    (["--sim-hang-on-start=1"], "error: --sim-hang-on-start: ignored explicit argument '1'; it is a switch"),
    (["--sim-profile"], "error: --sim-profile: expected one argument; give a shipped profile name"),
    (["--sim-s", "3"], "error: --sim-s: ambiguous, could match --sim-speedup, --sim-seed; write the flag out"),
    (["--port", "70000"], "error: --port: 70000 is no TCP port; give 0 to 65535"),
])
def test_a_bad_simulator_flag_is_one_line_naming_it(zygote, args, line):
    """QA: a bad --sim-* value printed SGLang's whole usage block (nan and inf were taken: a server
    that never loaded), and --port 70000 a traceback from the bind."""
    argv = sim_argv(*args, speedup=SPEEDUP)
    for r in (_run(zygote, *args, timeout_s=30), _serve(*argv[3:])):
        assert r.returncode == 2 and r.stderr.startswith(line) and len(r.stderr.splitlines()) == 1, r.stderr


def test_sglangs_own_flags_keep_argparses_usage_block(zygote):
    r = _run(zygote, "--port", "abc")  # as sglang.launch_server's argparse says it
    assert r.returncode == 2 and r.stderr.startswith("usage: ")
    assert r.stderr.splitlines()[-1] == "python -m tuner.sim: error: argument --port: invalid int value: 'abc'"


def _config(tmp_path, text: str, name: str = "server.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_config_merged_under_command_line(zygote, tmp_path):
    cfg = _config(tmp_path, "tp-size: 4\nmax-running-requests: 16\nenable-metrics: true\n"
                            "speculative-algorithm: EAGLE3\nspeculative-num-steps: 2\n"
                            "speculative-eagle-topk: 1\nspeculative-num-draft-tokens: 3\n")
    with running_sim(zygote, "--config", cfg, "--tp-size", "8", speedup=SPEEDUP) as sim:
        info = requests.get(sim.url + "/server_info", timeout=10).json()
        assert requests.get(sim.url + "/metrics", timeout=10).status_code == 200  # bare flag from YAML
    assert info["tp_size"] == 8  # the command line wins
    assert info["max_running_requests"] == 16  # explicit in the file: no reset to 48
    assert info["speculative_num_steps"] == 2 and info["speculative_num_draft_tokens"] == 3
    assert "reset to 48" not in sim.log


def test_config_underscore_key_rejected_by_argparse(zygote, tmp_path):
    r = _run(zygote, "--config", _config(tmp_path, "speculative_num_steps: 2\n"))
    assert r.returncode == 2
    assert "unrecognized arguments: --speculative_num_steps 2" in r.stderr


def test_a_retired_valued_flag_takes_its_value_as_in_sglang(tmp_path, capsys):
    """QA: SGLang 0.5.23's --monokernel-backend (DeprecatedStoreConstAction, nargs=None, choices
    ['amd']: argparse_actions.py) takes its one value and sets enable_amd_monokernel; the simulator
    registered it without a value, so `--monokernel-backend amd` was "unrecognized arguments: amd"
    and its --config loader refused `monokernel-backend: amd` as an unsupported _StoreConstAction,
    while a bare `--monokernel-backend`, which SGLang refuses, passed."""
    from tuner.sim.args import build_parser, merge_config, parse_args

    assert parse_args(["--model-path", "m", "--monokernel-backend", "amd"]).enable_amd_monokernel is True
    parser = build_parser()
    cfg = _config(tmp_path, "model-path: m\nmonokernel-backend: amd\n")
    ns = parser.parse_args(merge_config(["--config", cfg], parser))
    assert ns.enable_amd_monokernel is True
    for bad in (["--monokernel-backend"], ["--monokernel-backend", "nvidia"]):
        with pytest.raises(SystemExit) as exc:
            parse_args(["--model-path", "m", *bad])
        assert exc.value.code == 2
    assert "expected one argument" in capsys.readouterr().err


def test_config_key_that_is_not_text_fails_as_sglangs_loader_does(zygote, tmp_path):
    """QA: a YAML key that is a number (`1: x`) made SGLang 0.5.23's ConfigArgumentMerger fail on
    ``key.replace`` (AttributeError, a traceback, exit 1); the simulator wrote it as the flag `--1`
    and ended with argparse's "unrecognized arguments", exit 2."""
    r = _run(zygote, "--config", _config(tmp_path, "model-path: m\n1: x\n"))
    assert r.returncode == 1, r.stderr
    assert "AttributeError: 'int' object has no attribute 'replace'" in r.stderr


def test_token_counts_take_sglangs_suffixes(tmp_path, capsys):
    """QA: SGLang 0.5.23 reads --context-length, --max-total-tokens, --max-prefill-tokens and
    --cuda-graph-prefill-max-context with human_readable_int (utils/common.py: 128k, 1Mi); the
    simulator's parser took plain integers only, so `context-length: 128k` in a --config file that
    SGLang loads ended in "invalid int value: '128k'", exit 2."""
    from tuner.sim.args import build_parser, merge_config, parse_args

    parser = build_parser()
    cfg = _config(tmp_path, "model-path: m\ncontext-length: 128k\nmax-total-tokens: 1Mi\n")
    ns = parser.parse_args(merge_config(["--config", cfg, "--max-prefill-tokens", "25.6k"], parser))
    assert (ns.context_length, ns.max_total_tokens, ns.max_prefill_tokens) == (128000, 2**20, 25600)
    for bad, says in (("1.5Ki", "Decimals are not allowed with IEC suffixes like 'Ki'"),
                      ("128K", "Invalid integer value: '128K'. Use a plain integer, SI suffixes")):
        with pytest.raises(SystemExit) as exc:
            parse_args(["--model-path", "m", "--context-length", bad])
        assert exc.value.code == 2 and says in capsys.readouterr().err


def test_json_flags_take_json_only_as_in_sglang(tmp_path, capsys):
    """QA: SGLang 0.5.23 parses --preferred-sampling-params and six more with json.loads, and four
    with json_list_type, as argparse types: `preferred-sampling-params: not json` fails its launch
    ("invalid loads value"). The simulator took any text, and so did a study's server.args: every
    trial ran on the simulator, and the exported YAML failed on SGLang."""
    from tuner.config.server_arg_checks import check_server_args
    from tuner.sim.args import build_parser, merge_config, parse_args

    parser = build_parser()
    cfg = _config(tmp_path, "model-path: m\npreferred-sampling-params: {temperature: 0}\n")
    ns = parser.parse_args(merge_config(["--config", cfg, "--sidecar-args", '["--x", 1]'], parser))
    assert ns.preferred_sampling_params == {"temperature": 0} and ns.sidecar_args == ["--x", 1]
    for flag, says in (("--preferred-sampling-params", "invalid loads value: 'not json'"),
                       ("--sidecar-args", "Invalid JSON list: not json. Please provide a valid JSON list.")):
        with pytest.raises(SystemExit) as exc:
            parse_args(["--model-path", "m", flag, "not json"])
        assert exc.value.code == 2 and says in capsys.readouterr().err
    assert check_server_args({"preferred_sampling_params": '{"temperature": 0}'}, "server.args")
    with pytest.raises(ValueError, match="preferred_sampling_params: expected JSON text"):
        check_server_args({"preferred_sampling_params": "not json"}, "server.args")


#: --cuda-graph-config values and what SGLang 0.5.23's parser says (parse_cuda_graph_config_arg,
#: model_executor/cuda_graph_config.py; each message as its real parser printed it, exit 2)
CUDA_GRAPH_CONFIG_REFUSED = [
    ("x", "--cuda-graph-config must be JSON: Expecting value: line 1 column 1 (char 0)"),
    ("[1]", "--cuda-graph-config must be a JSON object, got list"),
    ("NaN", "--cuda-graph-config must be a JSON object, got float"),
    ('{"foo": {}}', "--cuda-graph-config: unknown phase 'foo', expected one of ('decode', 'prefill')"),
    ('{"decode": 1}', "--cuda-graph-config['decode'] must be a JSON object, got int"),
    ('{"decode": {"backend": "tc_piecewise"}}',
     "tc_piecewise was removed; select breakable, full, or disabled"),
    ('{"decode": {"tc_compiler": "eager"}}',
     "--cuda-graph-config['decode']: unknown key 'tc_compiler', expected one of ('backend', 'max_bs', 'bs')"),
]


@pytest.mark.parametrize("text, says", CUDA_GRAPH_CONFIG_REFUSED,
                         ids=[t for t, _ in CUDA_GRAPH_CONFIG_REFUSED])
def test_cuda_graph_config_is_parsed_as_in_sglang(text, says, capsys):
    """QA: SGLang 0.5.23 parses --cuda-graph-config as JSON of phase -> settings (argparse type
    parse_cuda_graph_config_arg); the simulator and a study's server.args took any text."""
    from tuner.config.server_arg_checks import check_server_args
    from tuner.sim.args import parse_args

    with pytest.raises(SystemExit) as exc:
        parse_args(["--model-path", "m", "--cuda-graph-config", text])
    assert exc.value.code == 2
    assert f"error: argument --cuda-graph-config: {says}" in capsys.readouterr().err
    with pytest.raises(ValueError, match="^cuda_graph_config: ") as refused:
        check_server_args({"cuda_graph_config": text}, "server.args")
    assert says in str(refused.value)


def test_cuda_graph_settings_sglang_takes_pass_and_the_removed_backend_says_so(capsys):
    from tuner.config.server_arg_checks import check_server_args
    from tuner.sim.args import parse_args

    good = '{"decode": {"backend": "full", "max_bs": 64}, "prefill": {"max_seq_len": 8}}'
    ns = parse_args(["--model-path", "m", "--cuda-graph-config", good,
                     "--cuda-graph-backend-prefill", "disabled"])
    assert ns.cuda_graph_config == {"decode": {"backend": "full", "max_bs": 64},
                                    "prefill": {"max_seq_len": 8}}
    assert ns.cuda_graph_backend_prefill == "disabled"
    assert check_server_args({"cuda_graph_config": good}, "server.args") == {"cuda_graph_config": good}
    # parse_cuda_graph_backend_arg: the removed backend by name, before argparse's choices
    with pytest.raises(SystemExit) as exc:
        parse_args(["--model-path", "m", "--cuda-graph-backend-decode", "tc_piecewise"])
    assert exc.value.code == 2
    assert ("error: argument --cuda-graph-backend-decode: tc_piecewise was removed; select breakable, full, "
            "or disabled") in capsys.readouterr().err
    with pytest.raises(ValueError, match="cuda_graph_backend_decode: .*tc_piecewise was removed"):
        check_server_args({"cuda_graph_backend_decode": "tc_piecewise"}, "server.args")


def test_a_backend_sglang_does_not_allow_in_the_json_fails_its_argument_handling(zygote):
    """SGLang 0.5.23 passes `{"decode": {"backend": "foo"}}` through its parser and refuses it in its
    argument handling, before loading (arg_groups/cuda_graph_hook.py, validate_cuda_graph_config:
    ValueError, a traceback, exit 1); the study check refuses it up front."""
    from tuner.config.server_arg_checks import check_server_args

    says = "--cuda-graph-config[decode].backend='foo' not allowed; allowed: ('full', 'breakable', 'disabled')"
    r = _run(zygote, "--cuda-graph-config", '{"decode": {"backend": "foo"}}', "--sim-load-seconds", "60")
    assert r.returncode == 1, r.stderr
    assert "Traceback (most recent call last):" in r.stderr and f"ValueError: {says}" in r.stderr
    with pytest.raises(ValueError, match="^cuda_graph_config: ") as refused:
        check_server_args({"cuda_graph_config": '{"decode": {"backend": "foo"}}'}, "server.args")
    assert says in str(refused.value)


def test_quantization_param_path_is_not_checked_before_loading_as_in_sglang():
    """SGLang 0.5.23 reads --quantization-param-path with nullable_str and opens the file only when it
    loads the model (model_runner_components/load_model_utils.py): a path that does not exist passes
    its parser and its argument handling. The simulator, which loads no model, takes it too."""
    from tuner.sim.args import parse_args

    ns = parse_args(["--model-path", "m", "--quantization-param-path", "/no/such/scales.json"])
    assert ns.quantization_param_path == "/no/such/scales.json"


def test_stream_interval_and_log_level_are_taken_as_sglangs_parser_takes_them():
    """SGLang 0.5.23's parser reads --stream-interval as a plain int and --log-level as any text (its
    real parser took `--stream-interval 0` and `--log-level x`); the simulator refused 0 and every
    level but the five lower-case ones."""
    from tuner.sim.args import parse_args

    ns = parse_args(["--model-path", "m", "--stream-interval", "0", "--log-level", "INFO"])
    assert (ns.stream_interval, ns.log_level) == (0, "INFO")


def test_a_log_level_sglangs_logger_lacks_fails_before_loading_as_there(zygote):
    """SGLang's configure_logger (utils/common.py) runs getattr(logging, level.upper()) first thing:
    AttributeError, a traceback, exit 1, before loading."""
    r = _run(zygote, "--log-level", "verbose", "--sim-load-seconds", "60")
    assert r.returncode == 1, r.stderr
    assert "AttributeError: module 'logging' has no attribute 'VERBOSE'" in r.stderr


def test_config_must_be_yaml(zygote, tmp_path):
    r = _run(zygote, "--config", _config(tmp_path, "{}", "server.json"))
    assert r.returncode == 1
    assert "ValueError: Config file must be YAML format, got: .json" in r.stderr


#: (file name, its text, what the one line says after "error: --config FILE: ")
BAD_CONFIGS = [
    ("server.yaml", "a: [1\n", "not YAML SGLang's loader reads: expected ',' or ']', but got '<stream end>'"),
    ("server.yaml", "- 1\n", "Config file must contain a dictionary at root level"),
    ("server.yaml", "model-path: m\n1: x\n", "key 1 is not text"),
    ("server.json", "{}", "Config file must be YAML format, got: .json"),
    ("server.yaml", "disable-cuda-graph: true\n",
     "Unsupported config option 'disable_cuda_graph' with action 'DeprecatedStoreTrueAction'"),
    (None, "", "Config file not found: "),
    ("folder.yaml", None, "cannot read it: Is a directory"),
]


@pytest.mark.parametrize("name, text, says", BAD_CONFIGS, ids=[c[2][:30] for c in BAD_CONFIGS])
def test_tuner_sim_serve_says_a_bad_config_file_in_one_line(tmp_path, name, text, says):
    """QA: `tuner sim serve --config BAD.yaml` printed a traceback (SGLang's loader raises there, and
    `python -m tuner.sim`, its stand-in, still does). The CLI says the file and the problem in one
    line and exits 1, the status SGLang's loader ends with (none of these is argparse's exit 2)."""
    path = tmp_path / (name or "missing.yaml")
    if text is None:
        path.mkdir()
    elif name is not None:
        path.write_text(text)
    r = _serve("--model-path", "m", "--port", "0", "--config", str(path))
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(lines) == 1, r.stderr
    assert lines[0].startswith(f"error: --config {path}: ") and says in lines[0], lines


def test_tuner_sim_serve_passes_arguments_through():
    r = _serve("--model-path", "m", "--bogus")
    assert r.returncode == 2 and "unrecognized arguments: --bogus" in r.stderr
    r = _serve("--help")
    assert r.returncode == 0 and "--speculative-num-steps" in r.stdout and "--sim-speedup" in r.stdout


# ------------------------------------------------------------------------------ SGLang's launch errors


def test_assertion_error_at_once_before_loading(zygote):
    # topk without num_steps: SGLang's bare assert. The 60 s load delay proves it fails before loading.
    t0 = time.monotonic()
    r = _run(zygote, *_spec(None, 4), "--sim-load-seconds", "60")
    assert r.returncode == 1
    assert "Traceback (most recent call last):" in r.stderr
    assert r.stderr.rstrip().endswith("AssertionError")
    assert time.monotonic() - t0 < 15


def test_type_error_when_topk_missing(zygote):
    r = _run(zygote, *_spec(1, None, 3), "--sim-load-seconds", "60")
    assert r.returncode == 1
    assert "TypeError: '>' not supported between instances of 'NoneType' and 'int'" in r.stderr
    assert "Traceback (most recent call last):" in r.stderr


def test_value_error_trtllm_topk(zygote):
    r = _run(zygote, *_spec(2, 4, 8, "--attention-backend", "trtllm_mha"), "--sim-load-seconds", "60")
    assert r.returncode == 1
    assert "ValueError: trtllm_mha backend only supports topk = 1" in r.stderr


def test_draft_rewrite_warning_and_48(zygote):
    with running_sim(zygote, *_spec(1, 1, 3), speedup=SPEEDUP) as sim:
        info = requests.get(sim.url + "/server_info", timeout=10).json()
    assert info["speculative_num_draft_tokens"] == 2
    assert info["internal_states"][0]["max_running_requests"] == 48
    assert WARN_DRAFT_TOKENS_ADJUSTED in sim.log


def _refused(url: str) -> None:
    """Nothing listens at ``url``: SGLang opens its HTTP port only after the scheduler has loaded the
    model (http_server.py launch_server: Engine._launch_subprocesses blocks, lines 3150-3161, then
    _setup_and_run_http_server starts uvicorn), so while it loads, or when loading fails, a
    connection is refused (the simulator answered 503)."""
    with pytest.raises(requests.ConnectionError):
        requests.get(url, timeout=10)


def _dies_after_loading(zygote, *args: str) -> str:
    """Run the simulator with a setting SGLang refuses after the model load; its log. It must refuse
    connections while loading, never become ready, and exit 1 after "Load weight end"."""
    with running_sim(zygote, *args, "--sim-load-seconds", "0.3", speedup=SPEEDUP, ready=False) as sim:
        _refused(sim.url + "/health_generate")
        assert sim.wait(15) == 1
        log = sim.log
    assert "The server is fired up" not in log
    assert "Received sigquit from a child process" in log
    return log


def test_tree_too_large_dies_in_the_draft_cuda_graph_capture(zygote):
    # steps 2, topk 2 drafts 6 candidates; 8 draft tokens need 7: the draft forward's torch.topk
    # fails while SGLang captures the draft CUDA graph (eagle_draft_cuda_graph_runner.py).
    log = _dies_after_loading(zygote, *_spec(2, 2, 8))
    assert "Exception: Capture cuda graph failed: selected index k out of range" in log
    assert log.index("Load weight end") < log.index("Capture cuda graph failed")
    assert "HTTP server listening on" not in log  # the scheduler died before the port opened


def test_tree_too_large_with_one_step_dies_in_the_warmup(zygote):
    # one step: no draft CUDA graph; SGLang's own warmup request hits organize_draft_results
    log = _dies_after_loading(zygote, *_spec(1, 2, 8))
    assert "RuntimeError: selected index k out of range" in log
    assert "Capture cuda graph failed" not in log
    # the warmup request runs once the HTTP server is up (http_server.py _execute_server_warmup)
    assert log.index("HTTP server listening on") < log.index("RuntimeError: selected index k out of range")


def test_mla_tree_on_flashinfer_fails_after_loading_with_sglangs_valueerror(zygote):
    # the K2.6 profile is MLA (target and EAGLE-3 head): flashinfer_mla_backend.py refuses topk > 1
    log = _dies_after_loading(zygote, *_spec(3, 4, 8), "--attention-backend", "flashinfer",
                              "--sim-profile", "k2.6-tp8-pcie")
    assert "ValueError: Currently Flashinfer MLA only supports topk=1 for speculative decoding" in log
    assert log.index("Load weight end") < log.index("ValueError")


def test_mha_draft_head_on_an_mla_only_backend_fails_after_loading(zygote):
    # the dense profile's EAGLE-3 head is Llama-style (MHA): attention_registry.py's trtllm_mla
    # refuses it as the draft runner starts, whatever the three flags (a chain here)
    log = _dies_after_loading(zygote, *_spec(3, 1, 4), "--speculative-draft-attention-backend", "trtllm_mla",
                              "--sim-profile", "dense-27b-tp1")
    assert "ValueError: trtllm_mla backend can only be used with MLA models." in log
    assert log.index("Load weight end") < log.index("ValueError")


def test_mla_tree_runs_on_fa3_and_mla_chain_on_flashinfer(zygote):
    for args in (_spec(3, 4, 8, "--attention-backend", "fa3"), _spec(3, 1, 4, "--attention-backend", "flashinfer")):
        with running_sim(zygote, *args, "--sim-profile", "k2.6-tp8-pcie", speedup=SPEEDUP) as sim:
            r = requests.post(sim.url + "/generate", timeout=10,
                              json={"text": "hi", "sampling_params": {"max_new_tokens": 16}})
            assert r.status_code == 200


def test_sglangs_own_backend_choice_is_reported(zygote):
    # no --attention-backend: SGLang picks fa3 for MLA on Hopper (model_override_base.py), which
    # runs trees; the dense profile (MHA) gets flashinfer for a tree
    with running_sim(zygote, *_spec(3, 4, 8), "--sim-profile", "k2.6-tp8-pcie", speedup=SPEEDUP) as sim:
        assert requests.get(sim.url + "/server_info", timeout=10).json()["attention_backend"] == "fa3"
    with running_sim(zygote, *_spec(3, 4, 8), "--sim-profile", "dense-27b-tp1", speedup=SPEEDUP) as sim:
        assert requests.get(sim.url + "/server_info", timeout=10).json()["attention_backend"] == "flashinfer"


def test_oom_after_load_delay(zygote):
    with running_sim(zygote, *_spec(1, 1, 2), "--max-running-requests", "100000", "--sim-load-seconds", "0.3",
                     speedup=SPEEDUP, ready=False) as sim:
        _refused(sim.url + "/health")  # still loading
        assert sim.wait(15) == 1
        log = sim.log
    assert "Not enough memory" in log
    assert log.index("Load weight end") < log.index("Not enough memory")


# ------------------------------------------------------------------------------ fault injection


def test_fail_startup_prints_message_after_loading(zygote):
    msg = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    with running_sim(zygote, "--sim-fail-startup", msg, "--sim-load-seconds", "0.3", speedup=SPEEDUP,
                     ready=False) as sim:
        _refused(sim.url + "/health_generate")
        assert sim.wait(15) == 1
        log = sim.log
    assert "Traceback (most recent call last):" in log
    assert f"\n{msg}\n" in log
    assert log.index("Load weight end") < log.index(msg)


def test_hang_on_start_never_ready_and_sigterm_exits_0(zygote):
    with running_sim(zygote, "--sim-hang-on-start", speedup=SPEEDUP, ready=False) as sim:
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:  # a hang while loading: the port never opens
            _refused(sim.url + "/health_generate")
            time.sleep(0.1)
        assert sim.proc.poll() is None
        sim.proc.send_signal(signal.SIGTERM)
        assert sim.wait(10) == 0


def test_crash_after_n_requests(zygote):
    with running_sim(zygote, "--sim-crash-after-requests", "2", speedup=SPEEDUP) as sim:
        body = {"text": "hi", "sampling_params": {"max_new_tokens": 8}}
        assert requests.post(sim.url + "/generate", json=body, timeout=10).status_code == 200
        try:
            r = requests.post(sim.url + "/generate", json=body, timeout=10)
            raise AssertionError(f"the second request was answered: {r.status_code}")
        except requests.ConnectionError:
            pass
        assert sim.wait(10) == 1
        assert "--sim-crash-after-requests 2" in sim.log


def test_sigterm_shuts_down_cleanly(zygote):
    with running_sim(zygote, speedup=SPEEDUP) as sim:
        sim.proc.send_signal(signal.SIGTERM)
        assert sim.wait(10) == 0
        assert "shutting down" in sim.log


def test_unknown_profile_one_line_exit_2(zygote):
    r = _run(zygote, "--sim-profile", "no-such-profile")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1].startswith("error: --sim-profile: no-such-profile")
    assert "Traceback" not in r.stderr


def test_a_profile_path_no_file_can_have_one_line_exit_2(zygote):
    """QA: `--sim-profile` with a 300-byte name ended in `OSError: [Errno 36] File name too long`."""
    r = _run(zygote, "--sim-profile", "b" * 300 + ".yaml")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("error: --sim-profile: bbb"), r.stderr
    assert "File name too long" in r.stderr


def test_an_algorithm_the_simulator_does_not_model_is_refused_before_loading(zygote):
    """SGLang's parser takes NGRAM (and the other algorithms of its table); the simulator models the
    EAGLE family only, so it refuses the rest at once rather than serve them as EAGLE and report
    figures no NGRAM server gives (mutation testing: dropping this refusal passed every test)."""
    t0 = time.monotonic()
    r = _run(zygote, "--speculative-algorithm", "NGRAM", "--sim-load-seconds", "60")
    assert r.returncode == 1, r.stderr
    assert ("ValueError: The simulated server implements --speculative-algorithm EAGLE, EAGLE3, NEXTN only, "
            "got 'NGRAM'.") in r.stderr, r.stderr
    assert time.monotonic() - t0 < 15


def test_a_false_bare_flag_in_the_config_file_is_left_off_as_in_sglang(tmp_path):
    """SGLang's config loader (utils/server_args_config_parser.py, ``_add_boolean_arg``): a
    store_true flag set false in the file is skipped, not turned on. (Mutation testing: adding the
    bare flag whatever its value passed every test; ``enable-metrics: false`` would then serve
    /metrics and report it in /server_info.)"""
    from tuner.sim.args import build_parser, merge_config

    parser = build_parser()
    cfg = _config(tmp_path, "model-path: m\nenable-metrics: false\n")
    argv = merge_config(["--config", cfg], parser)
    assert "--enable-metrics" not in argv
    assert parser.parse_args(argv).enable_metrics is False
    cfg = _config(tmp_path, "model-path: m\nenable-metrics: true\n", "on.yaml")
    assert parser.parse_args(merge_config(["--config", cfg], parser)).enable_metrics is True
