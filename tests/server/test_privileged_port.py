"""``server.port`` below ``net.ipv4.ip_unprivileged_port_start`` (80, 443) for a user who may not
bind it: the kernel refuses the bind with EACCES, with nothing listening there.

QA (qa157): a non-root user's ``tuner study run`` (and ``tuner doctor``) of a study with
``server.port: 80`` said ``port 80 on 127.0.0.1 is in use by another process``; now the line says
the port is privileged and which ports the user may take. Run in a user namespace (``unshare -r``:
root there, but without CAP_NET_BIND_SERVICE in the machine's network namespace), the kernel refuses
the bind as it does for any non-root user, so the test means the same as root in CI.
"""

import os
import textwrap

import pytest

from support.faults import ROOT
from support.zygote import CLI_PRELOAD, TUNER_CLI, start_zygote_under
from tuner.server.ports import unprivileged_start

STUDY = textwrap.dedent(f"""
    name: p80
    search_space: {ROOT / 'search_spaces' / 'eagle3.yaml'}
    server:
      backend: sim
      model_path: moonshotai/Kimi-K2.6
      draft_model_path: sim/kimi-k2.6-eagle3
      port: {{port}}
      sim: {{{{profile: k2.6-tp8-pcie, speedup: 20, load_seconds: 0.2}}}}
    bench: {{{{suite: quick}}}}
    budget: {{{{n_trials: 1}}}}
""")


@pytest.fixture
def unprivileged(tmp_path):
    """``tuner ARGS`` as a real process in a user namespace (``unshare -r``): a fork of a zygote started
    there, which imported the tuner once for both commands (tests/support/zygote.py)."""
    z = start_zygote_under(["unshare", "--user", "--map-root-user"], CLI_PRELOAD, dict(os.environ), tmp_path)
    yield lambda *args: z.run(TUNER_CLI, list(args), dict(os.environ), tmp_path, timeout=120)
    z.close()


def test_a_privileged_port_is_named_so_not_in_use(tmp_path, unprivileged):
    start = unprivileged_start()
    assert start > 1, "needs ports below net.ipv4.ip_unprivileged_port_start (it is 0 on this machine)"
    port = start - 1
    study = tmp_path / "p80.yaml"
    study.write_text(STUDY.format(port=port))
    doctor = unprivileged("doctor", str(study))
    line = next(ln for ln in doctor.stdout.splitlines() if "port:" in ln)
    assert line.startswith("fail  port:"), doctor.stdout + doctor.stderr
    assert f"port {port} on 127.0.0.1 is a privileged port (below {start}" in line
    assert "in use by another process" not in line

    run = unprivileged("study", "run", str(study))
    assert run.returncode != 0
    errors = [ln for ln in run.stderr.splitlines() if ln.startswith("error:")]
    assert errors == [f"error: port {port} on 127.0.0.1 is a privileged port (below {start}, "
                      f"net.ipv4.ip_unprivileged_port_start), which this user may not bind; set server.port "
                      f"to a port from {start} up, or 0"], run.stderr
    assert "Traceback" not in run.stderr and "in use by another process" not in run.stderr
    assert os.path.isfile(study)
