"""`tuner study export -o FILE` and `tuner study report -o FILE --png DIR` onto a disk that filled
since their last good output (QA qa96): one line naming what could not be written, exit 1, and the
earlier files kept whole (tuner/results/report.py, tuner/config/files.py). QA: `report --png DIR`
said `error: cannot write: No space left on device`, naming nothing (Pillow's PNG close on a full
disk carries no file name).

A real tmpfs, filled to its last byte: it needs root, as CI has (without it the test fails saying
so, rather than skipping).
"""

import os
import subprocess
import sys

import pytest
from support.faults import disk_trouble
from support.model_study import model_study_yaml

TUNER = [sys.executable, "-m", "tuner", "study"]


def tuner(*argv, cwd):
    return subprocess.run([*TUNER, *argv], capture_output=True, text=True, cwd=cwd, timeout=600)


def test_export_and_report_onto_a_full_disk_keep_the_good_files(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("this test mounts a tmpfs and fills it: run it as root (CI does)")
    (tmp_path / "full.yaml").write_text(model_study_yaml("full", "sqlite:///full.db", 3, noise=0.02, seed=1))
    assert tuner("run", "full.yaml", cwd=tmp_path).returncode == 0
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(disk)], capture_output=True,
                          text=True)
    assert done.returncode == 0, f"mount tmpfs failed as root: {done.stderr.strip()}"
    try:
        best, page, pngs = disk / "best.yaml", disk / "report.html", disk / "pngs"
        assert tuner("export", "full.yaml", "--pick", "knee", "-o", str(best), cwd=tmp_path).returncode == 0
        assert tuner("report", "full.yaml", "-o", str(page), "--png", str(pngs), cwd=tmp_path).returncode == 0
        before = {p: p.read_bytes() for p in [best, page, *pngs.iterdir()]}
        disk_trouble(disk)
        for argv, what in ((["export", "full.yaml", "--pick", "single", "-o", str(best)], best),
                           (["report", "full.yaml", "-o", str(page), "--png", str(pngs)], pngs)):
            done = tuner(*argv, cwd=tmp_path)
            assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
            lines = done.stderr.strip().splitlines()
            assert lines == [f"error: cannot write {what}: No space left on device"], lines
        after = {p: p.read_bytes() for p in [best, page, *pngs.iterdir()]}
        assert after == before, "an earlier good output was changed"
        assert sorted(os.listdir(disk)) == sorted([".filler", "best.yaml", "report.html", "pngs"])
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)
