"""The launcher without the simulator: argv building, failure classification, ports, process groups,
record files, orphan cleanup and signals, with real child processes (plain ``python -c`` servers)."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import textwrap
from datetime import datetime, timezone
import time
from pathlib import Path

import psutil
import pytest
from support.cli_in_process import tuner_here
from support.fake_commands import counting_command
from support.processes import STARTED_GROUPS, finish, gone, kill_if_left, wait_until

from tuner.config.study import ServerSettings
from tuner.config.yamlfile import ConfigError
from tuner.server.gpus import wait_gpu_memory_released
from tuner.server.launcher import (
    LaunchError,
    PortInUseError,
    ServerProcess,
    build_argv,
    classify_log,
    cleanup_orphans,
    format_command,
    plan_launch,
)
from tuner.server.orphans import ServerRecord, list_records, records_dir
from tuner.server.ports import ensure_port_free, listener_owned_by_group, pick_free_port, port_free
from tuner.server.procs import boot_id, read_stat
from tuner.sglang.rules import SpecConfig

PY = sys.executable
ROOT = Path(__file__).resolve().parents[2]
SLEEPER = [PY, "-c", "import time; time.sleep(120)"]


def settings(**kw) -> ServerSettings:
    base = {"backend": "sim", "python": PY, "model_path": "org/model", "draft_model_path": "org/draft",
            "tp_size": 8, "sim": {"speedup": 5000.0, "load_seconds": 0.1, "noise": 0.0, "seed": 7}}
    return ServerSettings.model_validate({**base, **kw})


def track(srv: ServerProcess) -> ServerProcess:
    if srv.pid:
        STARTED_GROUPS.add(srv.pgid)
    return srv


def sleeper(tmp_path, port=None, argv=SLEEPER, **kw) -> ServerProcess:
    port = port or pick_free_port("127.0.0.1")
    return ServerProcess.from_argv(argv, host="127.0.0.1", port=port, log_path=tmp_path / "s.log",
                                   workdir=tmp_path, **kw)


def run_child(tmp_path, code: str, name="tuner_child.py") -> subprocess.Popen:
    script = tmp_path / name
    script.write_text(textwrap.dedent(code))
    return subprocess.Popen([PY, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT)


def announced_pid(read, word: str) -> int:
    """The pid a test server's process printed on a line of its own as ``WORD PID`` (``read()``: the
    log's text so far), once it has; AssertionError if it never does."""
    line = re.compile(rf"^{word} (\d+)$", re.M)
    assert wait_until(lambda: line.search(read())), read()[-2000:]
    return int(line.search(read()).group(1))


# --------------------------------------------------------------------------------------------------
# argv


def test_sim_argv_is_exact():
    srv = settings(args={"mem_fraction_static": 0.85, "trust_remote_code": True,
                         "enable_metrics": False, "lora_paths": ["a", "b"]},
                   extra_args=["--log-level", "debug"])
    argv = build_argv(srv, SpecConfig(3, 1, 4), fixed_args={"page_size": 1}, port=31000,
                      max_concurrency=32)
    assert argv == [
        PY, "-m", "tuner.sim", "--model-path", "org/model", "--tp-size", "8", "--host", "127.0.0.1",
        "--port", "31000", "--speculative-algorithm", "EAGLE3",
        "--speculative-draft-model-path", "org/draft", "--speculative-num-steps", "3",
        "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
        "--page-size", "1", "--mem-fraction-static", "0.85", "--trust-remote-code",
        "--lora-paths", "a", "b",
        "--cuda-graph-max-bs-decode", "32", "--max-running-requests", "32", "--attention-backend", "flashinfer",
        "--sim-profile", "k2.6-tp8-pcie", "--sim-speedup", "5000.0", "--sim-load-seconds", "0.1",
        "--sim-noise", "0.0", "--sim-seed", "7", "--log-level", "debug"]


def test_baseline_has_no_speculative_flags_and_the_same_pins():
    srv = settings()
    trial = build_argv(srv, SpecConfig(2, 4, 8), port=31000, max_concurrency=16)
    base = build_argv(srv, None, port=31000, max_concurrency=16)
    assert not [a for a in base if a.startswith("--speculative")]
    i, j = trial.index("--speculative-algorithm"), trial.index("--cuda-graph-max-bs-decode")
    assert trial[:i] + trial[j:] == base
    for flag, value in (("--cuda-graph-max-bs-decode", "16"), ("--max-running-requests", "16"),
                        ("--attention-backend", "flashinfer")):
        assert base[base.index(flag) + 1] == value


def test_sglang_argv_uses_sglangs_module_and_flag_names():
    srv = settings(backend="sglang", python="python3", tp_size=8)
    argv = build_argv(srv, SpecConfig(1, 1, 2), algorithm="EAGLE", port=30000, max_concurrency=32)
    assert argv[:3] == ["python3", "-m", "sglang.launch_server"]
    assert "--cuda-graph-max-bs-decode" in argv and "--cuda-graph-max-bs" not in argv
    assert argv[argv.index("--speculative-algorithm") + 1] == "EAGLE"
    assert not [a for a in argv if a.startswith("--sim-")]


def test_python_none_means_this_interpreter():
    argv = build_argv(settings(python=None), None, port=1, max_concurrency=1)
    assert argv[0] == sys.executable


def test_user_values_win_over_pins_and_low_ones_warn(caplog):
    srv = settings(args={"max_running_requests": 16, "cuda_graph_max_bs_decode": 8},
                   extra_args=["--attention-backend=triton"])
    with caplog.at_level("WARNING", logger="tuner.server"):
        plan = plan_launch(srv, SpecConfig(3, 1, 4), port=31000, max_concurrency=32)
    argv = plan.argv
    assert argv.count("--max-running-requests") == 1 and argv[argv.index("--max-running-requests") + 1] == "16"
    assert argv.count("--cuda-graph-max-bs-decode") == 1 and argv[argv.index("--cuda-graph-max-bs-decode") + 1] == "8"
    assert "--attention-backend" not in argv and argv[-1] == "--attention-backend=triton"
    assert plan.pinned == {}
    assert len(plan.warnings) == 2 and all("below the largest benchmark concurrency 32" in w
                                           for w in plan.warnings)
    assert "--max-running-requests 16 is below" in caplog.text


def test_user_values_equal_to_the_largest_concurrency_do_not_warn():
    """A value at the largest benchmark concurrency holds every request: no warning (only below it)."""
    plan = plan_launch(settings(args={"max_running_requests": 32, "cuda_graph_max_bs_decode": 32}),
                       SpecConfig(3, 1, 4), port=31000, max_concurrency=32)
    assert plan.warnings == []


def test_an_abbreviated_flag_in_extra_args_is_the_study_s_value_not_a_second_one():
    """QA: `--max-running 8` in extra_args left the pin `--max-running-requests 32` on the line too
    (argparse took the last; nothing said which); SGLang reads the prefix as max_running_requests."""
    plan = plan_launch(settings(extra_args=["--max-running", "8", "--attention-back=triton"]), SpecConfig(3, 1, 4),
                       port=1, max_concurrency=32)
    assert "--max-running-requests" not in plan.argv and "--attention-backend" not in plan.argv
    assert "max_running_requests" not in plan.pinned and plan.argv[-3:] == ["--max-running", "8", "--attention-back=triton"]


@pytest.mark.parametrize("kw, fixed, key", [
    ({"args": {"page_size": 16}}, {"page_size": 1}, "server.args.page_size"),
    ({}, {"model_path": "x"}, "fixed.model_path"),
    ({}, {"tp": 4}, "fixed.tp"),
    ({"draft_model_path": None}, {}, "server.draft_model_path"),
])
def test_unlaunchable_settings_raise_config_error_naming_the_key(kw, fixed, key):
    with pytest.raises(ConfigError) as exc:
        build_argv(settings(**kw), SpecConfig(3, 1, 4), fixed_args=fixed, port=1, max_concurrency=1)
    assert exc.value.key == key


@pytest.mark.parametrize("server, key, owner", [
    ({"args": {"port": 1}}, "args", "port"),
    ({"args": {"model": "x"}}, "args", "model_path"),  # SGLang's alias of --model-path
    ({"args": {"sim_speedup": 2}}, "args", "sim_speedup"),
    ({"extra_args": ["--port=1"]}, "extra_args", "port"),
    ({"extra_args": ["--speculative-num-steps", "3"]}, "extra_args", "speculative_num_steps"),
])
def test_reserved_arguments_are_refused_when_the_file_loads(server, key, owner):
    from tuner.config.yamlfile import parse_model

    base = {"model_path": "org/model", "draft_model_path": "org/draft"}
    with pytest.raises(ConfigError) as exc:
        parse_model(ServerSettings, {**base, **server}, "s.yaml")
    assert exc.value.key == key and owner in exc.value.message


def test_format_command_round_trips_through_a_shell():
    argv = build_argv(settings(model_path="/models/my model's dir"), SpecConfig(3, 1, 4), port=1,
                      max_concurrency=4)
    line = format_command(argv)
    assert "\n" not in line and shlex.split(line) == argv


def _study(tmp_path, **server) -> Path:
    study = {"name": "t", "search_space": str(ROOT / "search_spaces" / "eagle3.yaml"),
             "server": {"backend": "sim", "model_path": "org/model", "draft_model_path": "org/draft",
                        **server},
             "bench": {"suite": "quick"}}
    path = tmp_path / "study.yaml"
    path.write_text(json.dumps(study))
    return path


def tuner_cli(*args) -> subprocess.CompletedProcess:
    """``tuner ARGS`` in this process, from the checkout (support/cli_in_process.py): ``launch --print``
    starts no server, and the test reads only what it prints and its exit code (four Python
    start-ups and imports saved)."""
    r = tuner_here(*args, cwd=ROOT)
    return subprocess.CompletedProcess(list(args), r.exit_code, r.stdout, r.stderr)


def test_cli_print_shows_the_exact_command(tmp_path):
    study = _study(tmp_path, port=31234)
    r = tuner_cli("launch", str(study), "--num-steps", "3", "--topk", "1", "--draft-tokens", "4",
                  "--print")
    assert r.returncode == 0, r.stderr
    line, = r.stdout.splitlines()
    argv = shlex.split(line)
    assert argv[1:3] == ["-m", "tuner.sim"] and argv[argv.index("--port") + 1] == "31234"
    assert argv[argv.index("--speculative-num-steps") + 1] == "3"
    assert argv[argv.index("--max-running-requests") + 1] == "32"  # the quick suite's largest C
    r = tuner_cli("launch", str(study), "--baseline", "--print")
    assert r.returncode == 0 and "--speculative" not in r.stdout
    r = tuner_cli("launch", str(study), "--baseline", "--topk", "2", "--print")
    assert r.returncode == 2 and "--baseline" in r.stderr
    r = tuner_cli("launch", str(study), "--topk", "4", "--print")
    assert r.returncode == 0 and "SGLang will fail at launch (all-or-none)" in r.stderr


def test_cli_launch_refuses_a_file_edited_after_its_study_was_created(tmp_path, monkeypatch):
    """QA: launch built its server from the file as it is now, so a file edited after `study
    create` launched a server that was not the study's; `study run` refused that file. Launch now
    gives run's line; a study not created yet still launches from the file, and nothing is written."""
    from click.testing import CliRunner

    from tuner.cli import cli

    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    monkeypatch.chdir(tmp_path)
    study = _study(tmp_path)
    data = json.loads(study.read_text())
    run = CliRunner()
    r = run.invoke(cli, ["launch", str(study), "--print"])
    assert r.exit_code == 0 and "-m tuner.sim" in r.stdout, r.output
    assert not (tmp_path / "t.db").exists()  # no study yet: from the file, and no storage made
    assert run.invoke(cli, ["study", "create", str(study)]).exit_code == 0
    data["budget"] = {"n_trials": 99}  # a budget shapes no server: launched, and not stored
    study.write_text(json.dumps(data))
    r = run.invoke(cli, ["launch", str(study), "--print"])
    assert r.exit_code == 0 and "-m tuner.sim" in r.stdout, r.output
    data["server"]["sim"] = {"noise": 0.2}
    study.write_text(json.dumps(data))
    stored = (tmp_path / "t.db").read_bytes()
    r = run.invoke(cli, ["launch", str(study), "--print"])
    assert r.exit_code == 2 and r.stdout == "", r.output
    line, = r.stderr.splitlines()
    assert "the study exists with a different config (server.sim.noise differs)" in line, line
    assert run.invoke(cli, ["study", "run", str(study)]).stderr.splitlines() == [line]  # run's own line
    assert (tmp_path / "t.db").read_bytes() == stored


def test_cli_launch_from_a_file_whose_storage_cannot_be_read_says_so_and_goes_on(tmp_path, monkeypatch):
    """QA (second pass): with the comparison, launch refused to run at all when the study's storage
    could not be read -- a variable unset on this node (its fix named --storage, which launch does not
    take), a database down, a file that is no database -- and made Optuna's tables in an empty file.
    Launching by hand needs no storage: said on stderr, and the file is used; nothing is written."""
    from click.testing import CliRunner

    from tuner.cli import cli

    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    monkeypatch.delenv("NO_SUCH_DB_VAR", raising=False)
    monkeypatch.chdir(tmp_path)
    junk = tmp_path / "junk.db"
    junk.write_text("not a database\n")
    (tmp_path / "empty.db").write_bytes(b"")
    for storage, said in (("${NO_SUCH_DB_VAR}", "environment variable NO_SUCH_DB_VAR is not set"),
                          (f"sqlite:///{junk}", "file is not a database"),
                          (f"sqlite:///{tmp_path / 'empty.db'}", None)):
        data = json.loads(_study(tmp_path).read_text())
        (tmp_path / "study.yaml").write_text(json.dumps({**data, "storage": storage}))
        r = CliRunner().invoke(cli, ["launch", str(tmp_path / "study.yaml"), "--print"])
        assert r.exit_code == 0 and "-m tuner.sim" in r.stdout, (storage, r.output)
        warnings = [line for line in r.stderr.splitlines() if line.startswith("warning: cannot read")]
        if said is None:  # an empty file holds no study: nothing to compare, nothing said
            assert not warnings, r.stderr
        else:
            assert len(warnings) == 1 and said in warnings[0] and "--storage" not in warnings[0], r.stderr
            assert warnings[0].endswith("launching from the file as it is"), warnings[0]
    assert (tmp_path / "empty.db").read_bytes() == b"" and junk.read_text() == "not a database\n"


# --------------------------------------------------------------------------------------------------
# classification

TB = 'Traceback (most recent call last):\n  File "{file}", line 1, in f\n'
ARG_FILE = "/x/sglang/srt/arg_groups/speculative_hook.py"


@pytest.mark.parametrize("text, code, phase, expected", [
    ("usage: launch_server [-h]\nlaunch_server: error: unrecognized arguments: --bogus 1", 2,
     "startup", "invalid_args"),
    ("usage: x\nx: error: ambiguous option: --cuda-graph-max-bs could match a, b", 2, "startup",
     "invalid_args"),
    (TB.format(file=ARG_FILE) + "AssertionError", 1, "startup", "invalid_args"),
    (TB.format(file="/x/tuner/sim/args.py") + "TypeError: '>' not supported between instances of "
     "'NoneType' and 'int'", 1, "startup", "invalid_args"),
    ("Load weight begin\n" + TB.format(file="/x/model_loader/loader.py") + "ValueError: bad shape",
     1, "startup", "other"),
    ("Load weight begin\n" + TB.format(file="/x/srt/server_args.py") + "ValueError: bad", 1,
     "startup", "invalid_args"),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", 1, "startup", "oom"),
    ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.", 1, "startup",
     "oom"),
    ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1, unhandled system "
     "error", -9, "startup", "nccl"),
    ("[rank3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5)", -6, "running",
     "nccl"),
    ("NCCL INFO Bootstrap : Using eth0\nNCCL INFO comm 0x1 rank 0 nranks 8 - Init COMPLETE\n"
     "Killed", -9, "running", "crash_after_ready"),
    ("Load weight begin\nloading...", None, "startup", "startup_timeout"),
    ("RuntimeError: selected index k out of range", None, "running", "spec_runtime"),
    ("RuntimeError: selected index k out of range", 1, "running", "spec_runtime"),
    ('{"error": {"message": "RuntimeError: selected index k out of range"}}', None, "running",
     "spec_runtime"),
    ("Segmentation fault", -11, "startup", "other"),
    ("ok", None, "running", "other"),
    (TB.format(file=ARG_FILE) + "AssertionError", 1, "running", "crash_after_ready"),
])
def test_classify_log(text, code, phase, expected):
    assert classify_log(text, code, phase) == expected


# --------------------------------------------------------------------------------------------------
# ports


def test_port_checks_and_port_in_use_error(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert not port_free("127.0.0.1", port)
        with pytest.raises(PortInUseError) as exc:
            ensure_port_free("127.0.0.1", port)
        assert str(exc.value) == (f"port {port} on 127.0.0.1 is in use by another process; "
                                  f"set server.port to a free port or 0")
        srv = ServerProcess(settings(port=port), None, workdir=tmp_path, trial=1)
        with pytest.raises(PortInUseError):
            srv.start()
        assert srv.proc is None and not list_records(tmp_path) and not srv.log_path.exists()
        auto = ServerProcess(settings(port=0), None, workdir=tmp_path, trial=2)
        assert auto.port != port and auto.plan.argv[auto.plan.argv.index("--port") + 1] == str(auto.port)
    assert port_free("127.0.0.1", port)


def test_listener_ownership_tells_our_server_from_a_stranger(tmp_path):
    port = pick_free_port("127.0.0.1")
    srv = track(sleeper(tmp_path, port, argv=[PY, "-m", "http.server", str(port), "--bind",
                                              "127.0.0.1"]).start())
    STARTED_GROUPS.add(srv.pgid)
    try:
        assert wait_until(lambda: not port_free("127.0.0.1", port))
        assert listener_owned_by_group(port, srv.pgid) is True
        assert listener_owned_by_group(port, os.getpgrp()) is False
    finally:
        srv.stop()


# --------------------------------------------------------------------------------------------------
# process groups and records


def test_start_records_the_group_and_stop_removes_everything(tmp_path):
    srv = sleeper(tmp_path).start()
    track(srv)
    rec_path = records_dir(tmp_path) / f"{srv.pid}.json"
    rec = json.loads(rec_path.read_text())
    st = read_stat(srv.pid)
    assert rec["pid"] == srv.pid == rec["pgid"] == st.pgid == st.sid != os.getpgrp()
    assert rec["start_ticks"] == st.start_ticks and rec["cmdline"] == SLEEPER
    assert rec["owner_pid"] == os.getpid() and rec["port"] == srv.port and rec["members"] == []
    srv.stop()
    assert gone(srv.pid) and not rec_path.exists() and srv.returncode == -signal.SIGTERM
    srv.stop()  # twice is safe
    log = srv.log_path.read_text()
    assert log.startswith("# tuner: ") and format_command(SLEEPER) in log
    assert log.rstrip().endswith("stopped, killed by SIGTERM")
    # the launch's time in UTC, said so, whatever this process's zone (QA, qa168: local, no zone)
    stamp = log.split(" launch: ", 1)[0].removeprefix("# tuner: ")
    when = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S UTC").replace(tzinfo=timezone.utc)
    assert abs((datetime.now(timezone.utc) - when).total_seconds()) < 3600


def test_stop_kills_the_whole_group_even_when_it_ignores_sigterm(tmp_path):
    code = ("import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "c = subprocess.Popen([sys.executable, '-c', 'import signal, time; "
            "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)']); "
            "print(c.pid, flush=True); time.sleep(120)")
    srv = track(sleeper(tmp_path, argv=[PY, "-c", code], stop_grace_s=0.5).start())
    assert wait_until(lambda: srv.log_text().strip().split("\n")[-1].isdigit())
    grandchild = int(srv.log_text().strip().split("\n")[-1])
    assert read_stat(grandchild).pgid == srv.pgid
    srv.stop()
    assert gone(srv.pid) and gone(grandchild) and srv.returncode == -signal.SIGKILL


# A server whose child leaves the process group (os.setsid(), or a double fork whose middle process
# exits) and keeps the listening socket it inherited: a wedged TP worker holding the port or the GPU.
ESCAPING_SERVER = """
import os, socket, sys, time
sock = socket.socket(); sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", int(sys.argv[1]))); sock.listen()
double = sys.argv[2] == "double_fork"
if os.fork() == 0:
    os.setsid()
    if double and os.fork() != 0:
        os._exit(0)  # the middle process exits: the escapee is reparented away from the server
    print("escapee", os.getpid(), flush=True)
    time.sleep(120)
    os._exit(0)
time.sleep(120)
"""


@pytest.mark.parametrize("how", ["setsid", "double_fork"])
def test_stop_leaves_no_child_that_escaped_the_group(tmp_path, how):
    port = pick_free_port("127.0.0.1")
    srv = track(sleeper(tmp_path, port, argv=[PY, "-c", ESCAPING_SERVER, str(port), how], stop_grace_s=1))
    srv.start()
    escapee = None
    try:
        escapee = announced_pid(srv.log_text, "escapee")
        st = read_stat(escapee)
        assert st.sid == st.pgid != srv.pgid  # out of the group a killpg reaches
        srv.stop()
        assert gone(srv.pid) and wait_until(lambda: gone(escapee), 5)
        assert port_free("127.0.0.1", port) and not list_records(tmp_path)
    finally:
        kill_if_left(escapee)
        srv.stop()


# An escapee that also dropped its environment (no TUNER_SERVER_MARK): only its parentage, walked
# while the leader lives, says it is the server's.
UNMARKED_ESCAPEE = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    os.execve(sys.executable, [sys.executable, "-c",
              "import os, time; print('escapee', os.getpid(), flush=True); time.sleep(120)"], {})
time.sleep(120)
"""


def test_stop_leaves_no_escaped_child_that_dropped_the_mark(tmp_path):
    srv = track(sleeper(tmp_path, argv=[PY, "-c", UNMARKED_ESCAPEE], stop_grace_s=1))
    srv.start()
    escapee = None
    try:
        escapee = announced_pid(srv.log_text, "escapee")
        st = read_stat(escapee)
        assert st.pgid != srv.pgid and st.ppid == srv.pid
        assert "TUNER_SERVER_MARK" not in psutil.Process(escapee).environ()
        srv.stop()
        assert gone(srv.pid) and wait_until(lambda: gone(escapee), 5)
    finally:
        kill_if_left(escapee)
        srv.stop()


def test_kill_reaches_a_child_that_escaped_the_group_at_once(tmp_path):
    """The hung path: kill() SIGKILLs the escapee too, without a stop() and its grace."""
    port = pick_free_port("127.0.0.1")
    srv = track(sleeper(tmp_path, port, argv=[PY, "-c", ESCAPING_SERVER, str(port), "setsid"],
                        stop_grace_s=1))
    srv.start()
    escapee = None
    try:
        escapee = announced_pid(srv.log_text, "escapee")
        srv.kill()
        assert wait_until(lambda: gone(escapee), 5)
    finally:
        kill_if_left(escapee)
        srv.stop()


def failed_start(tmp_path, code: str, startup_timeout_s: float):
    """The server ``python -c code`` started and awaited: ``(server, the LaunchError it failed with)``,
    the server stopped."""
    srv = track(sleeper(tmp_path, argv=[PY, "-c", code], startup_timeout_s=startup_timeout_s).start())
    try:
        with pytest.raises(LaunchError) as exc:
            srv.wait_ready()
    finally:
        srv.stop()
    return srv, exc.value


def test_wait_ready_fails_at_once_when_the_process_exits(tmp_path):
    code = "import sys; print('Traceback (most recent call last):'); print('AssertionError'); sys.exit(1)"
    srv, err = failed_start(tmp_path, code, 120)
    assert err.failure_class == "invalid_args" and err.exit_code == 1
    assert "exit code 1 before it was ready: AssertionError" in err.message
    assert "AssertionError" in err.log_tail and str(srv.log_path) in err.message
    assert err.attributes()["failure_class"] == "invalid_args"


def test_a_log_of_one_huge_line_gives_a_short_tail(tmp_path):
    """5 MB without a newline (a progress bar redrawn with \\r, a dumped tensor): the tail a trial
    stores and prints stays a few kB, and still ends with the error line."""
    code = "import sys; sys.stdout.write('y' * 5_000_000); print(); print('ValueError: boom'); sys.exit(1)"
    _, err = failed_start(tmp_path, code, 60)
    tail = err.log_tail
    assert len(tail) < 10_000 and "chars cut" in tail and tail.rstrip().endswith("ValueError: boom")
    assert "ValueError: boom" in err.message


DAEMONIZING_SERVER = """
import http.server, os, sys
port = int(sys.argv[1])
child = os.fork()
if child:
    print("daemon", child, flush=True)  # said before it exits: the launch fails at once after
    os._exit(0)  # the launcher returns at once, as a daemonizing one does
os.setsid()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
    def log_message(self, *a):
        pass
server = http.server.HTTPServer(("127.0.0.1", port), H)
server.serve_forever()
"""


def test_a_leader_that_exits_at_once_fails_the_launch_and_its_daemon_is_stopped(tmp_path):
    port = pick_free_port("127.0.0.1")
    srv = track(sleeper(tmp_path, port, argv=[PY, "-c", DAEMONIZING_SERVER, str(port)], stop_grace_s=1,
                        startup_timeout_s=30))
    daemon = None
    try:
        with pytest.raises(LaunchError) as exc:
            with srv:
                pass
        assert exc.value.exit_code == 0 and "exit code 0 before it was ready" in exc.value.message
        daemon = announced_pid(srv.log_text, "daemon")
        assert wait_until(lambda: gone(daemon), 5)
        assert port_free("127.0.0.1", port) and not list_records(tmp_path)
    finally:
        kill_if_left(daemon)
        srv.stop()


def test_startup_timeout(tmp_path):
    srv = track(sleeper(tmp_path, startup_timeout_s=1.0).start())
    try:
        with pytest.raises(LaunchError) as exc:
            srv.wait_ready()
        assert srv.returncode is None  # wait_ready does not stop it; the owner does
    finally:
        srv.stop()
    assert exc.value.failure_class == "startup_timeout" and "not ready after 1 s" in exc.value.message


HEALTH_SERVER = """
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


def test_ready_via_health_fallback_then_crash_after_ready(tmp_path):
    port = pick_free_port("127.0.0.1")
    srv = sleeper(tmp_path, port, argv=[PY, "-c", HEALTH_SERVER, str(port)], startup_timeout_s=30)
    with srv:
        track(srv)
        assert srv.ready and srv.url == f"http://127.0.0.1:{port}"
        members = json.loads(srv.record.path.read_text())["members"]
        assert members == [[srv.pid, read_stat(srv.pid).start_ticks]]
        srv.check_alive()
        os.kill(srv.pid, signal.SIGKILL)
        assert wait_until(lambda: srv.returncode is not None)
        with pytest.raises(LaunchError) as exc:
            srv.check_alive()
        assert exc.value.failure_class == "crash_after_ready"
        assert "killed by SIGKILL after it was ready" in exc.value.message
        cls, msg, tail = srv.classify_exit()
        assert cls == "crash_after_ready"
    assert port_free("127.0.0.1", port) and not list_records(tmp_path)


# Ready on /health_generate; GET /crash closes its socket, then the process winds down 1.5 s and exits 1
# (SGLang's exits seconds after its port refuses connections).
WINDING_DOWN_SERVER = """
import http.server, sys, threading, time
print("Load weight begin. avail mem=78.50 GB", flush=True)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        if self.path == "/crash":
            threading.Thread(target=srv.shutdown).start()
    def log_message(self, *a):
        pass
srv = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H)
srv.serve_forever()
srv.server_close()
time.sleep(1.5)
sys.exit(1)
"""


def test_a_failed_request_is_quoted_from_its_answer_and_a_late_exit_is_waited_for(tmp_path):
    """classify_exit: the HTTP body's draft-tree error is the line quoted (the log never says it);
    with ``exit_wait_s`` a server whose socket closed is waited for and its exit status read,
    not called "still running"."""
    from tuner.server.health import answer_status
    from tuner.sglang.rules import TREE_TOO_LARGE_RUNTIME_ERROR

    port = pick_free_port("127.0.0.1")
    srv = sleeper(tmp_path, port, argv=[PY, "-c", WINDING_DOWN_SERVER, str(port)], startup_timeout_s=30)
    with srv:
        track(srv)
        body = f'{{"object": "error", "message": "{TREE_TOO_LARGE_RUNTIME_ERROR}"}}'
        cls, msg, _ = srv.classify_exit(response_text=body)
        assert cls == "spec_runtime" and "selected index k out of range" in msg, msg
        assert answer_status(srv.url + "/crash", 5) == 200
        cls, msg, _ = srv.classify_exit(exit_wait_s=15)
        assert (cls, srv.returncode) == ("crash_after_ready", 1), msg
        assert "exit code 1 after it was ready" in msg, msg


# --------------------------------------------------------------------------------------------------
# orphans and signals

TUNER_CHILD = """
import os, sys, threading, time
sys.path.insert(0, {root!r})
from tuner.server.launcher import ServerProcess, stop_on_signals
srv = ServerProcess.from_argv({argv!r}, host="127.0.0.1", port={port}, log_path={log!r},
                              workdir={workdir!r}, stop_grace_s=2)
with stop_on_signals():
    if {from_thread!r}:  # a launch from another thread: no parent-death signal (tuner.server.procs)
        launcher = threading.Thread(target=srv.start)
        launcher.start()
        launcher.join()
    else:
        srv.start()
    print(srv.pid, flush=True)
    time.sleep(120)
"""


def start_tuner_child(tmp_path, argv=SLEEPER, from_thread=False):
    port = pick_free_port("127.0.0.1")
    child = run_child(tmp_path, TUNER_CHILD.format(root=str(ROOT), argv=argv, port=port, from_thread=from_thread,
                                                   log=str(tmp_path / "s.log"), workdir=str(tmp_path)))
    line = child.stdout.readline()
    assert line.strip().isdigit(), child.stderr.read()
    server_pid = int(line)
    STARTED_GROUPS.add(server_pid)
    return child, server_pid


def test_a_server_dies_with_its_tuner_killed_with_kill_9(tmp_path):
    """PR_SET_PDEATHSIG (tuner.server.procs.die_with_this_thread): the kernel kills the server when
    its tuner dies, instead of it running on until the next run's cleanup (QA: a kill -9'd tuner
    left its server holding the port and the GPUs); the next run only drops the stale record."""
    child, server_pid = start_tuner_child(tmp_path)
    try:
        assert not gone(server_pid)
        child.kill()
        child.wait(timeout=10)
        assert wait_until(lambda: gone(server_pid), 30), "the server outlived its tuner"
        assert cleanup_orphans(tmp_path) == [] and not list_records(tmp_path)
    finally:
        kill_if_left(server_pid)
        finish(child)


def test_cleanup_orphans_after_kill_9_of_the_tuner(tmp_path):
    """A server launched from a thread other than the main one gets no parent-death signal (it would
    fire when that thread ends): it outlives a kill -9 of its tuner, and the next run stops it."""
    child, server_pid = start_tuner_child(tmp_path, from_thread=True)
    try:
        assert cleanup_orphans(tmp_path) == []  # its tuner is alive: not an orphan
        assert not gone(server_pid)
        child.kill()
        child.wait(timeout=10)
        assert not gone(server_pid)  # the server outlives a kill -9 of its tuner...
        stopped = cleanup_orphans(tmp_path)
        assert [r.pid for r in stopped] == [server_pid]  # ...until the next run cleans up
        assert wait_until(lambda: gone(server_pid)) and not list_records(tmp_path)
        assert cleanup_orphans(tmp_path) == []
    finally:
        finish(child)


def test_cleanup_orphans_stops_a_child_that_escaped_the_group(tmp_path):
    port = pick_free_port("127.0.0.1")
    argv = [PY, "-c", ESCAPING_SERVER, str(port), "double_fork"]
    child, server_pid = start_tuner_child(tmp_path, argv=argv)
    log, escapee = tmp_path / "s.log", None
    try:
        escapee = announced_pid(log.read_text, "escapee")
        child.kill()
        child.wait(timeout=10)
        kill_if_left(server_pid)  # the leader gone too (it dies with its tuner): only the mark finds the escapee
        assert wait_until(lambda: gone(server_pid)) and not gone(escapee)
        assert [r.pid for r in cleanup_orphans(tmp_path)] == [server_pid]
        assert wait_until(lambda: gone(escapee), 5) and not list_records(tmp_path)
    finally:
        kill_if_left(escapee)
        finish(child)


def test_cleanup_orphans_stops_an_unrecorded_member_of_a_group_whose_leader_died(tmp_path):
    """The tuner killed -9 while its server loaded (its members never recorded), then the leader
    died (the OOM killer, say): its worker, still in the group, is found by the launch's mark."""
    code = ("import subprocess, sys, time; c = subprocess.Popen([sys.executable, '-c', "
            "'import time; time.sleep(120)']); print('worker', c.pid, flush=True); time.sleep(120)")
    child, server_pid = start_tuner_child(tmp_path, argv=[PY, "-c", code])
    log, worker = tmp_path / "s.log", None
    try:
        worker = announced_pid(log.read_text, "worker")
        child.kill()
        child.wait(timeout=10)
        os.kill(server_pid, signal.SIGKILL)
        assert wait_until(lambda: gone(server_pid)) and read_stat(worker).pgid == server_pid
        assert [r.pid for r in cleanup_orphans(tmp_path)] == [server_pid]
        assert wait_until(lambda: gone(worker), 5) and not list_records(tmp_path)
    finally:
        kill_if_left(worker)
        finish(child)


def _record(**kw) -> ServerRecord:
    base = dict(pid=1, pgid=1, start_ticks=0, cmdline=SLEEPER, boot_id="", host="127.0.0.1",
                port=1, backend="sim", log_path="x", stop_grace_s=1, started_at=0,
                owner_pid=4194304 + 9, owner_start_ticks=0)  # owner above pid_max: dead
    return ServerRecord(**{**base, **kw})


def test_cleanup_never_kills_a_reused_pid(tmp_path):
    bystander = subprocess.Popen(SLEEPER, start_new_session=True)
    STARTED_GROUPS.add(bystander.pid)
    try:
        st = read_stat(bystander.pid)
        # its pid, but another start time (the pid was reused), or another command line
        _record(pid=st.pid, pgid=st.pid, start_ticks=st.start_ticks - 1).save(records_dir(tmp_path))
        # a leader that is gone, whose group id a stranger now uses: no recorded member matches
        _record(pid=4194304 + 7, pgid=st.pid, start_ticks=st.start_ticks,
                members=[[st.pid, st.start_ticks - 1]]).save(records_dir(tmp_path))
        assert cleanup_orphans(tmp_path) == []
        assert bystander.poll() is None and not list_records(tmp_path)
        _record(pid=st.pid, pgid=st.pid, start_ticks=st.start_ticks,
                cmdline=["other"]).save(records_dir(tmp_path))
        assert cleanup_orphans(tmp_path) == [] and bystander.poll() is None
        # pid, start time and command line all match, but the record is of another boot: its ticks
        # counted from another boot's start, so the match is chance and the process a stranger
        _record(pid=st.pid, pgid=st.pid, start_ticks=st.start_ticks,
                boot_id="another-boot-" + boot_id()).save(records_dir(tmp_path))
        assert cleanup_orphans(tmp_path) == [] and bystander.poll() is None
        # the leader gone, a recorded member still running: that member is stopped
        _record(pid=4194304 + 7, pgid=st.pid, start_ticks=st.start_ticks,
                members=[[st.pid, st.start_ticks]]).save(records_dir(tmp_path))
        assert [r.pgid for r in cleanup_orphans(tmp_path)] == [st.pid]
        assert bystander.wait(timeout=10) == -signal.SIGTERM
    finally:
        bystander.kill()
        bystander.wait(timeout=10)


@pytest.mark.parametrize("sig, codes", [(signal.SIGTERM, (143,)), (signal.SIGINT, (-2, 130))])
def test_a_signal_to_the_tuner_stops_the_server_first(tmp_path, sig, codes):
    child, server_pid = start_tuner_child(tmp_path)
    try:
        child.send_signal(sig)
        assert child.wait(timeout=30) in codes
        assert gone(server_pid) and not list_records(tmp_path)
    finally:
        finish(child)


# --------------------------------------------------------------------------------------------------
# GPU memory (nvidia-smi is absent here; a stand-in script plays it)


def test_gpu_memory_wait(tmp_path, caplog):
    with caplog.at_level("INFO", logger="tuner.server"):
        assert wait_gpu_memory_released([0], 5, nvidia_smi=str(tmp_path / "no-nvidia-smi")) is None
    assert "nvidia-smi not available" in caplog.text
    fake, counter = counting_command(tmp_path, "nvidia-smi", """\
        print("70000\\n500" if n < 2 else "900\\n500")
        """)
    assert wait_gpu_memory_released([800, 400], 30, tolerance_mib=200, nvidia_smi=str(fake)) is True
    assert int(counter.read_text()) == 3
    assert wait_gpu_memory_released([0, 0], 0.5, tolerance_mib=10, nvidia_smi=str(fake)) is False


def test_a_list_held_fixed_by_the_space_launches_as_repeated_values(tmp_path):
    """QA: `fixed: {gc_threshold: [1, 2]}` was refused with "input should be a valid boolean"; a
    space's fixed args take what server.args takes (an nargs flag: a list)."""
    from tuner.config.space import SearchSpace

    space = tmp_path / "space.yaml"
    shipped = Path(__file__).resolve().parents[2] / "search_spaces" / "eagle3.yaml"
    space.write_text(shipped.read_text().replace("fixed: {}", "fixed: {gc_threshold: [1, 2]}"))
    fixed = SearchSpace.load(space).config.fixed
    assert fixed == {"gc_threshold": [1, 2]}
    argv = build_argv(settings(), SpecConfig(3, 1, 4), fixed_args=fixed, port=1, max_concurrency=1)
    i = argv.index("--gc-threshold")
    assert argv[i + 1:i + 3] == ["1", "2"]


DRIPPING_HEALTH = """
import socket, sys, time
sock = socket.create_server(("127.0.0.1", int(sys.argv[1])))
status_too = sys.argv[2] == "status"
while True:
    conn, _ = sock.accept()
    conn.recv(65536)
    head = b"HTTP/1.1 200 OK\\r\\nX-Pad: " + b"." * 200 + b"\\r\\nContent-Length: 1000\\r\\n\\r\\n"
    try:
        if not status_too:
            conn.sendall(head)
        for byte in (head if status_too else b"." * 1000):  # one byte a second, every second
            conn.sendall(bytes([byte]))
            time.sleep(1.0)
    except OSError:
        pass
    conn.close()
"""


@pytest.mark.parametrize("drip", ["body", "status"])
def test_a_health_check_that_drips_is_a_startup_timeout_at_its_deadline(tmp_path, drip):
    # QA: /health_generate answering 200 then its body one byte a second kept wait_ready in one
    # requests.get far past server.startup_timeout_s (a study's baseline launch, startup_timeout_s 4:
    # still launching after 38 s; each byte restarts a read timeout, never the total)
    port = pick_free_port("127.0.0.1")
    srv = track(sleeper(tmp_path, port, argv=[PY, "-c", DRIPPING_HEALTH, str(port), drip],
                        startup_timeout_s=3.0).start())
    started = time.monotonic()
    try:
        with pytest.raises(LaunchError) as exc:
            srv.wait_ready()
        waited = time.monotonic() - started
    finally:
        srv.stop()
    assert exc.value.failure_class == "startup_timeout" and "not ready after 3 s" in exc.value.message
    assert waited < 60  # bounded by the deadline (3 s), not by the drip (1,000 s): no speed asserted
