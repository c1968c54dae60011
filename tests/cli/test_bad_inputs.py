"""Everything checked before anything is written: each bad input, through `tuner study create` and
`tuner study run`, is one line naming the file and the key (or the flag) with the fix, a non-zero
exit, and nothing written (no storage, no workdir, no log). Also what depends on other files: the
suite's concurrencies, the profile beside the study file, the search space's caps, the interpreter."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tuner.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SPACE = yaml.safe_load((ROOT / "search_spaces" / "eagle3.yaml").read_text())
SUITE = {"name": "s", "prompts": [{"name": "a", "text": "hello"}], "single": {"lengths": [8], "repeats": 1},
         "sweep": {"concurrencies": [1, 4], "max_tokens": 8}, "warmup": {"requests": 0}, "timeout_s": 30}
# A billion laughs in about 400 bytes: nine levels of nine aliases each.
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))


def base() -> dict:
    return {"name": "bad", "search_space": "space.yaml",
            "server": {"backend": "sim", "model_path": "m", "draft_model_path": "d", "sim": {"speedup": 50}},
            "bench": {"suite": "suite.yaml"}, "objectives": ["single_speedup", "speedup@4"]}


def _set(d: dict, dotted: str, value) -> None:
    *parents, last = dotted.split(".")
    for p in parents:
        d = d.setdefault(p, {})
    if value is _DROP:
        d.pop(last, None)
    else:
        d[last] = value


_DROP = object()


def _not_executable(tmp: Path) -> str:
    p = tmp / "python-not-x"
    p.write_text("#!/bin/sh\n")
    p.chmod(0o644)
    return str(p)


def _bad_profile(tmp: Path) -> str:
    (tmp / "profiles").mkdir()
    (tmp / "profiles" / "mine.yaml").write_text("name: mine\nmodel: {layers: -1}\n")
    return "profiles/mine.yaml"  # relative: to the study file's folder, not the current directory


def _on_b200(args: dict) -> dict:
    """A Kimi-style study on SGLang: MLA target, Llama-style (MHA) EAGLE-3 head, Blackwell GPUs."""
    return {"server.backend": "sglang", "server.sim": _DROP, "server.args": args,
            "server.facts": {"model_attention": "mla", "draft_attention": "mha", "gpu_compute_capability": "10.0"}}


#: (case id, {dotted key: value, or a function of the folder}, files to write {name: bytes or text},
#:  what the one line must name)
CASES = [
    ("sampler option unknown", {"sampler": {"name": "tpe", "options": {"n_startup_trail": 3}}}, {},
     "sampler.options: n_startup_trail: unknown key (did you mean 'n_startup_trials'?)"),
    ("sampler option type", {"sampler": {"name": "tpe", "options": {"n_startup_trials": "ten"}}}, {},
     "sampler.options: n_startup_trials: input should be a valid integer"),
    ("sampler option seed", {"sampler": {"options": {"seed": 1}}}, {}, "sampler.options: seed: set sampler.seed"),
    ("sampler option range", {"sampler": {"name": "local-tpe", "options": {"draft_factor": 0.5}}}, {},
     "sampler.options: draft_factor: input should be greater than 1"),
    ("auto sampler option range", {"sampler": {"name": "auto", "options": {"horizon": 0}}}, {},
     "sampler.options: horizon: input should be greater than 0"),
    ("reserved arg", {"server.args": {"port": 30000}}, {}, "server.args: 'port' is searched or set by the tuner"),
    ("reserved alias", {"server.args": {"model": "x"}}, {}, "'model' (SGLang reads it as model_path)"),
    ("reserved flag", {"server.extra_args": ["--speculative-num-steps=3"]}, {},
     "server.extra_args: --speculative-num-steps sets speculative_num_steps"),
    ("reserved sim flag", {"server.args": {"sim_speedup": 2}}, {}, "server.args: 'sim_speedup' is searched"),
    ("python missing", {"server.python": "/nonexistent/python3"}, {}, "server.python: /nonexistent/python3 does not exist"),
    ("python not on PATH", {"server.python": "python-that-is-not-there"}, {}, "server.python: 'python-that-is-not-there' is not on PATH"),
    ("python not executable", {"server.python": _not_executable}, {}, "is not executable"),
    ("workdir a file", {"workdir": "taken"}, {"taken": "x"}, "taken is a file"),
    ("workdir under a file", {"workdir": "taken/x"}, {"taken": "x"}, "workdir"),
    ("seed outside the space", {"seed_trials": [{"speculative_num_steps": 20, "speculative_eagle_topk": 1,
                                                 "speculative_num_draft_tokens": 21}]}, {},
     "bad.yaml: seed_trials[0]: steps=20 topk=1 draft=21 lies outside the search space"),  # the file named
    ("profile unknown", {"server.sim.profile": "k2.6-tp8-pcei"}, {},
     "server.sim.profile: no such simulator profile 'k2.6-tp8-pcei' (did you mean 'k2.6-tp8-pcie'?)"),
    ("profile file bad", {"server.sim.profile": _bad_profile}, {}, "profiles/mine.yaml: model"),
    ("profile file missing", {"server.sim.profile": "nope/p.yaml"}, {}, "nope/p.yaml: file not found"),
    ("draft model missing", {"server.draft_model_path": _DROP}, {}, "server.draft_model_path: required"),
    ("fixed vs server.args", {"server.args": {"page_size": 16}}, {"space.yaml": {**SPACE, "fixed": {"page_size": 1}}},
     "server.args.page_size: 16 conflicts with the search space's fixed page_size: 1"),
    ("objective spelled otherwise", {"objectives": ["single_speedup", "speedup@04"]}, {},
     "unknown objective 'speedup@04'"),
    ("objective never measured", {"objectives": ["single_speedup", "speedup@32"]}, {},
     "objectives: speedup@32: the suite 's' never measures concurrency 32 (it sweeps 1, 4)"),
    ("single objective, no singles", {}, {"suite.yaml": {**SUITE, "single": {"lengths": []}}},
     "objectives: single_speedup: the suite 's' measures no single requests"),
    ("slo never measured", {"slo": [{"concurrency": 8, "e2e_p99_ms": 100}]}, {},
     "slo[0].concurrency: 8 is not a concurrency the suite 's' sweeps"),
    # QA: an ITL limit where every sweep request generates one token has no gap to measure: the
    # baseline and every trial "broke" it ("not measured"), the whole study infeasible
    ("itl limit on one-token requests", {"bench.stream": True, "slo": [{"concurrency": 4, "itl_p99_ms": 100}]},
     {"suite.yaml": {**SUITE, "sweep": {"concurrencies": [1, 4], "max_tokens": 1}}},
     "slo[0].itl_p99_ms: every request the suite 's' sends at C=4 generates 1 token: ITL (the gaps between "
     "tokens) is never measured"),
    # QA: a length given twice was sent twice per repeat by `tuner bench`, but the study's stage plan
    # measured its first repeat once: the plan changed what the suite measures
    ("single length twice", {}, {"suite.yaml": {**SUITE, "single": {"lengths": [8, 16, 8], "repeats": 2}}},
     "suite.yaml: single.lengths: 8 is given twice; give each length once"),
    ("inline single length twice", {"bench.suite": {**SUITE, "single": {"lengths": [8, 8]}}}, {},
     "bad.yaml: bench.suite.single.lengths: 8 is given twice"),
    # QA: chat turns that are all whitespace were sent as an empty conversation through bench.api:
    # chat (a blank text, and a dataset row with empty turns, are refused)
    ("blank chat turns", {"bench.api": "chat"}, {"suite.yaml": {**SUITE, "prompts": [
        {"name": "a", "text": "hello", "messages": [{"role": "system", "content": ""}, {"role": "user", "content": " \n"}]}]}},
     "suite.yaml: prompts[0].messages: prompt 'a': every message is empty"),
    ("inline blank chat turns", {"bench.suite": {**SUITE, "prompts": [
        {"name": "a", "text": "hello", "messages": [{"role": "user", "content": "  "}]}]}}, {},
     "bad.yaml: bench.suite.prompts[0].messages: prompt 'a': every message is empty"),
    # QA (qa218): a system turn beside a blank user turn was accepted and sent: a request that asks nothing
    ("dataset row of instructions only", {"bench.api": "chat"}, {
        "rows.jsonl": '{"prompt": "hello there"}\n{"messages": [{"role": "system", "content": "x"}, '
                      '{"role": "user", "content": "  "}]}\n',
        "suite.yaml": {**{k: v for k, v in SUITE.items() if k != "prompts"}, "dataset": {"path": "rows.jsonl"}}},
     "rows.jsonl: line 2: messages: only its instructions (system turns) have text, messages[1], the user turn, "
     "is blank: it asks the model nothing; give the user turn's text, or drop the row"),
    ("inline chat turns of instructions only", {"bench.suite": {**SUITE, "prompts": [
        {"name": "a", "text": "hello", "messages": [{"role": "developer", "content": "Be brief."}]}]}}, {},
     "bad.yaml: bench.suite.prompts[0].messages: prompt 'a': only its instructions (developer turns) have text, "
     "no user turn: it asks the model nothing"),
    ("trial timeout too short", {"bench.trial_timeout": "5m"}, {}, "bench.trial_timeout (5m) must exceed"),
    ("alias bomb in study", {}, {"bad.yaml": ALIAS_BOMB}, "bad.yaml: line 2: not valid YAML (aliases"),
    ("alias bomb in space", {}, {"space.yaml": ALIAS_BOMB}, "space.yaml: line 2: not valid YAML (aliases"),
    ("alias bomb in suite", {}, {"suite.yaml": ALIAS_BOMB}, "suite.yaml: line 2: not valid YAML (aliases"),
    ("nested too deep", {}, {"space.yaml": "[" * 50_000}, "space.yaml: nested too deeply"),
    ("study file huge", {}, {"bad.yaml": "# " + "x" * (5 << 20) + "\n"}, "bad.yaml: 5 MiB, over the 4 MiB limit"),
    ("suite /dev/zero", {"bench.suite": "/dev/zero"}, {}, "/dev/zero: not a regular file"),
    ("space a folder", {"search_space": "."}, {}, "is a folder; give a file"),
    ("study not UTF-8", {}, {"bad.yaml": b"name: b\xe4d\n"}, "bad.yaml: not UTF-8 text (byte 7)"),
    ("suite not UTF-8", {}, {"suite.yaml": b"name: s\xff\n"}, "suite.yaml: not UTF-8 text (byte 7)"),
    ("prompt file not UTF-8", {}, {"suite.yaml": {**SUITE, "prompts": [{"name": "a", "file": "p.txt"}]},
                                   "p.txt": b"\xc3\x28"}, "prompts[0].file: cannot read"),
    ("dataset a fifo", {}, {"suite.yaml": {**{k: v for k, v in SUITE.items() if k != "prompts"},
                                           "dataset": {"path": "fifo.jsonl"}}},
     "fifo.jsonl: not a regular file"),  # a reader would block on it forever
    # what SGLang 0.5.23 does with the study's backends on its servers (facts stated: no config.json
    # or nvidia-smi here): every launch would fail after the model load
    ("MHA draft head on trtllm_mla", _on_b200({"attention_backend": "trtllm_mla"}), {},
     "server.args: no setting of the search space runs on this study's servers (504 tried): 504 break "
     "draft-backend-kind (while the server starts, after the full model load): the draft model is MHA"),
    ("fa3 on Blackwell", _on_b200({"attention_backend": "fa3"}), {},
     "server.args: attention backend fa3 does not start for the model on sm100"),
    ("trtllm_mla on Hopper", {**_on_b200({"attention_backend": "trtllm_mla", "speculative_draft_attention_backend": "fa3"}),
                              "server.facts": {"model_attention": "mla", "draft_attention": "mha",
                                               "gpu_compute_capability": "9.0"}}, {},
     "server.args: attention backend trtllm_mla does not start for the model on sm90 (Hopper)"),
    # QA: SGLang refuses trtllm_mla with an FP8 E5M2 KV cache while handling the arguments (every
    # launch, the baseline's too); the study passed and its baseline failed after the model load
    ("trtllm_mla with kv_cache_dtype fp8_e5m2", _on_b200({"attention_backend": "trtllm_mla",
                                                          "speculative_draft_attention_backend": "flashinfer",
                                                          "kv_cache_dtype": "fp8_e5m2"}), {},
     "server.args: kv_cache_dtype fp8_e5m2: attention backend trtllm_mla does not take it (SGLang: ValueError: "
     "TensorRT-LLM MLA backend only supports kv-cache-dtype of fp8_e4m3, bf16, or auto.)"),
    ("hpc_ops with speculation", _on_b200({"attention_backend": "hpc_ops"}), {},
     "server.args: no setting of the search space runs on this study's servers (2016 tried): 504 break "
     "backend-no-spec (while the server starts, after the full model load): attention backend hpc_ops"),
    # QA: the arguments that break every setting were the space's fixed ones, and the line said server.args
    ("rejection sampling in the space's fixed", {}, {"space.yaml": {**SPACE, "fixed": {
        "speculative_use_rejection_sampling": True, "speculative_accept_threshold_single": 0.5}}},
     "bad.yaml: search_space's fixed: no setting of the search space runs on this study's servers (2016 tried): "
     "504 break rejection-sampling-thresholds"),
    ("cutedsl_mla for prefill", _on_b200({"prefill_attention_backend": "cutedsl_mla"}), {},
     "server.args: prefill_attention_backend cutedsl_mla: SGLang 0.5.23 refuses it"),
    # The simulator's context check (SGLang's 400), before the study is written: characters / 4.
    ("prompt over the context", {}, {"suite.yaml": {**SUITE, "prompts": [{"name": "a", "text": "x" * 40_000}]}},
     "suite.yaml: prompts[0]: 10000 prompt tokens + max_tokens 8 is over the context length 8192 of profile "
     "k2.6-tp8-pcie"),
    ("prompt plus max_tokens over the context", {}, {"suite.yaml": {
        **SUITE, "prompts": [{"name": "a", "text": "x" * 32_000}], "sweep": {"concurrencies": [1, 4],
                                                                             "max_tokens": 512}}},
     "suite.yaml: prompts[0]: 8000 prompt tokens + max_tokens 512 is over the context length 8192"),
    ("dataset row over the context, backend model", {
        "server.backend": "model", "server.sim": _DROP, "server.model": {"profile": "k2.6-tp8-pcie"}},
     {"long.jsonl": '{"prompt": "hi"}\n{"prompt": "' + "x" * 40_000 + '"}\n',
      "suite.yaml": {**{k: v for k, v in SUITE.items() if k != "prompts"}, "dataset": {"path": "long.jsonl"}}},
     "long.jsonl: request line2: 10000 prompt tokens + max_tokens 8 is over the context length 8192 of profile "
     "k2.6-tp8-pcie (tokens by the simulator's count, characters / 4, a CJK character or an emoji one token); SGLang "
     "refuses it with HTTP 400: shorten it, lower its max_tokens, or drop it (dataset.max_prompt_chars)"),
    # QA (qa188): a short prompt whose max_tokens is over the context was told to drop it by max_prompt_chars
    ("dataset row's max_tokens over the context, backend model", {
        "server.backend": "model", "server.sim": _DROP, "server.model": {"profile": "k2.6-tp8-pcie"}},
     {"long.jsonl": '{"prompt": "hi"}\n{"prompt": "a short one", "max_tokens": 9000}\n',
      "suite.yaml": {**{k: v for k, v in SUITE.items() if k not in ("prompts", "sweep")},
                     "sweep": {"concurrencies": [1, 4]}, "dataset": {"path": "long.jsonl", "max_output_tokens": 20000}}},
     "is over the context length 8192 of profile k2.6-tp8-pcie (tokens by the simulator's count, characters / 4, "
     "a CJK character or an emoji one token); SGLang refuses it with HTTP 400: lower its max_tokens "
     "(dataset.max_output_tokens caps every request's) or shorten it"),
    # QA: fewer single requests than single.prompts asked for were measured, silently
    ("single.prompts over the drawn requests", {}, {
        "rows.jsonl": "".join(f'{{"prompt": "request number {i}"}}\n' for i in range(5)),
        "suite.yaml": {**{k: v for k, v in SUITE.items() if k != "prompts"}, "dataset": {"path": "rows.jsonl", "n": 2},
                       "single": {"prompts": 8, "lengths": [8], "repeats": 1}}},
     "suite.yaml: single.prompts: 8 prompts asked for, but the suite has 2 requests drawn from rows.jsonl; "
     "lower it to 2 or less, or remove it (default: every prompt); a study created with it before this check "
     "runs by name: tuner study run --study NAME --storage URL"),
    ("single.prompts over the inline prompts", {"bench.suite": {**SUITE, "single": {"prompts": 5, "lengths": [8]}}},
     {}, "bad.yaml: bench.suite.single.prompts: 5 prompts asked for, but the suite has 1 prompt; lower it to 1"),
    ("draft range 10^9", {}, {"space.yaml": {**SPACE, "params": {
        **SPACE["params"], "speculative_num_draft_tokens": {"low": 2, "high": 1_000_000_000}}}},
     "speculative_num_draft_tokens: values go up to 1000000000; the tuner's cap is 1024"),
    # QA: a budget of 10**18 launches was taken; the bound is a search space's most settings
    ("budget over the bound", {"budget": {"n_trials": 10 ** 18}}, {},
     "bad.yaml: budget.n_trials: 1000000000000000000 launches is more than any study runs; "
     "give at most 100000"),
    # '~' is not expanded in any path key (QA: `search_space: ~/x.yaml` said "file not found" without
    # why, and `workdir: ~/wd` would have made a folder named '~' beside the study file)
    ("space under ~", {"search_space": "~/space.yaml"}, {},
     "bad.yaml: search_space: '~/space.yaml': '~' is not expanded; write the path out"),
    ("suite under ~", {"bench.suite": "~/suite.yaml"}, {},
     "bad.yaml: bench.suite: '~/suite.yaml': '~' is not"),
    ("profile under ~", {"server.sim.profile": "~/p.yaml"}, {},
     "bad.yaml: server.sim.profile: '~/p.yaml': '~' is"),
    ("workdir under ~", {"workdir": "~/wd"}, {}, "bad.yaml: workdir: '~/wd': '~' is not expanded"),
    ("model profile under ~",
     {"server.backend": "model", "server.sim": _DROP, "server.model": {"profile": "~/p.yaml"}}, {},
     "bad.yaml: server.model.profile: '~/p.yaml': '~' is not expanded"),
    ("landscape under ~",
     {"server.backend": "model", "server.sim": _DROP, "server.model": {"landscape": "~/t.json"}}, {},
     "bad.yaml: server.model.landscape: '~/t.json': '~' is not expanded"),
    ("prompt file under ~", {}, {"suite.yaml": {**SUITE, "prompts": [{"name": "a", "file": "~/p.txt"}]}},
     "suite.yaml: prompts[0].file: '~/p.txt': '~' is not expanded"),
    ("dataset under ~", {}, {"suite.yaml": {**{k: v for k, v in SUITE.items() if k != "prompts"},
                                            "dataset": {"path": "~/d.jsonl"}}},
     "suite.yaml: dataset.path: '~/d.jsonl': '~' is not expanded"),
    ("inline prompt file under ~",
     {"bench.suite": {**SUITE, "prompts": [{"name": "a", "file": "~/p.txt"}]}}, {},
     "bad.yaml: bench.suite.prompts[0].file: '~/p.txt': '~' is not expanded"),
    # nor an environment variable (QA: `search_space: $HOME/x.yaml` said "file not found" naming
    # a folder literally called $HOME); the storage URL's ${VAR} is the one place they are read
    ("space under $HOME", {"search_space": "$HOME/space.yaml"}, {},
     "bad.yaml: search_space: '$HOME/space.yaml': '$HOME' is not expanded; write the path out"),
    ("workdir under ${VAR}", {"workdir": "runs/${RUN}/wd"}, {},
     "bad.yaml: workdir: 'runs/${RUN}/wd': '${RUN}' is not expanded"),
    ("too many combinations", {}, {"space.yaml": {**SPACE, "params": {
        "speculative_num_steps": {"low": 1, "high": 64}, "speculative_eagle_topk": {"low": 1, "high": 64},
        "speculative_num_draft_tokens": {"low": 2, "high": 64}}}}, "258,048 combinations of the three flags"),
]


def _write(tmp: Path, overrides: dict, files: dict) -> Path:
    study = base()
    for key, value in overrides.items():
        _set(study, key, value(tmp) if callable(value) else value)
    written = {"bad.yaml": study, "space.yaml": SPACE, "suite.yaml": SUITE, **files}
    for name, content in written.items():
        path = tmp / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content)
        else:
            path.write_text(yaml.safe_dump(content, sort_keys=False))
    if any(isinstance(v, dict) and v.get("dataset", {}).get("path") == "fifo.jsonl" for v in files.values()):
        os.mkfifo(tmp / "fifo.jsonl")
    return tmp / "bad.yaml"


@pytest.mark.parametrize("command", ["create", "run", "run --dry-run"])  # a dry run says no where a run would
@pytest.mark.parametrize("case, overrides, files, says", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_and_nothing_is_written(tmp_path, monkeypatch, command, case, overrides, files, says):
    work = tmp_path / "in"
    work.mkdir()
    study = _write(work, overrides, files)
    before = sorted(p.name for p in work.iterdir())
    elsewhere = tmp_path / "cwd"  # run from another folder: relative paths are the study file's
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    verb, *flags = command.split()
    r = CliRunner().invoke(cli, ["study", verb, str(study), *flags])
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], r.stderr
    assert r.stdout == "" and "Traceback" not in r.output
    assert sorted(p.name for p in work.iterdir()) == before  # no bad.db, no bad/ workdir
    assert not any(elsewhere.iterdir())


def test_a_fixed_port_in_use_is_one_line_before_anything_is_written(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        study = _write(tmp_path, {"server.port": port}, {})
        r = CliRunner().invoke(cli, ["study", "run", str(study)])
    assert r.exit_code == 1, r.output
    assert r.stderr.strip() == (f"error: port {port} on 127.0.0.1 is in use by another process; "
                                "set server.port to a free port or 0")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml", "space.yaml", "suite.yaml"]


def test_a_relative_profile_is_read_from_the_study_files_folder(tmp_path, monkeypatch):
    shipped = ROOT / "tuner" / "sim" / "profiles" / "k2.6-tp8-pcie.yaml"
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "mine.yaml").write_text(shipped.read_text())
    study = _write(tmp_path, {"server.sim.profile": "profiles/mine.yaml"}, {})
    monkeypatch.chdir(tmp_path / "profiles")  # where profiles/mine.yaml does not exist
    r = CliRunner().invoke(cli, ["study", "create", str(study)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["study", "run", str(study), "--dry-run"])
    assert f"--sim-profile {tmp_path / 'profiles' / 'mine.yaml'}" in r.stdout


def test_a_bare_profile_name_is_never_read_from_the_current_folder(tmp_path, monkeypatch):
    # server.sim.profile: myprof (no '/' nor .yaml: a name) ran the file myprof of whatever folder
    # the tuner started in, as server.model.profile did before 161e03c: the same study file meant
    # another profile, or none, depending on the current folder.
    shipped = ROOT / "tuner" / "sim" / "profiles" / "k2.6-tp8-pcie.yaml"
    (tmp_path / "cwd").mkdir()
    (tmp_path / "cwd" / "myprof").write_text(shipped.read_text())
    study = _write(tmp_path, {"server.sim.profile": "myprof"}, {})
    monkeypatch.chdir(tmp_path / "cwd")
    before = sorted(p.name for p in tmp_path.iterdir())
    r = CliRunner().invoke(cli, ["study", "run", str(study), "--dry-run"])
    line = r.output.strip()
    assert r.exit_code == 2 and line.splitlines() == [line], r.output
    assert line.startswith(f"error: {study}: server.sim.profile: no such simulator profile 'myprof'"), line
    assert "(./myprof)" in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("overrides", [
    {"server.args": {"context_length": 16384}},  # pinned: the simulator's limit, and the check's
    # QA (second pass): given raw, in full or abbreviated, as the simulator's parser reads it
    {"server.extra_args": ["--context-length", "32768"]},
    {"server.extra_args": ["--context-len=32768"]},
    {"server.backend": "sglang", "server.sim": _DROP},  # a real server: its own limit, its own 400
    {"server.backend": "model", "server.sim": _DROP, "server.model": {"landscape": "node.json"}},  # no context
], ids=["pinned context_length", "context length in extra_args", "abbreviated in extra_args",
        "backend sglang", "landscape table"])
def test_a_long_prompt_is_refused_only_against_a_known_context(tmp_path, overrides):
    from support.landscapes import table_from_profile, write_table

    write_table(tmp_path / "node.json", table_from_profile(concurrency=4))
    suite = {**SUITE, "prompts": [{"name": "a", "text": "x" * 40_000}]}
    study = _write(tmp_path, overrides, {"suite.yaml": suite})
    r = CliRunner().invoke(cli, ["study", "create", str(study)])
    assert r.exit_code == 0, r.output
