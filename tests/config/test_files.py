"""Atomic writes (tuner.config.files): a writer SIGKILLed between writing and renaming leaves its
temporary file, and the next write of the same file removes it; a live writer's, or another host's,
is never touched. Through the real `tuner study export`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from click.testing import CliRunner
from support.model_study import make_model_study

from tuner.cli import cli
from tuner.config.files import _prefix, write_text_atomic

KILLED_WRITER = textwrap.dedent("""
    import os, sys, time
    from tuner.config import files
    def stuck(src, dst):  # the moment between writing the temporary file and renaming it
        print("staged", flush=True)
        time.sleep(600)
    files.os.replace = stuck
    files.write_text_atomic(sys.argv[1], "half of an export")
""")


def leftovers(folder, name):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(f".{name}."))


def test_a_killed_export_leaves_nothing_once_the_file_is_written_again(tmp_path):
    study = make_model_study(tmp_path, n_trials=6)
    out = tmp_path / "best.yaml"
    writer = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "staged"
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(timeout=30)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
        writer.stdout.close()
    left = leftovers(tmp_path, "best.yaml")
    assert len(left) == 1 and left[0].startswith(_prefix(out)) and not out.exists()  # what a kill leaves
    live = tmp_path / f"{_prefix(out)}{os.getpid()}-live.tmp"  # a writer still at work
    live.write_text("x")
    other = tmp_path / ".best.yaml.tuner-otherhost-1-x.tmp"  # another node's, in a shared folder
    other.write_text("x")

    r = CliRunner().invoke(cli, ["study", "export", str(study), "--pick", "knee", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_text().startswith("# SGLang server config exported by tuner")
    assert leftovers(tmp_path, "best.yaml") == sorted([live.name, other.name])


def test_a_normal_write_leaves_no_temporary_file(tmp_path):
    write_text_atomic(tmp_path / "a.json", "{}")
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_a_file_name_up_to_name_max_is_written_and_a_killed_writers_leftover_cleaned(tmp_path):
    """QA: `export -o`, `report -o` and `compare -o` with a 245-byte name (a valid name) ended in
    `OSError: File name too long` after the work was done: the temporary file's name, the target's
    plus some 40 bytes, was past NAME_MAX."""
    for name in ("e" * 245 + ".yaml", "ü" * 125 + ".yaml"):  # 250 and 255 bytes
        out = tmp_path / name
        stale = tmp_path / f"{_prefix(out)}999999999-dead.tmp"  # what a dead writer of this host left
        assert len(stale.name.encode()) <= 255
        stale.write_text("x")
        write_text_atomic(out, "whole")
        assert out.read_text() == "whole"
        assert [p.name for p in tmp_path.iterdir()] == [name]  # the leftover removed, no new one
        out.unlink()


def test_export_to_a_long_valid_name(tmp_path):
    study = make_model_study(tmp_path, n_trials=2)
    out = tmp_path / ("e" * 245 + ".yaml")
    r = CliRunner().invoke(cli, ["study", "export", str(study), "--pick", "knee", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_text().startswith("# SGLang server config exported by tuner")
