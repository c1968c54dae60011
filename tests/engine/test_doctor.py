"""`tuner doctor`: the demo study passes; each broken precondition gives one clear failing line."""

import contextlib
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from click.testing import CliRunner
from support.demo_study import DEMO, demo_study

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.engine import doctor
from tuner.engine.doctor import FAIL, PASS, run_checks

ROOT = Path(__file__).resolve().parents[2]


def tuner_process(*args, **kw):
    return subprocess.run([sys.executable, "-m", "tuner", *args], capture_output=True, text=True, timeout=120, **kw)


#: The interpreter check's answers (its real subprocess's), by argv, environment and folder.
_PROBED: dict = {}


@contextlib.contextmanager
def interpreter_probed_once():
    """The interpreter check's probe (``PYTHON -c "import tuner, tuner.sim.server, ..."``, a real
    subprocess that imports the simulator's aiohttp server: about 0.6 CPU s each) runs once per test
    process for one argv, environment (the probe's whole, less pytest's PYTEST_CURRENT_TEST, which
    names the test) and working folder, and its answer is reused: a dozen tests of other checks ran
    it again each, for the same answer. A study naming another interpreter (``server.python``) is
    another argv, probed afresh; every other subprocess runs as it is."""
    real = doctor._run

    def run(argv, timeout=120.0, env=None):
        if len(argv) != 3 or argv[1] != "-c" or not argv[2].startswith("import "):
            return real(argv, timeout, env)
        seen = {k: v for k, v in {**os.environ, **(env or {})}.items() if k != "PYTEST_CURRENT_TEST"}
        key = (tuple(argv), tuple(sorted(seen.items())), os.getcwd())
        if key not in _PROBED:
            _PROBED[key] = real(argv, timeout, env)
        return _PROBED[key]

    with mock.patch.object(doctor, "_run", run):
        yield


def tuner(*args):
    """``tuner ARGS`` in this process (click's runner): the same exit code, stdout and stderr as
    :func:`tuner_process` without a new interpreter's imports, for tests that read what a command
    says; the checks' own subprocesses (the interpreter probe, once: :func:`interpreter_probed_once`;
    SGLang's parser) still run. An exception escaping the command fails the test, as a traceback
    would."""
    with interpreter_probed_once():
        r = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return subprocess.CompletedProcess(list(args), r.exit_code, r.stdout, r.stderr)


def study(tmp_path: Path, **changes) -> Path:
    return demo_study(tmp_path, **changes)


def only_failure(path: Path):
    with interpreter_probed_once():
        checks = run_checks(load_study(path))
    failed = [c for c in checks if c.status == FAIL]
    assert len(failed) == 1, [c.line() for c in checks]
    return failed[0]


def test_demo_study_passes_every_check():
    r = tuner_process("doctor", str(DEMO), cwd=ROOT)  # the command as a user runs it, a real process
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert all(line.startswith("pass") for line in lines[:-1]), r.stdout
    assert lines[-1] == f"{len(lines) - 1} of {len(lines) - 1} checks pass"
    assert "attention backend fa3" in r.stdout  # the K2.6 profile is MLA on Hopper
    assert not (ROOT / "studies" / "sim-demo" / "doctor").exists()


def test_broken_precondition_is_one_line_and_exit_1(tmp_path):
    r = tuner("doctor", str(study(tmp_path, **{"server.python": str(tmp_path / "no-python")})))
    assert r.returncode == 1
    fails = [line for line in r.stdout.splitlines() if line.startswith("fail")]
    assert len(fails) == 1 and "interpreter" in fails[0] and "set server.python" in fails[0]
    assert r.stdout.splitlines()[-1] == "1 of 10 checks fail"


def test_an_interpreter_that_imports_tuner_without_its_dependencies_fails(tmp_path):
    # A bare venv that finds this checkout's tuner (a .pth) but none of its dependencies: `import
    # tuner` works there, the simulated server (aiohttp) would not start.
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    Path(site, "checkout.pth").write_text(f"{ROOT}\n")
    assert subprocess.run([str(python), "-c", "import tuner"], timeout=60).returncode == 0
    r = tuner("doctor", str(study(tmp_path, **{"server.python": str(python)})))
    assert r.returncode == 1, r.stdout
    fails = [line for line in r.stdout.splitlines() if line.startswith("fail")]
    assert len(fails) == 1 and fails[0].startswith("fail  interpreter:"), r.stdout
    assert "aiohttp" in fails[0] and "set server.python" in fails[0], fails[0]


def test_bad_study_file_is_one_failing_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nserver: {backend: sim}\n")
    r = tuner("doctor", str(path))
    assert r.returncode == 1 and r.stdout.count("\n") == 1 and r.stdout.startswith("fail  study file:")


def test_stated_facts_that_contradict_the_model(tmp_path):
    c = only_failure(study(tmp_path, **{"server.facts": {"model_attention": "mha"}}))
    assert c.name == "model and GPU" and "says mha" in c.message and "says mla" in c.message


def test_an_attention_backend_that_does_not_start_on_the_gpus_fails_as_create_refuses_it(tmp_path):
    # QA: doctor passed every check on a study `study create` refuses (trtllm_mla is Blackwell-only;
    # the demo's profile is Hopper).
    path = study(tmp_path, **{"server.args": {"attention_backend": "trtllm_mla"}})
    c = only_failure(path)
    assert c.name == "model and GPU", c.line()
    assert "attention backend trtllm_mla does not start for the model on sm90" in c.message, c.message
    created = tuner("study", "create", str(path))
    refusal = c.message.split("server.args: ", 1)[1]
    assert created.returncode == 2 and refusal in created.stderr, created.stderr
    # `tuner doctor FILE` names the file, as create does (it said "study: server.args: ...")
    r = tuner("doctor", str(path))
    line = next(x for x in r.stdout.splitlines() if x.startswith("fail"))
    assert r.returncode == 1 and f"{path}: server.args: attention backend trtllm_mla" in line, r.stdout


def test_an_unreadable_model_config_is_named_with_the_study_file(tmp_path):
    # The facts come from a lower layer that knows no path; doctor said "study: server.model_path".
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{not json")
    path = study(tmp_path, **{"server.backend": "sglang", "server.model_path": str(model),
                              "server.draft_model_path": str(model)})
    r = tuner("doctor", str(path))
    line = next(x for x in r.stdout.splitlines() if x.startswith("fail  model and GPU"))
    want = f"{path}: server.model_path: {model / 'config.json'}: not a readable JSON"
    assert r.returncode == 1 and want in line, r.stdout


def test_arguments_the_server_refuses(tmp_path):
    c = only_failure(study(tmp_path, **{"server.extra_args": ["--no-such-flag"]}))
    assert c.name == "sglang arguments" and "refuses" in c.message


def test_port_in_use(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        c = only_failure(study(tmp_path, **{"server.port": s.getsockname()[1]}))
    assert c.name == "port" and "in use" in c.message and "server.port" in c.message


def test_storage_unreachable_and_password_never_printed(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    c = only_failure(study(tmp_path, storage=f"sqlite:///{blocker}/sub/demo.db"))
    assert c.name == "storage"
    # QA: a folder that does not exist passed, and create then failed (SQLite makes no folders)
    c = only_failure(study(tmp_path, storage=f"sqlite:///{tmp_path}/no/such/demo.db"))
    assert c.name == "storage" and f"folder {tmp_path}/no/such does not exist" in c.message
    pytest.importorskip("psycopg2", reason="the postgres extra is part of dev")
    with socket.socket() as s:  # a free port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = only_failure(study(tmp_path, storage=f"postgresql://tuner:s3cret-pw@127.0.0.1:{port}/db"))
    assert c.name == "storage" and "s3cret-pw" not in c.line() and "***" in c.line()


def test_storage_check_writes_nothing(tmp_path):
    path = study(tmp_path)
    assert only_failure_free(path)
    assert not (tmp_path / "demo.db").exists() and not (tmp_path / "work").exists()


def only_failure_free(path: Path) -> bool:
    return all(c.status == PASS for c in run_checks(load_study(path), cheap_only=True))


def test_workdir_not_writable(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    c = only_failure(study(tmp_path, workdir=str(blocker / "work")))
    assert c.name == "workdir"


def test_objectives_the_suite_does_not_measure(tmp_path):
    # Refused when the study file loads (tuner.config.study), so doctor says it in its one study-file line.
    r = tuner("doctor", str(study(tmp_path, objectives=["single_speedup", "speedup@64"])))
    assert r.returncode == 1 and r.stdout.count("\n") == 1, r.stdout
    assert r.stdout.startswith("fail  study file:") and "objectives: speedup@64" in r.stdout
    assert "never measures concurrency 64" in r.stdout


def _fake_nvidia_smi(tmp_path: Path, lines: str) -> dict:
    # The one fake: this machine has no GPU. nvidia-smi's CSV form as --query-gpu prints it.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "nvidia-smi"
    exe.write_text(f"#!/bin/sh\ncat <<'EOF'\n{lines}\nEOF\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_gpus_fewer_than_tp_size_and_model_files_missing(tmp_path, monkeypatch):
    env = _fake_nvidia_smi(tmp_path, "NVIDIA H100 80GB HBM3, 9.0, 81559, 81000\nNVIDIA H100 80GB HBM3, 9.0, 81559, 81000")
    monkeypatch.setenv("PATH", env["PATH"])
    config = load_study(study(tmp_path, **{"server.backend": "sglang", "server.model_path": str(tmp_path / "k26"),
                                           "server.draft_model_path": str(tmp_path / "draft")}))
    c = doctor.check_gpus(config)
    assert c.status == FAIL and "2 GPU(s) visible, tp_size is 8" in c.message
    c = doctor.check_model_files(config)
    assert c.status == FAIL and "no config.json" in c.message and "k26" in c.message
    (tmp_path / "k26").mkdir()
    (tmp_path / "k26" / "config.json").write_text('{"architectures": ["KimiK25ForConditionalGeneration"]}')
    (tmp_path / "draft").mkdir()
    (tmp_path / "draft" / "config.json").write_text('{"architectures": ["LlamaForCausalLMEagle3"]}')
    assert doctor.check_model_files(config).status == PASS
    # and the facts: an MLA target on Hopper (from nvidia-smi) gets fa3
    checks = {c.name: c for c in run_checks(config)}
    assert "attention backend fa3" in checks["model and GPU"].message
    # this interpreter has no sglang: one failing line, and the argument check says it did not run
    assert checks["interpreter"].status == FAIL and "cannot import sglang" in checks["interpreter"].message
    assert checks["sglang arguments"].status == "warn" and "not run" in checks["sglang arguments"].message


def test_study_run_stops_on_a_failed_cheap_check_before_writing(tmp_path):
    # An SGLang study on a node without the model files (nor GPUs: this machine has none).
    r = tuner("study", "run", str(study(tmp_path, **{"server.backend": "sglang",
                                                      "server.model_path": str(tmp_path / "no-model"),
                                                      "server.draft_model_path": str(tmp_path / "no-draft")})))
    assert r.returncode == 1
    assert "error: fail  model files: no config.json for server.model_path" in r.stderr
    assert "tuner doctor STUDY.yaml runs every check" in r.stderr
    assert not (tmp_path / "demo.db").exists() and not (tmp_path / "demo").exists()


def test_a_workdir_that_is_a_file(tmp_path):
    (tmp_path / "afile").write_text("x")
    c = only_failure(study(tmp_path, workdir=str(tmp_path / "afile")))
    assert c.name == "workdir" and "is a file" in c.message


def test_a_model_backend_study_needs_no_server_gpu_or_files(tmp_path):
    path = study(tmp_path, **{"server.backend": "model", "server.model": {"profile": "k2.6-tp8-pcie", "seed": 1}})
    r = tuner("doctor", str(path))
    assert r.returncode == 0, r.stdout + r.stderr
    for name in ("interpreter", "gpus", "model files", "port", "sglang arguments"):
        line = next(x for x in r.stdout.splitlines() if x.startswith(f"pass  {name}:"))
        assert "backend model launches no server" in line, line
    assert "attention backend fa3" in r.stdout  # the profile's facts: MLA on Hopper


def test_a_postgres_that_may_lose_acknowledged_commits_warns(tmp_path, pg_cluster):
    # The test cluster runs with fsync and synchronous_commit off (tests/support/pg.py): fast, and a
    # crash may lose commits it acknowledged (QA: a trial row vanished after an immediate stop).
    # fsync is the server's alone; synchronous_commit every tuner session sets on for itself
    # (tuner.engine.storage), so only fsync is named.
    from tuner.engine.doctor import WARN, check_storage

    c = check_storage(load_study(study(tmp_path, storage=pg_cluster.database())))
    assert c.status == WARN and "fsync=off" in c.message and "synchronous_commit" not in c.message, c
    assert "postgresql.conf" in c.message and "s3cret" not in c.message


def test_a_write_under_way_is_no_outage_for_study_runs_check(tmp_path):
    # Left alone in stop 57: study run's check probed an SQLite file's write lock without waiting, so
    # another worker's write at that moment (milliseconds) was warned of as "does not answer now"
    import sqlite3
    import threading

    from tuner.engine.doctor import PASS, WARN, check_storage

    config = load_study(study(tmp_path, storage=f"sqlite:///{tmp_path / 's.db'}"))
    sqlite3.connect(tmp_path / "s.db").close()
    writer = sqlite3.connect(tmp_path / "s.db", isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")  # the other worker's write
    done = threading.Timer(0.05, writer.execute, ("COMMIT",))
    done.start()
    try:
        assert check_storage(config, outage_ok=True).status == PASS
    finally:
        done.join()
    writer.execute("BEGIN IMMEDIATE")  # one that stays: warned of, and the run waits it out
    try:
        c = check_storage(config, outage_ok=True)
        assert c.status == WARN and "does not answer now; the run waits for it" in c.message, c
    finally:
        writer.execute("COMMIT")
        writer.close()


def test_study_run_checks_the_free_space_of_the_workdir_it_uses(tmp_path):
    """`tuner study run --workdir DIR` checks DIR's disk, not the study file's workdir's (QA: the
    free-space check read the file's: a --workdir on a full disk passed, and one on a roomy disk was
    refused for the file's being full). A real 600 KiB tmpfs, mounted in a namespace of the run's own
    (unshare -rm): under doctor's 1 GiB."""
    from support.model_study import model_study_yaml

    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"no user and mount namespaces here (unshare -rm: {probe.stderr.strip()[:200]})")
    small = tmp_path / "small"
    small.mkdir()
    text = model_study_yaml("space", "sqlite:///space.db", 1, noise=0.01, seed=1)
    (tmp_path / "roomy.yaml").write_text(text)  # its workdir: space/ beside it, on the roomy disk
    (tmp_path / "full.yaml").write_text(text + f"workdir: {small / 'wd'}\n")
    mount = f"mount -t tmpfs -o size=600k none {small}"

    def run(study_file: str, workdir: Path) -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "tuner", "study", "run", study_file, "--workdir", str(workdir)]
        return subprocess.run(["unshare", "-rm", "sh", "-c", f'{mount} && exec "$@"', "sh", *argv],
                              capture_output=True, text=True, timeout=240, cwd=tmp_path)

    refused = run("roomy.yaml", small / "wd")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert f"error: fail  workdir: {small / 'wd'}: only 0.0 GiB free" in refused.stderr, refused.stderr
    assert not (tmp_path / "space.db").exists()  # refused before anything was written
    ran = run("full.yaml", tmp_path / "roomy-wd")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "done: 1 measured" in ran.stdout and (tmp_path / "roomy-wd" / "journal").is_dir()


@pytest.mark.parametrize("value, fails", [("0", False), ("2e9", True), ("-1", True), ("nan", True), ("a lot", True)])
def test_the_least_free_space_may_be_set_from_the_environment(tmp_path, monkeypatch, value, fails):
    monkeypatch.setenv("TUNER_MIN_FREE_GIB", value)
    (check,) = [c for c in run_checks(load_study(study(tmp_path)), cheap_only=True) if c.name == "workdir"]
    assert (check.status == FAIL) == fails, check.line()
    if value == "2e9":  # a number: the disk's free space against it
        assert "GiB free; server logs need room" in check.message, check.line()
    elif fails:
        assert "TUNER_MIN_FREE_GIB" in check.message and "not a number of GiB >= 0" in check.message, check.line()
