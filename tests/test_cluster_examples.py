"""The Slurm batch script and the Kubernetes Indexed Job in examples/ run the worker command the
README documents, with the storage URL from the environment (TUNER_STORAGE), and the tuner's own
command line accepts that command."""

import re
import shlex
import subprocess
from pathlib import Path

import yaml

from tuner.cli import cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
SLURM = ROOT / "examples" / "slurm" / "tuner-workers.sbatch"
K8S = ROOT / "examples" / "kubernetes" / "tuner-workers.yaml"


def documented_command() -> list[str]:
    """The worker command of the README's cluster section (the line after `# every node:`)."""
    section = README.split("### On a cluster: Slurm and Kubernetes")[1].split("\n## ")[0]
    line = re.search(r"^(tuner study run --study \S+ .*)$", section, re.M).group(1)
    assert "TUNER_STORAGE" in section
    return shlex.split(line)


def _worker_argv(shell_text: str) -> list[str]:
    argv = shlex.split(shell_text)
    assert argv[0] == "exec", argv  # the tuner replaces the shell: signals reach it directly
    return argv[1:]


def test_the_documented_command_parses():
    argv = documented_command()
    assert argv[:4] == ["tuner", "study", "run", "--study"]
    ctx = cli.make_context("tuner", argv[1:], resilient_parsing=False)
    study = ctx.command.get_command(ctx, "study")
    sub = study.make_context("study", argv[2:], parent=ctx)
    run = study.get_command(sub, "run")
    params = run.make_context("run", argv[3:], parent=sub).params
    assert params["study_name"] == "kimi-k2.6-tp8" and params["storage"] is None  # from $TUNER_STORAGE
    from tuner.config.study import parse_duration

    assert parse_duration(params["timeout"]) == 7.5 * 3600


def test_slurm_script_runs_one_documented_worker_per_node():
    text = SLURM.read_text()
    assert subprocess.run(["bash", "-n", str(SLURM)], capture_output=True).returncode == 0
    directives = dict(re.findall(r"^#SBATCH --([a-z-]+)(?:=(\S+))?", text, re.M))
    assert directives["ntasks-per-node"] == "1" and int(directives["nodes"]) >= 2
    assert directives["gpus-per-node"] == "8" and "time" in directives
    srun = re.search(r"^srun .*?bash -c '([^']+)'", text, re.M | re.S)
    assert srun, "no srun line"
    assert "--ntasks-per-node=1" in srun.group(0)
    assert _worker_argv(srun.group(1)) == documented_command()
    assert re.search(r'^: "\$\{TUNER_STORAGE:\?', text, re.M) and "export TUNER_STORAGE" in text
    assert "postgresql://" not in re.sub(r"#.*|\$\{TUNER_STORAGE:\?[^}]*\}", "", text)  # no URL outside comments


def test_kubernetes_indexed_job_runs_the_documented_worker():
    docs = [d for d in yaml.safe_load_all(K8S.read_text()) if d]
    [job] = [d for d in docs if d["kind"] == "Job"]
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"] >= 2
    pod = spec["template"]["spec"]
    [container] = pod["containers"]
    assert container["command"][:2] == ["sh", "-c"]
    assert _worker_argv(container["command"][2]) == documented_command()
    env = {e["name"]: e for e in container["env"]}
    assert env["TUNER_STORAGE"]["valueFrom"]["secretKeyRef"]["key"] == "url"
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 8
    assert pod["terminationGracePeriodSeconds"] > 60  # the study's server.stop_grace_s
