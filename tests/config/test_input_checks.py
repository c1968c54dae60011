"""Input the QA pass found accepted, each refused when the file loads: one line naming the file and
the key (or the line), through `tuner study create`, exit 2, and nothing written.

NaN and infinity in any float, impossible durations, duplicate YAML keys, a search space with no
setting SGLang can run, bad ``fixed`` and ``server.args`` server arguments (a name SGLang 0.5.23 does
not have, a value not of its type), reserved or overlong study names, strings a
process cannot be given (NUL bytes, control characters, ``=`` in an environment name), a host that
is not one, the lossless check on a sampled suite, and lone UTF-16 surrogates in prompts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tuner.cli import cli
from tuner.config.space import load_space
from tuner.config.study import load_study, parse_duration
from tuner.config.yamlfile import ConfigError, read_yaml

ROOT = Path(__file__).resolve().parents[2]
DEMO = (ROOT / "studies" / "sim-demo.yaml").read_text()
SPACE = (ROOT / "search_spaces" / "eagle3.yaml").read_text()
#: the demo's `  backend: sim` line (its header comment may grow)
BACKEND_LINE = DEMO.splitlines().index("  backend: sim") + 1
SUITE = {"name": "s", "prompts": [{"name": "a", "text": "hello"}], "single": {"lengths": [8], "repeats": 1},
         "sweep": {"concurrencies": [32], "max_tokens": 8}, "warmup": {"requests": 0}, "timeout_s": 30}


def demo(**sections) -> str:
    """sim-demo.yaml with its search space beside it and top-level sections replaced."""
    data = yaml.safe_load(DEMO)
    data["search_space"] = "space.yaml"
    for key, value in sections.items():
        data[key] = value
    return yaml.safe_dump(data, sort_keys=False)


def server(**keys) -> dict:
    return {**yaml.safe_load(DEMO)["server"], **keys}


def space(fixed: str = "{}", params: str | None = None) -> str:
    text = SPACE.replace("fixed: {}", f"fixed: {fixed}")
    return text if params is None else text.split("params:")[0] + "params:\n" + params + f"fixed: {fixed}\n"


DEAD_PARAMS = """  speculative_num_steps: {low: 1, high: 1}
  speculative_eagle_topk: {choices: [2]}
  speculative_num_draft_tokens: {low: 10, high: 20}
"""

#: (case id, files {name: text} beside the study, the study file's text, what the one line says)
CASES = [
    # 1. NaN and infinity, wherever a float is
    ("slo nan", {}, demo(slo=[{"concurrency": 32, "ttft_p99_ms": float("nan")}], bench={"suite": "quick", "stream": True}),
     "sim-demo.yaml: slo[0]: ttft_p99_ms must be a positive number of milliseconds, got nan"),
    ("trial_timeout nan", {}, demo(bench={"suite": "quick", "trial_timeout": float("nan")}),
     "bench.trial_timeout: must be a finite number, got nan"),
    ("budget timeout inf", {}, demo(budget={"timeout": float("inf")}), "budget.timeout: must be a finite number, got inf"),
    ("budget timeout 10^20 hours", {}, demo(budget={"timeout": "99999999999999999999h"}),
     "budget.timeout: '99999999999999999999h' is longer than a year"),
    ("sim speedup inf", {}, demo(server=server(sim={"speedup": float("inf")})),
     "server.sim.speedup: must be a finite number, got inf"),
    ("sim noise nan", {}, demo(server=server(sim={"noise": float("nan")})), "server.sim.noise: must be a finite number"),
    ("sampler noise nan", {}, demo(sampler={"options": {"noise": float("nan")}}),
     "sampler.options: noise: must be a finite number, got nan"),
    # QA: created, then `study run` died in numpy ("Seed must be between 0 and 2**32 - 1")
    ("sampler seed negative", {}, demo(sampler={"seed": -5}), "sampler.seed: input should be greater than or equal to 0"),
    ("sampler seed 2^70", {}, demo(sampler={"seed": 2**70}), "sampler.seed: input should be less than or equal to 4294967295"),
    ("server.args nan", {}, demo(server=server(args={"mem_fraction_static": float("nan")})),
     "server.args: mem_fraction_static: must be a finite number, got nan"),
    ("suite temperature inf", {"suite.yaml": yaml.safe_dump({**SUITE, "temperature": float("inf")})},
     demo(bench={"suite": "suite.yaml"}), "suite.yaml: temperature: must be a finite number, got inf"),
    # 2. a key given twice
    ("backend twice", {}, re.sub(r"^search_space: .*$", "search_space: space.yaml", DEMO, flags=re.M)
     .replace("  backend: sim\n", "  backend: sim\n  backend: sglang\n"),
     f"sim-demo.yaml: server.backend: given twice (lines {BACKEND_LINE} and {BACKEND_LINE + 1})"),
    ("name twice", {}, demo() + "name: other\n", "sim-demo.yaml: name: given twice"),
    ("budget twice", {}, demo() + "budget: {n_trials: 3}\n", "sim-demo.yaml: budget: given twice"),
    ("algorithm twice in the space", {"space.yaml": SPACE + "algorithm: EAGLE\n"}, demo(),
     "space.yaml: algorithm: given twice (lines 4 and 10)"),
    # 3. a space SGLang can run nothing of
    ("no valid setting", {"space.yaml": space(params=DEAD_PARAMS)}, demo(),
     "space.yaml: the ranges in params hold no setting SGLang can run: all 11 combinations break its rules, "
     "e.g. tree-too-large (steps=1 topk=2 draft=10"),
    # 4. fixed server arguments
    ("page_size not a number", {"space.yaml": space("{page_size: big}")}, demo(),
     "space.yaml: fixed: page_size: expected an integer, got 'big'"),
    ("page_size negative", {"space.yaml": space("{page_size: -1}")}, demo(), "fixed: page_size: -1; a page holds"),
    ("not a server arg", {"space.yaml": space("{not_an_arg: 1}")}, demo(),
     "fixed: not_an_arg: not a server argument of SGLang 0.5.23"),
    ("switch given text", {"space.yaml": space("{trust_remote_code: 'yes'}")}, demo(),
     "fixed: trust_remote_code: expected true or false (a switch), got 'yes'"),
    # 5. the study's name
    ("name of a baseline companion", {}, demo(name="sim-demo.baseline"),
     "name: names may not end in '.baseline', which is reserved for the baseline companion"),
    ("name 5000 characters", {}, demo(name="a" * 5000), "name: 5000 characters; a study name has at most 100"),
    # 6. what a process cannot be given
    ("env name with =", {}, demo(server=server(env={"A=B": "x"})), "server.env: 'A=B' is not a variable name"),
    ("env name empty", {}, demo(server=server(env={"": "x"})), "server.env: '' is not a variable name"),
    ("env value NUL", {}, demo(server=server(env={"A": "x\0y"})), "server.env: A: the value holds a NUL byte"),
    ("args misspelt", {}, demo(server=server(args={"mem_fraction_statc": 0.8})),
     "server.args: mem_fraction_statc: not a server argument of SGLang 0.5.23 (did you mean 'mem_fraction_static'?)"),
    ("args an ambiguous prefix", {}, demo(server=server(args={"cuda_graph_max_bs": 64})),
     "server.args: cuda_graph_max_bs: SGLang 0.5.23's parser refuses --cuda-graph-max-bs as ambiguous "
     "(it could be --cuda-graph-max-bs-decode or --cuda-graph-max-bs-prefill)"),
    # QA (qa44): an integer past 64 bits ended `study create` in an OverflowError traceback, and a token
    # count that long passed to crash the model backend's memory check after the .db was written
    ("args an integer past 64 bits", {}, demo(server=server(args={"page_size": 10 ** 400})),
     "server.args: page_size: an integer of 401 digits does not fit in 64 bits"),
    ("args a token count past 64 bits", {}, demo(server=server(args={"context_length": 10 ** 30})),
     "server.args: context_length: 1000000000000000000000000000000 does not fit in 64 bits"),
    ("args a suffixed token count past 64 bits", {}, demo(server=server(args={"max_total_tokens": "9999999999T"})),
     "server.args: max_total_tokens: '9999999999T' does not fit in 64 bits"),
    ("args a negative integer past 64 bits", {}, demo(server=server(args={"max_running_requests": -2 ** 63 - 1})),
     "server.args: max_running_requests: -9223372036854775809 does not fit in 64 bits"),
    ("args of the wrong type", {}, demo(server=server(args={"mem_fraction_static": "most"})),
     "server.args: mem_fraction_static: expected a number, got 'most'"),
    ("args not one of the choices", {}, demo(server=server(args={"attention_backend": "flashmla2"})),
     "server.args: attention_backend: 'flashmla2' is not one of SGLang's choices"),
    ("args a list item of the wrong type", {}, demo(server=server(args={"gc_threshold": ["x", 2]})),
     "server.args: gc_threshold: expected an integer, got 'x'"),
    ("args a list for one value", {}, demo(server=server(args={"served_model_name": ["a", "b"]})),
     "server.args: served_model_name: expected one value, got a list"),
    ("args a constant given a value", {}, demo(server=server(args={"gc_threshold": True})),
     "server.args: gc_threshold: expected an integer, got True"),
    # 4b. a value not of the option's type says what the option takes (a typed union said "input
    # should be a valid boolean" for each)
    ("args a mapping for a JSON-text option", {}, demo(server=server(args={"json_model_override_args": {"a": 1}})),
     "sim-demo.yaml: server.args: json_model_override_args: expected a string (JSON text), got a mapping "
     "{'a': 1}; write the mapping as JSON in quotes: json_model_override_args: '{\"a\": 1}'"),
    ("args null for an integer", {}, demo(server=server(args={"context_length": None})),
     "sim-demo.yaml: server.args: context_length: expected an integer, got null (leave the key out for "
     "SGLang's default)"),
    ("args a mapping for a number", {}, demo(server=server(args={"mem_fraction_static": {"x": 1}})),
     "server.args: mem_fraction_static: expected a number, got a mapping {'x': 1}"),
    ("args null for a switch", {}, demo(server=server(args={"enable_metrics": None})),
     "server.args: enable_metrics: expected true or false (a switch), got null"),
    ("args a mapping for a list", {}, demo(server=server(args={"gc_threshold": {"a": 1}})),
     "server.args: gc_threshold: expected a list, each item an integer, got a mapping {'a': 1}"),
    ("args a nested list", {}, demo(server=server(args={"log_requests_target": [["stdout"]]})),
     "server.args: log_requests_target: expected a string, got ['stdout']"),
    ("fixed null for a string", {"space.yaml": space("{served_model_name: null}")}, demo(),
     "space.yaml: fixed: served_model_name: expected a string, got null"),
    ("args one name twice", {}, demo(server=server(args={"attention_back": "fa3", "attention_backend": "triton"})),
     "server.args: attention_backend and attention_back are both SGLang's attention_backend; give it once"),
    ("args value NUL", {}, demo(server=server(args={"served_model_name": "x\0y"})),
     "server.args: served_model_name: the value holds a NUL byte"),
    ("extra_args NUL", {}, demo(server=server(extra_args=["--foo\0bar"])),
     "server.extra_args: entry 0 ('--foo'...) holds a NUL byte"),
    # 5b. an API key: SGLang 0.5.23 answers the benchmark's routes 401 without one (utils/auth.py), the
    # health check it waits on is exempt, the client sends none: every trial failed on the GPU node only
    ("args api_key", {}, demo(server=server(args={"api_key": "sekret"})),
     "sim-demo.yaml: server.args: api_key makes SGLang answer the benchmark's requests (/generate, /v1/*, "
     "/server_info, /flush_cache) 401 without an API key, which the tuner's client does not send"),
    ("fixed admin_api_key", {"space.yaml": space("{admin_api_key: sekret}")}, demo(),
     "space.yaml: fixed: admin_api_key makes SGLang answer the benchmark's requests"),
    ("args an abbreviation of api_key", {}, demo(server=server(args={"api_k": "sekret"})),
     "server.args: api_k (SGLang reads it as api_key) makes SGLang answer"),
    ("extra_args --api-key", {}, demo(server=server(extra_args=["--api-key=sekret"])),
     "server.extra_args: --api-key: api_key makes SGLang answer the benchmark's requests"),
    # 5c. TLS, gRPC and no tokenizer: SGLang 0.5.23 then serves no plain-HTTP text API (http_server.py,
    # launch_server.py, tokenizer_manager.py); the simulator answered all three
    ("args ssl_certfile", {}, demo(server=server(args={"ssl_certfile": "/etc/tls/cert.pem"})),
     "server.args: ssl_certfile makes SGLang serve HTTPS, and the tuner speaks plain HTTP"),
    ("args smg_grpc_mode", {}, demo(server=server(args={"smg_grpc_mode": True})),
     "server.args: smg_grpc_mode makes SGLang serve gRPC on --port instead of its HTTP API"),
    ("extra_args --skip-tokenizer-init", {}, demo(server=server(extra_args=["--skip-tokenizer-init"])),
     "server.extra_args: --skip-tokenizer-init: skip_tokenizer_init makes SGLang refuse text prompts"),
    # 5d. adaptive speculation: SGLang moves each decode step among its policy's steps by batch size, so
    # a trial's figures were a policy's, stored as its setting's (QA qa216: `study create` said ready)
    ("args speculative_adaptive", {}, demo(server=server(args={"speculative_adaptive": True})),
     "sim-demo.yaml: server.args: speculative_adaptive makes SGLang change the speculative steps by batch "
     "size during the suite, so a trial would not measure the setting it records"),
    ("fixed speculative_adaptive", {"space.yaml": space("{speculative_adaptive: true}")}, demo(),
     "space.yaml: fixed: speculative_adaptive makes SGLang change the speculative steps by batch size"),
    ("extra_args --speculative-adaptive", {}, demo(server=server(extra_args=["--speculative-adaptive"])),
     "server.extra_args: --speculative-adaptive: speculative_adaptive makes SGLang change the speculative "
     "steps"),
    ("model_path newline", {}, demo(server=server(model_path="a\nb")),
     "server.model_path: holds the control character '\\n'"),
    ("model_path empty", {}, demo(server=server(model_path="")), "server.model_path: must name the model"),
    ("host not a host", {}, demo(server=server(host="not a host!")),
     "server.host: 'not a host!' is neither a host name"),
    # 6b. a value SGLang's argparse reads as an option: "expected one argument" at every launch
    ("model_path starting with '-'", {}, demo(server=server(model_path="-models/kimi")),
     "sim-demo.yaml: server.model_path: '-models/kimi' starts with '-', which SGLang's argparse reads as an "
     "option, not as this value (the launch would fail: expected one argument); write ./-models/kimi"),
    ("draft_model_path starting with '-'", {}, demo(server=server(draft_model_path="--draft")),
     "server.draft_model_path: '--draft' starts with '-', which SGLang's argparse reads as an option"),
    ("args a string starting with '-'", {}, demo(server=server(args={"served_model_name": "-kimi"})),
     "server.args: served_model_name: '-kimi' starts with '-', which SGLang's argparse reads as an option"),
    ("args a list item starting with '-'", {}, demo(server=server(args={"log_requests_target": ["stdout", "-logs"]})),
     "server.args: log_requests_target: '-logs' starts with '-', which SGLang's argparse reads as an option"),
    ("args a number argparse reads as an option", {}, demo(server=server(args={"mem_fraction_static": "MFS"})).replace("MFS", '"-1e-3"'),
     "server.args: mem_fraction_static: '-1e-3' starts with '-', which SGLang's argparse reads as an option, "
     "not as this value (the launch would fail: expected one argument); write the number in plain decimals"),
    # QA (second pass): YAML's -0.00001 is the float -1e-05, which argv holds as str() gives it
    ("args a small negative number written in decimals", {},
     demo(server=server(args={"schedule_conservativeness": "SCVALUE"})).replace("SCVALUE", "-0.00001"),
     "server.args: schedule_conservativeness: -1e-05 goes on the command line as '-1e-05', which SGLang's "
     "argparse reads as an option (the launch would fail: expected one argument); give it as text in plain "
     "decimals: schedule_conservativeness: '-0.00001'"),
    ("fixed a string starting with '-'", {"space.yaml": space("{served_model_name: '-kimi'}")}, demo(),
     "space.yaml: fixed: served_model_name: '-kimi' starts with '-'"),
    # the server log's cap (server.log_max_mb): 0 for none, else at least 1 MiB
    ("log cap under 1 MiB", {}, demo(server=server(log_max_mb=0.5)),
     "sim-demo.yaml: server.log_max_mb: must be 0 (no cap) or at least 1 (MiB), got 0.5"),
    ("log cap negative", {}, demo(server=server(log_max_mb=-64)),
     "sim-demo.yaml: server.log_max_mb: input should be greater than or equal to 0"),
    ("log cap not a number", {}, demo(server=server(log_max_mb="64MB")),
     "sim-demo.yaml: server.log_max_mb: input should be a valid number, got '64MB'"),
    # 7. the lossless check needs greedy decoding
    ("lossless at temperature 0.7", {"suite.yaml": yaml.safe_dump({**SUITE, "temperature": 0.7})},
     demo(bench={"suite": "suite.yaml", "lossless": {"enforce": True}}),
     "sim-demo.yaml: bench.lossless.enforce: the lossless check compares outputs at temperature 0"),
    # 8. an inline suite's errors name the study file and the key under bench.suite
    ("inline suite value", {}, demo(bench={"suite": {**SUITE, "temperature": -0.1}}),
     "sim-demo.yaml: bench.suite.temperature: input should be greater than or equal to 0"),
    ("inline suite dataset missing", {}, demo(bench={"suite": {**{k: v for k, v in SUITE.items() if k != "prompts"},
                                                                "dataset": {"path": "data/d.jsonl"}}}),
     "sim-demo.yaml: bench.suite.dataset.path: "),
    ("inline suite prompts and dataset", {"d.jsonl": '{"prompt": "hello"}\n'},
     demo(bench={"suite": {**SUITE, "dataset": {"path": "d.jsonl"}}}),
     "sim-demo.yaml: bench.suite.prompts: give prompts or dataset, not both"),
    ("inline suite prompt with text and file", {"p.txt": "from the file"},
     demo(bench={"suite": {**SUITE, "prompts": [{"name": "a", "text": "hello", "file": "p.txt"}]}}),
     "sim-demo.yaml: bench.suite.prompts[0]: prompt 'a' gives both text and file; give one of text"),
    ("suite file prompt with text and file",
     {"p.txt": "from the file", "suite.yaml": yaml.safe_dump({**SUITE, "prompts": [
         {"name": "a", "text": "hello"}, {"name": "b", "text": "hi", "file": "p.txt"}]})},
     demo(bench={"suite": "suite.yaml"}),
     "suite.yaml: prompts[1]: prompt 'b' gives both text and file; give one of text (inline) or file"),
    ("dataset line with a repeated key", {"suite.yaml": yaml.safe_dump({**{k: v for k, v in SUITE.items()
                                                                             if k != "prompts"},
                                                                          "dataset": {"path": "d.jsonl"}}),
                                          "d.jsonl": '{"prompt": "fine"}\n{"prompt": "a", "prompt": "b"}\n'},
     demo(bench={"suite": "suite.yaml"}),
     "d.jsonl: line 2: prompt: given twice in one object (JSON would silently keep the last); keep one"),
    # 9. lone surrogates
    ("surrogate in a suite prompt", {"suite.yaml": yaml.safe_dump(SUITE).replace("text: hello",
                                                                              'text: "Write a \\ud800 haiku"')},
     demo(bench={"suite": "suite.yaml"}), "suite.yaml: prompts[0].text: line "),
    ("surrogate in a dataset line", {"suite.yaml": yaml.safe_dump({**{k: v for k, v in SUITE.items() if k != "prompts"},
                                                                 "dataset": {"path": "d.jsonl"}}),
                                     "d.jsonl": '{"prompt": "fine"}\n{"prompt": "\\ud800"}\n'},
     demo(bench={"suite": "suite.yaml"}), "d.jsonl: line 2: prompt: holds a lone UTF-16 surrogate '\\ud800'"),
]


@pytest.mark.parametrize("case, files, study, says", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_and_nothing_is_written(tmp_path, monkeypatch, case, files, study, says):
    for name, text in {"space.yaml": SPACE, "sim-demo.yaml": study, **files}.items():
        (tmp_path / name).write_text(text)
    before = sorted(p.name for p in tmp_path.iterdir())
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["study", "create", str(tmp_path / "sim-demo.yaml")])
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], r.stderr
    assert "Traceback" not in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no sim-demo.db, no workdir


@pytest.mark.parametrize("command", [["space", "list"], ["space", "check", "--num-steps", "1", "--topk", "1",
                                                           "--draft-tokens", "2"]])
@pytest.mark.parametrize("fixed, params, says", [
    ("{page_size: big}", None, "fixed: page_size: expected an integer, got 'big'"),
    ("{}", DEAD_PARAMS, "the ranges in params hold no setting SGLang can run"),
])
def test_space_commands_refuse_a_bad_space(tmp_path, command, fixed, params, says):
    p = tmp_path / "space.yaml"
    p.write_text(space(fixed, params))
    r = CliRunner().invoke(cli, [*command, str(p)])
    assert r.exit_code == 2, r.output
    assert r.stderr.strip().startswith(f"error: {p}: ") and says in r.stderr and "Traceback" not in r.output


def test_a_switch_that_would_stop_the_benchmark_may_be_given_false(tmp_path):
    (tmp_path / "space.yaml").write_text(SPACE)
    (tmp_path / "s.yaml").write_text(demo(server=server(args={"skip_tokenizer_init": False,
                                                             "smg_grpc_mode": False,
                                                             "speculative_adaptive": False})))
    assert load_study(tmp_path / "s.yaml").server.args["skip_tokenizer_init"] is False


def test_the_shipped_files_still_load():
    study = load_study(ROOT / "studies" / "sim-demo.yaml")
    assert study.name == "sim-demo" and study.server.host == "127.0.0.1"
    assert load_space(ROOT / "search_spaces" / "eagle3.yaml").fixed == {}


@pytest.mark.parametrize("fixed", ["{page_size: 16, attention_backend: fa3}", "{page_size: '16'}",
                                   "{trust_remote_code: true}", "{mem_fraction_static: 0.85}",
                                   "{attention_backend: trtllm_mha}"])
def test_good_fixed_args_pass(tmp_path, fixed):
    p = tmp_path / "space.yaml"
    p.write_text(space(fixed))
    load_space(p)


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "0.0.0.0", "localhost", "node-1.cluster", "gpu_03.lan.",
                                  "fe80::1"])
def test_good_hosts_pass(tmp_path, host):
    (tmp_path / "space.yaml").write_text(SPACE)
    (tmp_path / "sim-demo.yaml").write_text(demo(server=server(host=host)))
    assert load_study(tmp_path / "sim-demo.yaml").server.host == host


@pytest.mark.parametrize("host", ["not a host!", "", "-node", "a..b", "x" * 64, "[::1]", "a:b"])
def test_bad_hosts_are_refused(tmp_path, host):
    (tmp_path / "space.yaml").write_text(SPACE)
    (tmp_path / "sim-demo.yaml").write_text(demo(server=server(host=host)))
    with pytest.raises(ConfigError) as exc:
        load_study(tmp_path / "sim-demo.yaml")
    assert exc.value.key == "server.host" and "neither a host name" in exc.value.message


@pytest.mark.parametrize("value, cap", [(None, 64.0), (0, 0.0), (1, 1.0), (256.5, 256.5)])
def test_log_caps_that_pass(tmp_path, value, cap):
    (tmp_path / "space.yaml").write_text(SPACE)
    keys = {} if value is None else {"log_max_mb": value}
    (tmp_path / "sim-demo.yaml").write_text(demo(server=server(**keys)))
    assert load_study(tmp_path / "sim-demo.yaml").server.log_max_mb == cap


def test_a_name_of_100_characters_is_fine(tmp_path):
    (tmp_path / "space.yaml").write_text(SPACE)
    (tmp_path / "sim-demo.yaml").write_text(demo(name="a" * 100))
    assert load_study(tmp_path / "sim-demo.yaml").name == "a" * 100


def test_lossless_enforced_at_temperature_0_is_fine(tmp_path):
    (tmp_path / "space.yaml").write_text(SPACE)
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(SUITE))
    (tmp_path / "sim-demo.yaml").write_text(demo(bench={"suite": "suite.yaml", "lossless": {"enforce": True}}))
    assert load_study(tmp_path / "sim-demo.yaml").bench.lossless.enforce


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "99999999999999999999h", "8785h"])
def test_durations_are_finite_and_at_most_a_year(value):
    with pytest.raises(ConfigError):
        parse_duration(value, "--timeout")
    assert parse_duration("8784h") == 366 * 24 * 3600


def test_duplicate_keys_name_the_nested_key_and_both_lines(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("a:\n  - {b: 1, c: 2}\n  - {b: 1, b: 2}\n")
    with pytest.raises(ConfigError) as exc:
        read_yaml(p)
    assert str(exc.value) == f"{p}: a[1].b: given twice (lines 3 and 3); keep one (YAML would silently use the last)"
    p.write_text("a: 1\nb: {a: 1}\n'a': 2\n")  # a quoted key is the same key
    with pytest.raises(ConfigError, match=r": a: given twice \(lines 1 and 3\)"):
        read_yaml(p)
    p.write_text("a: 1\n'1': x\n1: y\n")  # the string '1' and the integer 1 are different keys:
    with pytest.raises(ConfigError) as exc:  # the integer is refused as a key that is no text, not as repeated
        read_yaml(p)
    assert str(exc.value).startswith(f"{p}: line 3: the key 1 is read by YAML as a number"), str(exc.value)


def test_yaml_is_read_as_yaml_1_2(tmp_path):
    """PyYAML (YAML 1.1) reads 2e3 and 1.5e3 as strings, and 1:30 as 90; a study file means what it
    says: the YAML 1.2 core schema."""
    text = demo(slo=[{"concurrency": 32, "ttft_p99_ms": 1}], bench={"suite": "quick", "stream": True})
    (tmp_path / "space.yaml").write_text(SPACE)
    (tmp_path / "s.yaml").write_text(text.replace("ttft_p99_ms: 1", "ttft_p99_ms: 2e3"))
    assert load_study(tmp_path / "s.yaml").slo[0].limits["ttft_p99_ms"] == 2000.0
    (tmp_path / "x.yaml").write_text("a: 1.5e3\nb: 1E-4\nc: '2e3'\nd: 12\ne: e3\n")
    assert read_yaml(tmp_path / "x.yaml") == {"a": 1500.0, "b": 0.0001, "c": "2e3", "d": 12, "e": "e3"}
    # and nothing of YAML 1.1 that reads another value than written (QA: `timeout: 1:30` was 90 s)
    (tmp_path / "y.yaml").write_text("t: 1:30\nyes_: yes\non_: on\noct: 012\nund: 1_000\no: 0o17\nx: 0x10\n"
                                     "day: 2026-12-03\ninf: -.inf\nok: true\n")
    assert read_yaml(tmp_path / "y.yaml") == {"t": "1:30", "yes_": "yes", "on_": "on", "oct": 12, "und": "1_000",
                                              "o": 15, "x": 16, "day": "2026-12-03", "inf": float("-inf"), "ok": True}
    (tmp_path / "s.yaml").write_text(demo(budget="BUDGET").replace("BUDGET", "{timeout: 1:30}"))
    with pytest.raises(ConfigError, match="budget.timeout: expected a duration"):
        load_study(tmp_path / "s.yaml")


def test_an_abbreviation_sglang_takes_is_stored_under_its_full_name(tmp_path):
    """QA: `attention_back: trtllm_mla` passed every check the full name meets (the rules, the pins,
    the conflict with the space's fixed arguments), since they read names; SGLang's parser takes the
    unique prefix. The study now holds SGLang's own name."""
    (tmp_path / "space.yaml").write_text(space("{page_size: 16}"))
    (tmp_path / "s.yaml").write_text(demo(server=server(args={"attention_back": "triton", "max_running_req": 64})))
    assert load_study(tmp_path / "s.yaml").server.args == {"attention_backend": "triton", "max_running_requests": 64}
    (tmp_path / "c.yaml").write_text(demo(server=server(args={"page_s": 32})))
    r = CliRunner().invoke(cli, ["study", "create", str(tmp_path / "c.yaml")])
    assert r.exit_code == 2 and "page_size: 32 conflicts with the search space's fixed page_size: 16" in r.output, r.output


def test_numbers_past_pythons_digit_cap_are_one_line(tmp_path):
    """QA: an integer of more than 4,300 digits made int() raise inside the YAML and JSON readers."""
    from tuner.config.landscape import load_landscape
    from tuner.config.suite import load_suite

    huge = "9" * 5000
    (tmp_path / "s.yaml").write_text(f"budget: {{n_trials: {huge}}}\n")
    with pytest.raises(ConfigError, match="holds a number Python will not read"):
        read_yaml(tmp_path / "s.yaml")
    (tmp_path / "t.json").write_text(f'{{"name": "x", "load_s": {huge}}}')
    with pytest.raises(ConfigError, match="holds a number Python will not read"):
        load_landscape(tmp_path / "t.json")
    (tmp_path / "d.jsonl").write_text(f'{{"prompt": "hi", "max_tokens": {huge}}}\n')
    (tmp_path / "suite.yaml").write_text("name: s\ndataset: {path: d.jsonl}\nsweep: {concurrencies: [1]}\n")
    with pytest.raises(ConfigError, match=r"d.jsonl: line 1: not a request Python will read \(ValueError\)"):
        load_suite(tmp_path / "suite.yaml")


@pytest.mark.parametrize("key, section", [
    ("search_space", {"search_space": "loop.yaml"}),
    ("bench.suite", {"bench": {"suite": "loop.yaml"}}),
    ("workdir", {"workdir": "w\0x"}),
    ("server.sim.profile", {"server": server(sim={"profile": "p\0.yaml"})}),
])
def test_a_path_no_file_can_have_is_one_line_naming_its_key(tmp_path, monkeypatch, key, section):
    """QA: a symlink loop or a NUL byte in a path of the study file ended in a traceback."""
    (tmp_path / "space.yaml").write_text(SPACE)
    (tmp_path / "loop.yaml").symlink_to("loop.yaml")
    (tmp_path / "sim-demo.yaml").write_text(demo(**section))
    before = sorted(p.name for p in tmp_path.iterdir())
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["study", "create", str(tmp_path / "sim-demo.yaml")])
    assert r.exit_code == 2, (r.exit_code, r.output)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"sim-demo.yaml: {key}: " in lines[0] and "is no usable path" in lines[0], r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_study_file_that_is_a_symlink_loop_is_one_line(tmp_path):
    (tmp_path / "self.yaml").symlink_to("self.yaml")
    r = CliRunner().invoke(cli, ["study", "create", str(tmp_path / "self.yaml")])
    assert r.exit_code == 2 and "is no usable path (a symlink loop)" in r.stderr and "Traceback" not in r.output, r.output


def test_a_relative_sqlite_storage_is_beside_the_study_file_not_the_working_directory(tmp_path, monkeypatch):
    """QA: `storage: sqlite:///rel.db` opened rel.db in whatever folder the worker started in: a
    worker started elsewhere saw another, empty study."""
    (tmp_path / "space.yaml").write_text(SPACE)
    (tmp_path / "sim-demo.yaml").write_text(demo(storage="sqlite:///rel.db"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert load_study(tmp_path / "sim-demo.yaml").storage == f"sqlite:///{tmp_path / 'rel.db'}"
    r = CliRunner().invoke(cli, ["study", "create", str(tmp_path / "sim-demo.yaml")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "rel.db").exists() and not list(elsewhere.iterdir())


@pytest.mark.parametrize("url, says", [
    ("sqlite://", "is an in-memory database, gone when the command ends"),
    ("sqlite:///:memory:", "is an in-memory database"),
    ("sqlite:///${NOPE_VAR}/x.db", "a $VARIABLE inside a URL is not read from the environment"),
    # (QA: a file literally named "e3.db?vfs=memdb" that no later command found)
    ("sqlite:///sub/e3.db?vfs=memdb&uri=true", "SQLite's URI mode (uri=...) is not supported"),
    ("sqlite:///ok.db?mode=ro&URI=1", "SQLite's URI mode (uri=...) is not supported"),
    ("sqlite:///~/v.db", "'~' is not expanded inside a URL"),
    ("sqlite:///x.db?mode=ro", "options after '?' or '#' are not supported for SQLite"),
    ("sqlite:///x.db#frag", "options after '?' or '#' are not supported for SQLite"),
])
def test_sqlite_storages_that_cannot_hold_a_study_are_one_line(tmp_path, url, says):
    (tmp_path / "space.yaml").write_text(SPACE)
    (tmp_path / "sim-demo.yaml").write_text(demo(storage=url))
    r = CliRunner().invoke(cli, ["study", "create", str(tmp_path / "sim-demo.yaml")])
    assert r.exit_code == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sim-demo.yaml", "space.yaml"]


@pytest.mark.parametrize("url", ["sqlite:///sub/x.db?mode=ro&uri=true", "sqlite:///sub/x.db?mode=ro",
                                 "sqlite:///sub/x.db#f", "sqlite://"])
def test_a_storage_flag_is_held_to_the_same_rules_and_nothing_is_created(tmp_path, monkeypatch, url):
    # (QA: `study list --storage 'sqlite:///sub/x.db?mode=ro&uri=true'` made a file named
    # "x.db?mode=ro" and said there were no studies)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    for args in (["study", "list"], ["study", "status", "--study", "s"]):
        r = CliRunner().invoke(cli, [*args, "--storage", url])
        assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, r.output
        assert r.stderr.startswith(f"error: --storage: {url!r}"), r.stderr  # the flag named
    assert not list((tmp_path / "sub").iterdir()) and sorted(p.name for p in tmp_path.iterdir()) == ["sub"]


MISSING_FOLDER = "no such storage folder: {} does not exist (SQLite makes the database file, never its folder; " \
                 "nothing was created); fix the path, or create the folder first (mkdir -p {})"


def test_a_storage_in_a_folder_that_does_not_exist_names_the_study_files_key(tmp_path, monkeypatch):
    """QA: `storage: sqlite:///no/such/dir/x.db` gave the driver's "unable to open database file"
    (`create`), a doctor check of two lines (`run`): one line naming the key, nothing made."""
    (tmp_path / "space.yaml").write_text(SPACE)
    (tmp_path / "sim-demo.yaml").write_text(demo(storage="sqlite:///no/such/dir/x.db"))
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "no" / "such" / "dir"
    for args in (["study", "create"], ["study", "run"], ["study", "status"]):
        r = CliRunner().invoke(cli, [*args, "sim-demo.yaml"])
        assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, (args, r.output)
        assert r.stderr.startswith("error: sim-demo.yaml: storage: 'sqlite:///"), r.stderr
        assert MISSING_FOLDER.format(missing, missing) in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sim-demo.yaml", "space.yaml"]


def test_a_storage_flag_into_a_folder_that_does_not_exist_names_the_flag(tmp_path, monkeypatch):
    # (QA: `study run --storage` with it took the driver's error for an outage and waited 10 minutes)
    (tmp_path / "space.yaml").write_text(SPACE)
    (tmp_path / "sim-demo.yaml").write_text(demo())
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "no" / "such"
    url = "sqlite:///no/such/x.db"
    for args in (["study", "create", "sim-demo.yaml"], ["study", "run", "sim-demo.yaml"],
                 ["study", "status", "--study", "s"], ["study", "list"]):
        r = CliRunner().invoke(cli, [*args, "--storage", url])
        assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, (args, r.output)
        assert r.stderr.startswith(f"error: --storage: {url!r}: " + MISSING_FOLDER.format(missing, missing)), r.stderr
    monkeypatch.setenv("TUNER_STORAGE", url)
    r = CliRunner().invoke(cli, ["study", "create", "sim-demo.yaml"])
    assert r.exit_code == 2 and r.stderr.startswith("error: $TUNER_STORAGE: "), r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sim-demo.yaml", "space.yaml"]


def test_a_storage_url_s_own_problem_comes_before_its_folder_and_every_flag_is_named(tmp_path, monkeypatch):
    """QA (second pass): the folder check came first, so '~', '$HOME' and uri= were said as missing
    folders with a mkdir that could not help; a file in the path got a mkdir over it; and compare
    named --storage for --storage-b."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("")
    said = {"sqlite:///~/x.db": "'~' is not expanded inside a URL",
            "sqlite:///$HOME/x.db": "a $VARIABLE inside a URL is not read from the environment",
            "sqlite:///nodir/x.db?uri=true": "SQLite's URI mode (uri=...) is not supported",
            "sqlite:///afile/x.db": f"{tmp_path / 'afile'} is not a folder (it, or one above it, is a file",
            "sqlite:///afile/sub/x.db": f"{tmp_path / 'afile' / 'sub'} is not a folder (it, or one above it"}
    for url, words in said.items():
        r = CliRunner().invoke(cli, ["study", "status", "s", "--storage", url])
        assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, (url, r.output)
        assert r.stderr.startswith(f"error: --storage: {url!r}: ") and words in r.stderr, r.stderr
        assert "mkdir" not in r.stderr, r.stderr
    r = CliRunner().invoke(cli, ["study", "compare", "a", "b", "--storage", f"sqlite:///{tmp_path}/a.db",
                                 "--storage-b", "sqlite:///nodir/b.db"])
    assert r.exit_code == 2 and r.stderr.startswith("error: --storage-b: 'sqlite:///nodir/b.db': no such storage "
                                                    "folder"), r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_a_value_is_refused_exactly_when_sglangs_argparse_reads_it_as_an_option(tmp_path):
    """QA: ``model_path: "-models/kimi"`` was accepted, then every launch failed with argparse's
    "expected one argument" (and the model backend exported it). The rule mirrors argparse's
    ``_parse_optional``: checked here against argparse itself, on the simulator's parser (SGLang
    0.5.23's flags), with each value after ``--served-model-name``; a negative number is a value."""
    import argparse

    from tuner.sglang.server_args import server_args_table
    from tuner.sim.args import build_parser

    parser = build_parser()

    def refuse(message):
        raise argparse.ArgumentError(None, message)

    parser.error = refuse
    samples = ["-models/kimi", "-", "--", "-1", "-1.5", "-.5", "-0", "-1e3", "-5.", "-1x", "-a b", "- x", "-x=1",
               "--tp-size=1", "--tp", "-h", "-h x", "-hx", "--port=1 x", "--port x", " -x",
               # an abbreviation before '=' is a flag too (allow_abbrev), space or not
               "--por=1 x", "--served-model-nam=a b", "a-b", "./-models/kimi"]
    for value in samples:
        try:
            parser.parse_args(["--model-path", "m", "--served-model-name", value])
            taken = True
        except argparse.ArgumentError:
            taken = False
        assert server_args_table().reads_as_option(value) is not taken, value
    # negative numbers load: argparse takes them as values (what SGLang makes of them is its own check)
    (tmp_path / "space.yaml").write_text(SPACE)
    (tmp_path / "s.yaml").write_text(demo(server=server(model_path="./-models/kimi", args={
        "context_length": -1, "served_model_name": "-1", "mem_fraction_static": "-0.5"})))
    study = load_study(tmp_path / "s.yaml")
    assert study.server.model_path == "./-models/kimi" and study.server.args["context_length"] == -1
