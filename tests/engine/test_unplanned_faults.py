"""Faults the fault campaign did not plan for, inflicted on real parts: ``tuner study run`` as a
subprocess, the simulator it launches on 127.0.0.1, real SIGSTOP/SIGCONT.

* the tuner itself paused for a few seconds (under ``TUNER_STALL_S``, under the hang rules) while the
  baseline's single requests run: the answers wait, unread, outside the server's clock, and the
  baseline would read slow (QA: 20.9 instead of 26.2 tok/s, a trial's single speedup 2.87 instead
  of 2.29 kept on the front). The stall watch saw the pause and the answers show it: the baseline
  is measured again. An answer that waited as long while the tuner ran fails the measurement
  (``bad_response``: the server's HTTP layer stood still).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import optuna
import pytest
from click.testing import CliRunner
from support.faults import fault_env, wait_for
from support.processes import finish
from support.forked_tuner import start_forked, start_zygote_under
from support.zygote import CLI_PRELOAD, TUNER_CLI, start_zygote

ROOT = Path(__file__).resolve().parents[2]


def zygote_env() -> dict:
    """The environment of the `tuner` commands forked here, and of their zygote (read at import): the
    stall watch at its default 15 s (the pauses here are shorter), the output unbuffered."""
    env = {k: v for k, v in os.environ.items() if k not in ("TUNER_TEST_KILL_AT", "TUNER_STALL_S")}
    return {**env, "PYTHONUNBUFFERED": "1"}


@pytest.fixture(scope="module")
def cli_zygote(tmp_path_factory):
    """The `tuner` commands that do not run under another host's name, forked from one interpreter that
    imported the CLI once (support/zygote.py): each a process of its own, as ``python -m tuner`` is,
    paused with a real SIGSTOP (support/forked_tuner.py), its servers real simulator processes; a
    second of imports saved each."""
    z = start_zygote(CLI_PRELOAD, zygote_env(), tmp_path_factory.mktemp("cli-zygote"))
    yield z
    z.close()

STUDY = """
name: {name}
search_space: {space}
storage: sqlite:///{folder}/{name}.db
workdir: {folder}/work
server:
  backend: sim
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  startup_timeout_s: 60
  stop_grace_s: 10
  sim: {{profile: k2.6-tp8-pcie, speedup: 5, load_seconds: 0, noise: 0.0, seed: 1}}
bench:
  suite:
    name: tiny
    prompts: [{{name: fib, text: "def fib(n):"}}, {{name: haiku, text: "autumn leaves"}}]
    # 128 tokens, ~1 s wall each: an OpenAI answer's wait is its whole latency (no e2e_latency), and
    # at 256 (~1.96 s) a loaded machine's few ms put an unpaused one past the 2 s asserted below
    single: {{lengths: [128], repeats: 2}}
    sweep: {{concurrencies: [1], max_tokens: 64}}
    warmup: {{requests: 1, max_tokens: 4}}
    timeout_s: 300
  api: {api}
objectives: [single_speedup, speedup@1]
default_seed_trials: false
seed_trials: [{{speculative_num_steps: 3, speculative_eagle_topk: 1, speculative_num_draft_tokens: 4}}]
budget: {{n_trials: 1}}
"""


def write_study(folder: Path, name: str = "paused", api: str = "generate") -> Path:
    path = folder / f"{name}.yaml"
    space = ROOT / "search_spaces" / "eagle3.yaml"
    path.write_text(STUDY.format(name=name, folder=folder, space=space, api=api))
    return path


def wait_for_text(path: Path, text: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.02)
    raise AssertionError(f"{text!r} never appeared in {path}")


def pause_during_single_requests(proc, log: Path, seconds: float = 5) -> str:
    """SIGSTOP ``proc`` (a tuner) for ``seconds`` once ``log`` (its server's) says the cache was
    flushed -- after the warm-up, as the single requests (about 1 s wall each) begin -- then let it
    finish; its output."""
    try:
        wait_for_text(log, "Cache flushed")
        time.sleep(0.5)
        os.kill(proc.pid, signal.SIGSTOP)
        time.sleep(seconds)
        os.kill(proc.pid, signal.SIGCONT)
        out, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
        finish(proc)
    return out


def paused_baseline_run(tmp_path: Path, api: str, zygote) -> Path:
    """A `tuner study run` (a real process, forked from ``zygote``) paused during its baseline's single
    requests, and its checks: that baseline measured again, the run gone on. Its study file (the study
    run)."""
    study = write_study(tmp_path, api=api)
    log = tmp_path / "work" / "baseline" / "server.log"
    run = start_forked(zygote, ["study", "run", str(study)], zygote_env(), tmp_path, tmp_path / "run.log")
    out = pause_during_single_requests(run, log)
    assert run.returncode == 0 and "Traceback" not in out, out
    # the pause is the tuner's, not the server's: that baseline is dropped and measured again
    assert "the tuner itself stood still for" in out and "measuring it again" in out, out
    storage = f"sqlite:///{tmp_path / 'paused.db'}"
    base = optuna.load_study(study_name="paused.baseline", storage=storage)
    measured = [t for t in base.trials if t.user_attrs.get("status") == "measured"]
    assert len(measured) == 1 and len(base.trials) == 2, [t.user_attrs for t in base.trials]
    # the baseline kept is the second, unpaused: every answer read within 2 s of the server's own
    # clock (its whole latency, when the answer does not say the server's)
    suite = json.loads(Path(measured[0].user_attrs["suite_json"]).read_text())
    waits = [r["end_s"] - r["start_s"] - (r["server_latency_s"] or 0) for r in suite["records"] if r["ok"]]
    assert waits and max(waits) < 2.0, max(waits)
    assert measured[0].number == 1
    trials = optuna.load_study(study_name="paused", storage=storage).trials
    assert [t.user_attrs["status"] for t in trials] == ["measured"]
    # nothing left running
    assert not list((tmp_path / "work" / "servers").glob("*.json"))
    assert log.read_text().count("# tuner: stopped") == 2
    return study


def test_tuner_paused_during_the_openai_baseline_single_requests_measures_the_baseline_again(tmp_path,
                                                                                              cli_zygote):
    """SGLang's OpenAI answers carry no e2e_latency, so the whole wall latency may be the pause (QA:
    the baseline read 17.7 instead of 26.2 tok/s, a single speedup 3.38 kept)."""
    paused_baseline_run(tmp_path, "openai", cli_zygote)


def test_an_answer_that_waited_outside_the_servers_clock_fails_the_measurement(tmp_path):
    """The server's side of the same wait (its HTTP layer stood still before taking the request): the
    tuner did not stand still, so the server's measurement cannot count (``bad_response``)."""
    from tuner.bench import RequestRecord, SuiteResult
    from tuner.config.study import load_study
    from tuner.engine.verify import verify_result

    config = load_study(write_study(tmp_path))
    info = {"version": "0.5.23+sim", "sim_speedup": 5.0, "speculative_algorithm": None}

    def rec(wall_s: float, server_s: float) -> RequestRecord:
        return RequestRecord("single", "fib", 16, ok=True, completion_tokens=16, start_s=0.0, end_s=wall_s,
                             server_latency_s=server_s)

    def suite(*records) -> SuiteResult:
        return SuiteResult(suite={"ignore_eos": True}, server_info=info, records=list(records),
                           time_scale=5.0, complete=True)

    assert verify_result(suite(rec(1.0, 0.9), rec(2.5, 0.6)), None, config, "EAGLE3") is None
    cls, msg = verify_result(suite(rec(1.0, 0.9), rec(4.0, 1.0)), None, config, "EAGLE3")
    assert cls == "bad_response"
    assert "1 of 2 single requests waited 2 s or more outside the server's own clock" in msg, msg
    assert "single fib at 16 tokens, 3 s of its 4 s beyond its e2e_latency" in msg, msg
    # a sweep batch's request may queue in the server's HTTP process behind its batch-mates: not judged
    sweep = rec(4.0, 1.0)
    sweep.phase = "sweep"
    assert verify_result(suite(rec(1.0, 0.9), sweep), None, config, "EAGLE3") is None


# -- a worker of another host paused past its heartbeat's grace, on one PostgreSQL study ----------------

TAKEOVER = """
name: takeover
search_space: {space}
storage: ${{TUNER_STORAGE}}
server:
  backend: sim
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  port: 0
  startup_timeout_s: 60
  stop_grace_s: 5
  sim: {{profile: k2.6-tp8-pcie, speedup: 20, load_seconds: 0.3, noise: 0.01, seed: 1}}
bench:
  suite:
    name: tiny
    prompts: [{{name: fib, text: "def fib(n):"}}, {{name: haiku, text: "autumn leaves"}}]
    single: {{lengths: [128], repeats: 2}}
    sweep: {{concurrencies: [1, 8], max_tokens: 64}}
    warmup: {{requests: 1, max_tokens: 4}}
    timeout_s: 60
objectives: [single_speedup, speedup@8]
budget: {{n_trials: 4}}
"""


def other_node(argv: list[str]) -> list[str]:
    """``argv`` run under another hostname (a private UTS namespace): the other workers can judge its
    worker by heartbeat only, as a worker on another node."""
    probe = subprocess.run(["unshare", "--uts", "sh", "-c", "hostname node-b"], capture_output=True,
                           timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"no UTS namespace here (unshare --uts: {probe.stderr.decode().strip()[:200]})")
    return ["unshare", "--uts", "sh", "-c", 'hostname node-b && exec "$@"', "sh", *argv]


def trial_state(storage, study_name: str, number: int) -> str | None:
    """The state's name of trial ``number`` of the study in ``storage`` (None: not there yet)."""
    trials = storage.get_all_trials(storage.get_study_id_from_name(study_name), deepcopy=False)
    return trials[number].state.name if len(trials) > number else None


def test_a_worker_paused_past_its_heartbeat_while_another_takes_its_trial_over_goes_on(pg_url, tmp_path):
    """Worker A (another host) is paused with SIGSTOP during its trial's suite, past the heartbeat's
    grace and the stall watch; worker B fails A's trial as dead, queues its setting again and measures
    it. A, resumed, must drop its measurement with a line saying why and go on (QA: it ended in a
    traceback, UpdateFinishedTrialError from the pruning judge's write to the finished trial)."""
    from sqlalchemy.pool import NullPool

    from tuner.cli import cli
    from tuner.engine.storage import driver_url

    study = tmp_path / "takeover.yaml"
    study.write_text(TAKEOVER.format(space=ROOT / "search_spaces" / "eagle3.yaml"))
    env = fault_env(TUNER_STORAGE=pg_url, TUNER_STALL_S="5")
    # in-process: creating the study is the setup, not under test (a subprocess cost an import)
    created = CliRunner().invoke(cli, ["study", "create", str(study)], env={"TUNER_STORAGE": pg_url})
    assert created.exit_code == 0, created.output
    a_log, b_log = tmp_path / "a.log", tmp_path / "b.log"
    # A and B forked each from a zygote that imported the CLI with their environment (the heartbeat
    # and TUNER_STALL_S are read at import), A's under the other hostname: real processes, A paused
    # by a real SIGSTOP; a `study run`'s imports paid in a zygote cost less than in a fresh
    # `python -m tuner` (support/forked_tuner.py)
    zygotes = [start_zygote_under(other_node([]), CLI_PRELOAD, env, tmp_path),
               start_zygote_under([], CLI_PRELOAD, env, tmp_path)]
    a = b = None
    try:
        a = start_forked(zygotes[0], ["study", "run", "--study", "takeover", "--workdir", "wa"], env,
                         tmp_path, a_log)
        wait_for_text(tmp_path / "wa" / "trials" / "0" / "server.log", "Cache flushed")
        os.kill(a.pid, signal.SIGSTOP)
        stopped_at = time.monotonic()
        b = start_forked(zygotes[1], ["study", "run", "--study", "takeover", "--workdir", "wb"], env,
                         tmp_path, b_log)
        # A stays paused until B has failed trial 0 as dead (past the grace, 4 s: waited for, not
        # guessed, so a loaded machine's slow B cannot find A back first) and past its own stall
        # watch (5 s; one more for the watch's 0.5 s ticks), so that resumed it finds its trial taken
        watch = optuna.storages.RDBStorage(driver_url(pg_url), engine_kwargs={"poolclass": NullPool})
        try:
            wait_for(lambda: trial_state(watch, "takeover", 0) == "FAIL", 120, "B to fail trial 0 as dead", [b])
        finally:
            watch.engine.dispose()
        time.sleep(max(0.0, stopped_at + 6 - time.monotonic()))
        os.kill(a.pid, signal.SIGCONT)
        assert a.wait(timeout=300) == 0, a_log.read_text()
        assert b.wait(timeout=300) == 0, b_log.read_text()
    finally:
        if a is not None and a.poll() is None:
            os.kill(a.pid, signal.SIGCONT)
        for p in (a, b):
            if p is not None:
                finish(p)
        for z in zygotes:
            z.close()
    out_a = a_log.read_text()
    assert "Traceback" not in out_a + b_log.read_text(), out_a
    assert "the tuner itself stood still" in out_a, out_a
    # and that its trial was another's by then (it said "its setting is queued again" alone: qa223)
    assert ("trial 0: the tuner itself stood still for" in out_a and "another worker failed this trial as dead: "
            "this worker's heartbeat was older than the grace period (4 s; this process paused, or cut off "
            "from the database), which queued its setting again" in out_a), out_a
    s = optuna.load_study(study_name="takeover", storage=driver_url(pg_url))
    first = s.trials[0]
    assert first.state.name == "FAIL", first.user_attrs
    # its setting measured once, by the retry; nothing left running, no setting measured twice
    done = [t for t in s.trials if t.state.name == "COMPLETE" and t.user_attrs.get("status") == "measured"]
    keys = [t.user_attrs["effective_key"] for t in done]
    assert first.user_attrs["effective_key"] in keys and len(keys) == len(set(keys)), keys
    assert not [t for t in s.trials if t.state.name == "RUNNING"]
    for wd in ("wa", "wb"):
        assert not list((tmp_path / wd / "servers").glob("*.json")), wd


# -- the server's port taken by another process while the server starts ------------------------------

SQUAT = '''
import os, subprocess, sys, time
argv = sys.argv[1:]
port = argv[argv.index("--port") + 1]
folder = {folder!r}
mark = os.path.join(folder, "squatted")
if "--speculative-algorithm" in argv and not os.path.exists(mark):
    # the first trial's launch: another process binds the port first, as an outgoing connection or
    # another service may while a server loads its model
    open(mark, "w").close()
    bound = os.path.join(folder, "bound")
    # A stranger, not a child of the server: the tuner stops whatever its server spawned, even out
    # of its group (tuner/server/procs.py, escapees). So: a double fork (its parent gone at once), a
    # session of its own, and an environment without the launch's TUNER_SERVER_MARK.
    env = {{k: v for k, v in os.environ.items() if k != "TUNER_SERVER_MARK"}}
    middle = os.fork()
    if middle == 0:
        os.setsid()
        if os.fork() == 0:
            with open(os.path.join(folder, "squatter.pid"), "w") as f:
                f.write(str(os.getpgrp()))
            os.execve(sys.executable, [sys.executable, "-c", "import socket, sys, time; s = socket.socket(); "
                                       # SO_REUSEADDR, as a server binds: the baseline's server left the
                                       # fixed port in TIME_WAIT a moment ago
                                       "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
                                       "s.bind(('127.0.0.1', " + port + ")); s.listen(); "
                                       "open(sys.argv[1], 'w').close(); time.sleep(120)", bound], env)
        os._exit(0)
    os.waitpid(middle, 0)
    deadline = time.monotonic() + 60  # it holds the port before the server starts, however loaded
    while not os.path.exists(bound) and time.monotonic() < deadline:
        time.sleep(0.02)
os.execv(sys.executable, [sys.executable, *argv])
'''


def squatting_python(folder: Path) -> Path:
    script = folder / "squat.py"
    script.write_text(SQUAT.format(folder=str(folder)))
    wrapper = folder / "python-squat"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def squat_study(folder: Path, port: int) -> Path:
    space = ROOT / "search_spaces" / "eagle3.yaml"
    text = STUDY.format(name="squat", folder=folder, space=space, api="generate")
    pinned = f"  tp_size: 8\n  port: {port}\n  python: {squatting_python(folder)}\n"
    text = text.replace("  tp_size: 8\n", pinned)
    text = text.replace("speedup: 5,", "speedup: 20,")
    path = folder / "squat.yaml"
    path.write_text(text)
    return path


def run_squatted(zygote, folder: Path, port: int):
    try:
        return zygote.run(TUNER_CLI, ["study", "run", str(squat_study(folder, port))], env=zygote_env(),
                          cwd=folder, timeout=300)
    finally:
        pid_file = folder / "squatter.pid"
        if pid_file.exists():
            os.killpg(int(pid_file.read_text()), signal.SIGKILL)


def test_a_port_taken_while_the_server_starts_is_not_the_settings_failure_port_0(tmp_path, cli_zygote):
    """``server.port: 0``: the tuner picked the port, so it picks another and launches again; the
    setting is measured, not failed as ``other`` (QA: it was, charged to the budget and never
    measured again)."""
    run = run_squatted(cli_zygote, tmp_path, 0)
    out = run.stdout + run.stderr
    assert run.returncode == 0 and "Traceback" not in out, out
    assert (tmp_path / "squatted").exists()  # the fault was inflicted
    s = optuna.load_study(study_name="squat", storage=f"sqlite:///{tmp_path / 'squat.db'}")
    assert [t.user_attrs.get("status") for t in s.trials] == ["measured"], [t.user_attrs for t in s.trials]
    assert "address already in use" in out and "launching it again on port" in out, out
    assert not list((tmp_path / "work" / "servers").glob("*.json"))


def test_a_fixed_port_taken_while_the_server_starts_stops_the_run_with_one_line(tmp_path, cli_zygote):
    from tuner.server.ports import pick_free_port

    port = pick_free_port("127.0.0.1")
    run = run_squatted(cli_zygote, tmp_path, port)
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr, run.stdout + run.stderr
    errors = [ln for ln in run.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and f"port {port} on 127.0.0.1" in errors[0], run.stderr
    assert "set server.port to a free port or 0" in errors[0], errors
    # the setting is not blamed: its trial is queued again, nothing failed or charged
    s = optuna.load_study(study_name="squat", storage=f"sqlite:///{tmp_path / 'squat.db'}")
    assert not [t for t in s.trials if t.state.name == "COMPLETE"], [t.user_attrs for t in s.trials]
    assert [t.state.name for t in s.trials if t.state.name == "WAITING"], [t.state for t in s.trials]
    assert not list((tmp_path / "work" / "servers").glob("*.json"))


# -- the tuner paused during `tuner study confirm` -------------------------------------------------------

# the paused run and the paused confirmation had the suite's 300 s (pyproject) each as two tests: still so
@pytest.mark.timeout(600)
def test_tuner_paused_during_the_baseline_then_during_a_confirmation_measures_each_again(tmp_path,
                                                                                         cli_zygote):
    """The tuner paused during the baseline's single requests (``generate``) measures that baseline
    again (:func:`paused_baseline_run`); and `tuner study confirm` of that study, paused during a
    repeat, measures that repeat again. Confirm had no stall watch: a pause of any length during a
    repeat was counted in its figures and in its round's paired speedups (or, caught by the answers'
    wait, blamed on the server as ``bad_response``, the round lost). One test: the paused run is the
    confirmation's study, which cost a whole run of its own."""
    study = paused_baseline_run(tmp_path, "generate", cli_zygote)
    storage = f"sqlite:///{tmp_path / 'paused.db'}"
    confirm = start_forked(cli_zygote, ["study", "confirm", str(study), "--picks", "0", "--repeats", "2"],
                           zygote_env(), tmp_path, tmp_path / "confirm.log")
    try:
        logs = list((tmp_path / "work" / "confirm").glob("*/0-baseline/server.log"))
        deadline = time.monotonic() + 120
        while not logs and time.monotonic() < deadline:
            time.sleep(0.02)
            logs = list((tmp_path / "work" / "confirm").glob("*/0-baseline/server.log"))
        assert logs, "the confirmation's first baseline never launched"
    except BaseException:
        finish(confirm)
        raise
    out = pause_during_single_requests(confirm, logs[0])
    assert confirm.returncode == 0 and "Traceback" not in out, out
    assert "the tuner itself stood still for" in out and "measuring it again" in out, out
    cstudy = optuna.load_study(study_name="paused.confirm", storage=storage)
    measured = [t for t in cstudy.trials if t.user_attrs.get("status") == "measured"]
    # both rounds complete (baseline and trial 0 each), none of them read with the pause in it
    assert sorted((t.user_attrs["round"], str(t.user_attrs["candidate"])) for t in measured) == [
        (0, "0"), (0, "baseline"), (1, "0"), (1, "baseline")], [t.user_attrs for t in cstudy.trials]
    for t in measured:
        suite = json.loads(Path(t.user_attrs["suite_json"]).read_text())
        waits = [r["end_s"] - r["start_s"] - (r["server_latency_s"] or 0)
                 for r in suite["records"] if r["ok"]]
        assert max(waits) < 2.0, (t.number, max(waits))
    assert not list((tmp_path / "work" / "servers").glob("*.json"))


# -- a server that exits 0 once ready, or winds down after its socket is gone ------------------------

EXITS = {"1-1-2": None, "2-1-3": "exit_ready", "3-1-4": "linger_ready", "4-1-5": "linger_generate"}


def test_a_server_that_exits_after_it_was_ready_fails_as_crash_after_ready(tmp_path, cli_zygote):
    """Not ``other``, not "another process holds port" (QA: a server exiting 0 right after its
    health answer was taken for a stranger on its port), not "server still running, no known
    failure" (QA: a server whose socket closed a moment before its process exited)."""
    from support.standin_exits import exits_python

    from test_study_faults import write_study as faults_study

    study = faults_study(tmp_path, {k: (m, None) for k, m in EXITS.items()})
    text = study.read_text()
    standin = f"python: {tmp_path / 'python-standin'}"
    study.write_text(text.replace(standin, f"python: {exits_python(tmp_path)}"))
    run = cli_zygote.run(TUNER_CLI, ["study", "run", str(study)], env=zygote_env(), cwd=tmp_path,
                         timeout=600)
    assert run.returncode == 0 and "Traceback" not in run.stdout + run.stderr, run.stdout + run.stderr
    s = optuna.load_study(study_name="faults", storage=f"sqlite:///{tmp_path / 'faults.db'}")
    by_key = {t.user_attrs["effective_key"]: t for t in s.trials}
    assert by_key["1-1-2"].user_attrs["status"] == "measured"
    for key in ("2-1-3", "3-1-4", "4-1-5"):
        attrs = by_key[key].user_attrs
        assert attrs["status"] == "failed" and attrs["failure_class"] == "crash_after_ready", (key, attrs)
        assert "exit code 0 after it was ready" in attrs["failure_message"], (key, attrs["failure_message"])
    assert not list((tmp_path / "faults" / "servers").glob("*.json"))
