"""`tuner study compare A B -o page.html | head -1`: the page asked for is written whatever becomes of
stdout -- a reader that stops early (compare only reads: exit 0) or a full disk under it (exit 1,
one line) -- as it is written before the tables are printed (tuner/cli/study_compare.py). Real
processes, a real pipe whose reading end is closed before the command prints, a real /dev/full.

QA (qa172): `tuner study compare A.yaml B.yaml -o cmp.html | head -1` exited 0 and wrote no page:
the tables came first and the closed pipe ended the command before the page.
"""

import os
import subprocess
import sys

import pytest
from support.model_study import make_model_study


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cmppage")
    make_model_study(folder, "cmpa", n_trials=None)  # created, never run: compared all the same
    return folder


def _compare(folder, page, stdout):
    return subprocess.Popen([sys.executable, "-m", "tuner", "study", "compare", "cmpa.yaml", "cmpa.yaml",
                             "-o", str(page)], cwd=folder, stdin=subprocess.DEVNULL, stdout=stdout,
                            stderr=subprocess.PIPE)


def test_a_closed_pipe_does_not_cost_the_page(folder, tmp_path):
    page = tmp_path / "cmp.html"
    run = _compare(folder, page, subprocess.PIPE)
    run.stdout.close()  # the reader is gone before the first line
    _, err = run.communicate(timeout=300)
    assert run.returncode == 0, err
    assert page.read_text().lstrip().lower().startswith("<!doctype html"), err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_under_stdout_does_not_cost_the_page(folder, tmp_path):
    page = tmp_path / "cmp.html"
    with open("/dev/full", "w") as full:
        run = _compare(folder, page, full)
        _, err = run.communicate(timeout=300)
    assert err.decode().splitlines() == ["error: cannot write standard output: No space left on device"], err
    assert run.returncode == 1
    assert page.read_text().lstrip().lower().startswith("<!doctype html")
