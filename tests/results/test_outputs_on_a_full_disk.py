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

import pytest
from support.cli_in_process import tuner_here
from support.faults import disk_trouble
from support.model_study import model_study_yaml


def tuner(*argv, cwd):
    """``tuner study ARGV`` in this process: the commands' files, lines and exit codes are under test,
    not their processes (the model backend starts none), and five Python start-ups cost more CPU than
    the rest of the test."""
    done = tuner_here("study", *argv, cwd=cwd)
    assert done.exit_code == 0 or isinstance(done.exception, SystemExit), done.exc_info  # no traceback
    return done


def test_export_and_report_onto_a_full_disk_keep_the_good_files(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("this test mounts a tmpfs and fills it: run it as root (CI does)")
    (tmp_path / "full.yaml").write_text(model_study_yaml("full", "sqlite:///full.db", 3, noise=0.02, seed=1))
    assert tuner("run", "full.yaml", cwd=tmp_path).exit_code == 0
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(disk)], capture_output=True,
                          text=True)
    assert done.returncode == 0, f"mount tmpfs failed as root: {done.stderr.strip()}"
    try:
        best, page, pngs = disk / "best.yaml", disk / "report.html", disk / "pngs"
        assert tuner("export", "full.yaml", "--pick", "knee", "-o", str(best), cwd=tmp_path).exit_code == 0
        assert tuner("report", "full.yaml", "-o", str(page), "--png", str(pngs), cwd=tmp_path).exit_code == 0
        before = {p: p.read_bytes() for p in [best, page, *pngs.iterdir()]}
        disk_trouble(disk)
        for argv, what in ((["export", "full.yaml", "--pick", "single", "-o", str(best)], best),
                           (["report", "full.yaml", "-o", str(page), "--png", str(pngs)], pngs)):
            done = tuner(*argv, cwd=tmp_path)
            assert done.exit_code == 1 and "Traceback" not in done.stderr, done.stderr
            lines = done.stderr.strip().splitlines()
            assert lines == [f"error: cannot write {what}: No space left on device"], lines
        after = {p: p.read_bytes() for p in [best, page, *pngs.iterdir()]}
        assert after == before, "an earlier good output was changed"
        assert sorted(os.listdir(disk)) == sorted([".filler", "best.yaml", "report.html", "pngs"])
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)
