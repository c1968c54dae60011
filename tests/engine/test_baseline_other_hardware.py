"""A second worker joining a study from a node with other GPUs (QA, qa155). The README says every
node must be the same hardware, since every trial is compared with the one baseline; nothing
checked it: a worker on 2 x "NVIDIA H200" ran its trials against a baseline measured on 2 x "NVIDIA
H100 80GB HBM3", and their speedups joined the front. The baseline now records what its server ran
on (what nvidia-smi says of the server's GPUs: name, count, memory, compute capability), and a worker
whose own differs stops before it launches anything, with one line naming both and the fix. A
baseline stored before the facts (an older tuner's) judges nothing.

nvidia-smi is faked as a script early on PATH (the seam: tuner.server.gpus runs it); the worker
is the engine in this process, measuring through the performance model (the node's server is not
what is tested here)."""

from __future__ import annotations

import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

import optuna
import pytest
from support.small_space import small_space

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.backends import ModelBackend
from tuner.engine.baseline import OtherHardware
from tuner.engine.facts import HARDWARE_ATTR, hardware_difference, node_hardware
from tuner.engine.runner import run_study
from tuner.engine.study import BASELINE_SUFFIX, create_study

H100 = ("NVIDIA H100 80GB HBM3", "9.0", 81559)
H200 = ("NVIDIA H200", "9.0", 143771)
A100 = ("NVIDIA A100-SXM4-80GB", "8.0", 81920)

SMI_BODY = """
if sys.argv[1:] == ["topo", "-m"] and LINK:  # every pair over LINK (NV18, or SYS: PCIe across CPUs)
    print("\t" + "\t".join("GPU%d" % i for i in range(len(GPUS))) + "\tCPU Affinity\tNUMA Affinity")
    for i in range(len(GPUS)):
        print("GPU%d\t" % i + "\t".join(" X " if i == j else LINK for j in range(len(GPUS))) + "\t0-31\t0")
    sys.exit(0)
q = [a for a in sys.argv[1:] if a.startswith("--query-gpu=")]
if not q:
    sys.exit(1)  # the rest: not faked
for i, (name, cap, mem) in enumerate(GPUS):
    row = {"index": str(i), "name": name, "compute_cap": cap, "memory.total": str(mem),
           "memory.used": "0", "memory.free": str(mem), "uuid": "GPU-%08d-0000-0000" % i}
    print(", ".join(row[f] for f in q[0].split("=", 1)[1].split(",")))
"""


def fake_nvidia_smi(folder: Path, gpus: list[tuple[str, str, int]], link: str = "") -> Path:
    """A folder holding an ``nvidia-smi`` that lists ``gpus`` (name, compute capability, MiB) and,
    given ``link``, answers ``topo -m`` with it between every two of them."""
    folder.mkdir(parents=True)
    script = folder / "nvidia-smi"
    script.write_text(f"#!{sys.executable}\nimport sys\nGPUS = {gpus!r}\nLINK = {link!r}\n{SMI_BODY}")
    script.chmod(0o755)
    return folder


def on_node(monkeypatch, folder: Path) -> None:
    monkeypatch.setenv("PATH", f"{folder}:{_path}")


_path = __import__("os").environ.get("PATH", "")


def _study(tmp_path: Path, server_more: str = ""):
    """Study ``hw`` on SGLang (two GPUs) in ``tmp_path``, created; the space is a small one: which
    setting a trial runs is not what is tested here, and the shipped one costs each run its CPU."""
    for name, arch in (("model", "LlamaForCausalLM"), ("draft", "LlamaForCausalLMEagle3")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text(json.dumps({"architectures": [arch], "model_type": "llama"}))
    path = tmp_path / "hw.yaml"
    path.write_text(f"""
name: hw
search_space: {small_space(tmp_path)}
storage: sqlite:///{tmp_path / 'hw.db'}
workdir: {tmp_path / 'work'}
server: {{backend: sglang, model_path: {tmp_path / 'model'}, draft_model_path: {tmp_path / 'draft'}, tp_size: 2{server_more}}}
bench: {{suite: quick}}
budget: {{n_trials: 6}}
default_seed_trials: false
""")
    config = load_study(path)
    create_study(config, config.storage)
    return config


def _run(config, **kw):
    backend = ModelBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=1)
    return run_study(config, config.storage, backend, n_trials=1, **kw)


def _counts(config) -> tuple[int, int]:
    storage = optuna.storages.RDBStorage(config.storage)
    try:
        return tuple(len(optuna.load_study(study_name=name, storage=storage).get_trials(deepcopy=False))
                     for name in (config.name, config.name + BASELINE_SUFFIX))
    finally:
        storage.remove_session()


def _baseline_attrs(config) -> dict:
    storage = optuna.storages.RDBStorage(config.storage)
    try:
        trials = optuna.load_study(study_name=config.name + BASELINE_SUFFIX, storage=storage).get_trials()
        return [t for t in trials if t.state == optuna.trial.TrialState.COMPLETE][-1].user_attrs
    finally:
        storage.remove_session()


def test_a_worker_on_other_gpus_stops_before_its_first_launch_naming_both(tmp_path, monkeypatch):
    node_a = fake_nvidia_smi(tmp_path / "node-a", [H100] * 8)
    node_b = fake_nvidia_smi(tmp_path / "node-b", [H200] * 8)
    on_node(monkeypatch, node_a)
    config = _study(tmp_path)
    _run(config)
    assert _baseline_attrs(config)[HARDWARE_ATTR] == {"name": H100[0], "count": 2, "memory_total_mib": 81559,
                                                      "compute_cap": "9.0"}
    before = _counts(config)

    on_node(monkeypatch, node_b)
    with pytest.raises(OtherHardware) as err:
        _run(config)
    line = str(err.value)
    assert "\n" not in line
    assert "2 x NVIDIA H200 (143771 MiB" in line and "2 x NVIDIA H100 80GB HBM3 (81559 MiB" in line, line
    assert "GPU name differs" in line and "--rebaseline" in line and "study of its own" in line, line
    assert _counts(config) == before  # nothing written: no trial asked, no baseline claimed

    # The whole study moved to the H200 node: --rebaseline measures a baseline there, and the
    # H100 node is the one that differs now.
    _run(config, rebaseline=True)
    assert _baseline_attrs(config)[HARDWARE_ATTR]["name"] == H200[0]
    on_node(monkeypatch, node_a)
    with pytest.raises(OtherHardware, match="runs 2 x NVIDIA H100 80GB HBM3 .* measured on .* NVIDIA H200"):
        _run(config)


def test_the_same_gpus_over_pcie_are_not_the_nvlink_node_s(tmp_path, monkeypatch):
    nvl = ("NVIDIA H100 NVL", "9.0", 95830)
    on_node(monkeypatch, fake_nvidia_smi(tmp_path / "node-a", [nvl] * 4, link="NV12"))
    config = _study(tmp_path)
    _run(config)
    assert _baseline_attrs(config)[HARDWARE_ATTR]["interconnect"] == "NVLink"
    before = _counts(config)
    on_node(monkeypatch, fake_nvidia_smi(tmp_path / "node-b", [nvl] * 4, link="SYS"))
    with pytest.raises(OtherHardware, match=r"runs 2 x NVIDIA H100 NVL \(95830 MiB, compute capability 9.0, "
                                            r"PCIe\).* with 2 x NVIDIA H100 NVL \(95830 MiB, compute "
                                            r"capability 9.0, NVLink\): the interconnect differs"):
        _run(config)
    assert _counts(config) == before


def test_the_same_gpus_elsewhere_run_and_a_baseline_without_facts_judges_nothing(tmp_path, monkeypatch):
    node_a = fake_nvidia_smi(tmp_path / "node-a", [H100] * 8)
    # the same GPUs, listed with a few MiB less (another driver's reserve), its other GPUs another kind
    node_c = fake_nvidia_smi(tmp_path / "node-c", [H100[:2] + (81500,)] * 2 + [A100] * 2)
    on_node(monkeypatch, node_a)
    config = _study(tmp_path)
    _run(config)
    on_node(monkeypatch, node_c)
    assert _run(config).measured == 1

    # a baseline an older tuner stored (no facts): an A100 node runs on, as it always did
    with closing(sqlite3.connect(tmp_path / "hw.db")) as db, db:  # what an older tuner's baseline holds
        gone = db.execute("DELETE FROM trial_user_attributes WHERE key = ?", (HARDWARE_ATTR,)).rowcount
    assert gone == 1
    on_node(monkeypatch, fake_nvidia_smi(tmp_path / "node-d", [A100] * 8))
    assert _run(config).measured == 1


def test_the_server_s_own_gpus_are_compared(tmp_path, monkeypatch):
    """The GPUs the server runs on: the first tp_size of its CUDA_VISIBLE_DEVICES (server.env's)."""
    node = fake_nvidia_smi(tmp_path / "node", [A100, A100, H100, H100])
    on_node(monkeypatch, node)
    # GPUs by index on a node of two models: CUDA numbers them as nvidia-smi only in the PCI order
    config = _study(tmp_path, ", env: {CUDA_VISIBLE_DEVICES: '2,3,0', CUDA_DEVICE_ORDER: PCI_BUS_ID}")
    assert node_hardware(config.server, None) == {"name": H100[0], "count": 2, "memory_total_mib": 81559,
                                                  "compute_cap": "9.0"}


@pytest.mark.parametrize("other, what", [
    ({"name": H200[0]}, "GPU name"), ({"count": 4}, "GPU count"), ({"memory_total_mib": 95830}, "GPU memory"),
    ({"compute_cap": "10.0"}, "compute capability"), ({"memory_total_mib": 81000}, None),
    ({"interconnect": "PCIe"}, None)])
def test_each_fact_that_differs_is_named(other, what):
    mine = {"name": H100[0], "count": 2, "memory_total_mib": 81559, "compute_cap": "9.0"}
    assert hardware_difference(mine, {**mine, **other}) == what
    assert hardware_difference(None, {**mine, **other}) is None  # an older tuner's baseline
    assert hardware_difference(mine, None) is None  # nvidia-smi cannot tell here
    # the interconnect is compared when both nodes could tell it
    linked = {**mine, "interconnect": "NVLink"}
    assert hardware_difference(linked, {**mine, **other}) == (what or ("interconnect" if "interconnect" in other
                                                                        else None))
    assert hardware_difference(linked, {**linked, "interconnect": "PCIe"}) == "interconnect"


def test_study_run_says_it_in_one_line_and_exits_non_zero(tmp_path, monkeypatch):
    """`tuner study run --study hw` on the H200 node: one error line, exit 1, no server launched."""
    from support.cli_in_process import tuner_here

    node_a = fake_nvidia_smi(tmp_path / "node-a", [H100] * 8)
    on_node(monkeypatch, node_a)
    config = _study(tmp_path)
    _run(config)
    before = _counts(config)
    on_node(monkeypatch, fake_nvidia_smi(tmp_path / "node-b", [H200] * 2))
    out = tuner_here("study", "run", "--study", "hw", "--storage", config.storage, cwd=tmp_path)
    assert out.exit_code == 1, (out.exit_code, out.output, out.exception)
    errors = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: this node ("), out.stderr
    assert "NVIDIA H200" in errors[0] and "NVIDIA H100 80GB HBM3" in errors[0] and "--rebaseline" in errors[0]
    assert _counts(config) == before
    assert not list((tmp_path / "work").glob("**/server.log"))  # nothing launched


def test_the_simulator_s_gpus_are_its_profile_s_and_the_model_backend_has_none(tmp_path, monkeypatch):
    """sim: the profile's hardware (whatever nvidia-smi the node has); model: nothing to compare."""
    from tuner.config.study import ServerSettings

    on_node(monkeypatch, fake_nvidia_smi(tmp_path / "node", [H200] * 8))
    sim = ServerSettings.model_validate({"backend": "sim", "model_path": "m", "draft_model_path": "d",
                                         "tp_size": 8, "sim": {"profile": "k2.6-tp8-pcie"}})
    hw = node_hardware(sim, None)
    assert hw["name"] == "simulated (k2.6-tp8-pcie)" and hw["count"] == 8 and hw["compute_cap"] == "9.0", hw
    model = ServerSettings.model_validate({"backend": "model", "model_path": "m", "draft_model_path": "d",
                                           "model": {"profile": "k2.6-tp8-pcie"}})
    assert node_hardware(model, None) is None


def test_a_worker_that_waited_for_another_node_s_baseline_judges_it_when_it_lands(url):
    """Node B starts while node A measures the baseline: it waits, then stops on A's hardware, before
    it launches anything (two workers, each its own storage; SQLite and PostgreSQL)."""
    import threading

    from tuner.engine.asktell import tell
    from tuner.engine.baseline import ensure_baseline
    from tuner.engine.records import MEASURED
    from tuner.engine.storage import open_storage
    from tuner.engine.study import create_baseline_study
    from tuner.engine.workers import Worker

    h100 = {"name": H100[0], "count": 2, "memory_total_mib": H100[2], "compute_cap": "9.0"}
    h200 = {"name": H200[0], "count": 2, "memory_total_mib": H200[2], "compute_cap": "9.0"}
    made = optuna.create_study(study_name="w", storage=open_storage(url))
    made.set_user_attr("objectives", ["speedup"])
    create_baseline_study(made)
    a = optuna.load_study(study_name="w", storage=open_storage(url, patient=True))
    b = optuna.load_study(study_name="w", storage=open_storage(url, patient=True))
    b_waits, a_measured, events = threading.Event(), [], []

    def measure(trial, bstudy):  # node A's server: measured once node B is waiting for it
        assert b_waits.wait(60)
        trial.set_user_attr("status", MEASURED)
        trial.set_user_attr("single_tok_per_s", 30.0)
        tell(bstudy, trial, values=[30.0])
        a_measured.append(trial.number)

    node_a = threading.Thread(target=ensure_baseline, daemon=True,
                              args=(a, Worker("node-a", 1, 1), measure, lambda *e: None, False),
                              kwargs={"hardware": lambda: h100})
    node_a.start()

    def emit(kind, info):
        events.append(kind)
        if kind == "waiting":
            b_waits.set()

    def never(trial, bstudy):
        raise AssertionError("node B measured")

    claimed = optuna.load_study(study_name="w" + BASELINE_SUFFIX, storage=b._storage)
    for _ in range(600):  # node A's claim is there
        if claimed.get_trials(deepcopy=False):
            break
        b_waits.wait(0.1)
    with pytest.raises(OtherHardware) as err:
        ensure_baseline(b, Worker("node-b", 2, 2), never, emit, False, hardware=lambda: h200)
    node_a.join(60)
    assert a_measured == [0] and "waiting" in events
    assert "this node (node-b) runs 2 x NVIDIA H200" in str(err.value), err.value
    assert "measured on node-a with 2 x NVIDIA H100 80GB HBM3" in str(err.value), err.value
