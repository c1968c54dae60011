"""A warning every launch of a study gives (a decode CUDA-graph size below the top benchmark level) is
said once by the commands that build many launches without running them.

QA (qa226): ``tuner doctor`` printed the warning 11 times, bare, before its checks (one per command
line it checks), then "10 of 10 checks pass"; ``tuner study run --dry-run`` printed it before every
command. Now doctor's ``sglang arguments`` check warns with it once, and the dry run says it once in
its header.
"""

from __future__ import annotations

import yaml

from support.cli_in_process import tuner_here

WARNING = "the largest decode CUDA-graph batch, 8"


def _study(tmp_path, bs: list[int]):
    assert tuner_here("study", "init", "s.yaml", cwd=tmp_path).exit_code == 0
    doc = yaml.safe_load((tmp_path / "s.yaml").read_text())
    doc.setdefault("server", {}).setdefault("args", {})["cuda_graph_bs_decode"] = bs
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))


def test_doctor_and_the_dry_run_say_a_launch_warning_once(tmp_path):
    _study(tmp_path, [1, 2, 4, 8])
    doctor = tuner_here("doctor", "s.yaml", cwd=tmp_path)
    assert doctor.exit_code == 0, doctor.output
    assert doctor.output.count(WARNING) == 1, doctor.output
    (line,) = [ln for ln in doctor.stdout.splitlines() if WARNING in ln]
    assert line.startswith("warn  sglang arguments: ") and "but every launch: " in line, line
    assert "give sizes up to 32" in line, line

    dry = tuner_here("study", "run", "s.yaml", "--dry-run", cwd=tmp_path)
    assert dry.exit_code == 0, dry.output
    assert dry.output.count(WARNING) == 1, dry.output
    header = dry.stdout.splitlines()
    at = next(i for i, ln in enumerate(header) if WARNING in ln)
    assert header[at].startswith("# warning, every launch: "), header[at]
    assert at < next(i for i, ln in enumerate(header) if ln.startswith("# baseline")), dry.stdout
    assert not (tmp_path / "s.db").exists()  # a dry run writes nothing


def test_sizes_that_cover_the_top_level_leave_the_check_passing(tmp_path):
    _study(tmp_path, [1, 8, 32])
    doctor = tuner_here("doctor", "s.yaml", cwd=tmp_path)
    assert doctor.exit_code == 0, doctor.output
    assert "pass  sglang arguments: " in doctor.stdout and "every launch" not in doctor.output, doctor.output
