"""`tuner launch --print` (and every printed server command) gives it as one printable line that bash
splits back into the launch's exact argv (tuner.server.command.format_command). QA (qa200):
it was ``shlex.join``'s, which wrote a value's ESC raw to the terminal (a control sequence) and a line
break as a second line; `export --print-command` had the same and was mended first."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from click.testing import CliRunner

from tuner.cli import cli
from tuner.server.command import format_command

ROOT = Path(__file__).resolve().parents[2]
ODD = {"weight_version": "a\x1b[31mb", "file_storage_path": "x\ny", "served_model_name": "代码 model"}


def _bash_words(line: str) -> list[str]:
    out = subprocess.run(["bash", "-c", f"printf '%s\\0' {line}"], capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.decode("utf-8").split("\0")[:-1]


def test_format_command_is_one_printable_line_bash_splits_back():
    argv = ["python", "-m", "sglang.launch_server", "--weight-version", "a\x1b[31mb", "--x", "x\ny",
            "--name", "代码 model", "--sep", "a\u2028b", "--quote", "it's $HOME `id` \\n"]
    line = format_command(argv)
    assert line.isprintable() and "\n" not in line and "代码 model" in line
    assert _bash_words(line) == argv


def test_launch_print_shows_odd_values_printably(tmp_path):
    study = {"name": "t", "search_space": str(ROOT / "search_spaces" / "eagle3.yaml"),
             "server": {"backend": "sim", "model_path": "org/model", "draft_model_path": "org/draft",
                        "args": ODD},
             "bench": {"suite": "quick"}}
    path = tmp_path / "study.yaml"
    path.write_text(json.dumps(study))
    for args in (["launch", str(path), "--baseline", "--print"],
                 ["launch", str(path), "--num-steps", "3", "--topk", "1", "--draft-tokens", "4", "--print"]):
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 0, r.output
        line, = r.stdout.splitlines()
        assert line.isprintable(), line
        words = _bash_words(line)
        for flag, value in (("--weight-version", ODD["weight_version"]), ("--file-storage-path", "x\ny"),
                            ("--served-model-name", "代码 model")):
            assert words[words.index(flag) + 1] == value, words
