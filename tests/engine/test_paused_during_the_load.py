"""A worker of another node frozen with its server (SIGSTOP, the whole node: the tuner and the
server's group) while the server loads, past the heartbeat's grace, on one PostgreSQL study.

The other worker fails its trial as dead and queues the setting again. Woken, the frozen worker
used to wait for its server, run the whole suite of that setting (the stall watch spares a pause
during the load: it distorts no figure) and store it as a new trial (``replayed_from``): the setting
measured by two workers, at once when the retry ran meanwhile, one launch past the budget (QA,
qa223); frozen during the baseline's load, it measured the baseline again after the other worker
had, and stored it as the study's. It now reads its trial back once the server is ready, before the
first request, and steps aside, saying why; nothing is measured or written (the baseline: it uses
the other worker's). Real parts: PostgreSQL (tests/support/pg.py),
forked ``tuner study run`` workers (tests/support/forked_tuner.py), their simulators, real
SIGSTOP/SIGCONT; the frozen worker under another hostname (a private UTS namespace), so the other
can judge it only by its heartbeat, as a worker of another node."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import optuna
import pytest
from sqlalchemy.pool import NullPool
from support.faults import fault_env, slow_start, study_file, wait_for
from support.forked_tuner import start_forked, start_zygote_under
from support.processes import finish
from support.zygote import CLI_PRELOAD

from tuner.engine.storage import driver_url

NODE_B = ["unshare", "--uts", "sh", "-c", 'hostname node-b && exec "$@"', "sh"]


def trial_state(storage, name: str, number: int) -> str | None:
    trials = storage.get_all_trials(storage.get_study_id_from_name(name), deepcopy=False)
    return trials[number].state.name if len(trials) > number else None


def launched(workdir, label: str):
    """The record of the server of ``label`` (``baseline``, or a trial's number) of ``workdir``, once
    it is on disk (its launch begun)."""
    for path in (workdir / "servers").glob("*.json"):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if Path(record.get("log_path", "")).parent.name == label:
            return record
    return None


@pytest.mark.parametrize("label", ["0", "baseline"])
def test_a_worker_frozen_while_its_server_loads_steps_aside_before_the_suite(pg_url, tmp_path, label):
    probe = subprocess.run([*NODE_B, "true"], capture_output=True, timeout=30)
    if probe.returncode != 0:  # util-linux's unshare, as root (.ci/setup-system installs it)
        pytest.fail(f"no UTS namespace here: {probe.stderr.decode().strip()[:200]}", pytrace=False)
    study = study_file(tmp_path, "loadpause", budget=4)
    # every server starts 3 s late while the mark exists (A's baseline too): the moment to freeze A
    # is inside its trial's load
    mark = slow_start(study, 3)
    env = fault_env(TUNER_STORAGE=pg_url, TUNER_STALL_S="5")
    zygotes = [start_zygote_under(NODE_B, CLI_PRELOAD, env, tmp_path),
               start_zygote_under([], CLI_PRELOAD, env, tmp_path)]
    a = b = None
    frozen: list[int] = []
    watch = optuna.storages.RDBStorage(driver_url(pg_url), engine_kwargs={"poolclass": NullPool})
    try:
        mark.touch()
        a = start_forked(zygotes[0], ["study", "run", str(study), "--workdir", "wa"], env, tmp_path,
                         tmp_path / "a.log")
        record = wait_for(lambda: launched(tmp_path / "wa", label), 120, f"A's {label} to launch", [a])
        # the node freezes: the tuner, and its server's group (still in the wrapper's sleep, its load)
        os.kill(a.pid, signal.SIGSTOP)
        os.killpg(record["pgid"], signal.SIGSTOP)
        frozen = [a.pid]
        mark.unlink()  # B's servers start at once
        b = start_forked(zygotes[1], ["study", "run", str(study), "--workdir", "wb"], env, tmp_path,
                         tmp_path / "b.log")
        name = "loadpause" + (".baseline" if label == "baseline" else "")
        wait_for(lambda: trial_state(watch, name, 0) == "FAIL", 120, f"B to fail A's {label} as dead", [b])
        os.killpg(record["pgid"], signal.SIGCONT)
        os.kill(a.pid, signal.SIGCONT)
        frozen = []
        assert a.wait(timeout=300) == 0, (tmp_path / "a.log").read_text()
        assert b.wait(timeout=300) == 0, (tmp_path / "b.log").read_text()
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)
        for p in (a, b):
            if p is not None:
                finish(p)
        for z in zygotes:
            z.close()
        watch.engine.dispose()
    out_a, out_b = (tmp_path / "a.log").read_text(), (tmp_path / "b.log").read_text()
    assert "Traceback" not in out_a + out_b, out_a + out_b
    said = "baseline" if label == "baseline" else "trial 0"
    assert (f"{said}: another worker failed this trial as dead: this worker's heartbeat was older than the "
            "grace period") in out_a, out_a
    assert "stepped aside, its server stopped before the suite (nothing measured)" in out_a, out_a
    folder = "baseline" if label == "baseline" else "trials/0"
    assert not (tmp_path / "wa" / folder / "suite.json").exists()  # no request was sent
    for name, frozen_here in (("loadpause", label == "0"), ("loadpause.baseline", label == "baseline")):
        s = optuna.load_study(study_name=name, storage=driver_url(pg_url))
        assert not [t.number for t in s.trials if t.user_attrs.get("replayed_from") is not None], name
        assert not [t.number for t in s.trials if t.state.name == "RUNNING"], name
        assert s.trials[0].state.name == ("FAIL" if frozen_here else "COMPLETE"), name
    # the baseline measured once: by B when A's was failed as dead
    hosts = [t.user_attrs["worker"]["host"] for t in s.trials if t.state.name == "COMPLETE"]
    assert len(hosts) == 1 and (hosts[0] == "node-b") == (label == "0"), hosts
    s = optuna.load_study(study_name="loadpause", storage=driver_url(pg_url))
    done = [t.user_attrs["effective_key"] for t in s.trials
            if t.state.name == "COMPLETE" and t.user_attrs.get("status") == "measured"]
    assert len(done) == len(set(done)) == 4, done  # the budget, each setting once
    if label == "0":  # the setting of trial 0 measured once, by its retry
        assert s.trials[0].user_attrs["effective_key"] in done
