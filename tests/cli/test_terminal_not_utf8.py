"""A terminal that is not UTF-8: a study whose suite and dataset categories are Hindi and Greek,
read by ``tuner study status`` under ``LC_ALL=C PYTHONUTF8=0`` (Python writes stdout in ASCII; the C
locale is on every machine; ``LANG=en_US.ISO-8859-1`` fails alike), PYTHONIOENCODING unset.

QA (qa157): the status printed its first line, then ended in ``UnicodeEncodeError: 'ascii' codec
can't encode characters`` (a traceback, exit 1, and Python's "You may need to add
PYTHONIOENCODING=utf-8"). Now what the terminal cannot show is escaped (``\\u0939``) and the
command ends as under UTF-8.
"""

import codecs
import json
import os
import subprocess
import sys

from click.testing import CliRunner

from support.faults import ROOT
from tuner.cli import cli
from tuner.cli.streams import ESCAPE, _escape

SUITE = "हिंदी-सूट"
STUDY = f"""
name: hindi
search_space: {ROOT / 'search_spaces' / 'eagle3.yaml'}
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  model: {{profile: k2.6-tp8-pcie, noise: 0.02, seed: 1}}
bench:
  suite:
    name: {SUITE}
    dataset: {{path: data.jsonl}}
    single: {{prompts: 2, repeats: 1}}
    sweep: {{concurrencies: [1, 32]}}
budget: {{n_trials: 1}}
"""


def test_status_under_an_ascii_terminal_escapes_what_it_cannot_show(tmp_path):
    rows = [{"id": f"q{i}", "category": ["हिंदी", "ελληνικά"][i % 2],
             "prompt": "कृपया मुझे भारत के इतिहास के बारे में बताइए। " * (i + 1), "max_tokens": 32} for i in range(4)]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                         encoding="utf-8")
    study = tmp_path / "hindi.yaml"
    study.write_text(STUDY, encoding="utf-8")
    made = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert made.exit_code == 0, made.output

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "LANG", "LANGUAGE")
           and not k.startswith("LC_")}
    env.update(LC_ALL="C", PYTHONUTF8="0")
    done = subprocess.run([sys.executable, "-m", "tuner", "study", "status", str(study)], env=env,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode("ascii", "replace")
    out = done.stdout.decode("ascii")  # ASCII only, as the terminal takes it
    assert SUITE.encode("ascii", "backslashreplace").decode("ascii") in out  # \u0939\u093f...
    assert "\\u03b5\\u03bb\\u03bb" in out and "trials:" in out  # a category, and the lines after it
    assert b"Traceback" not in done.stderr


def test_a_file_names_undecoded_byte_is_written_back_as_that_byte():
    # a folder name's byte the file-system encoding could not read (PEP 383's U+DCE9 for 0xE9) goes
    # out as the byte itself, as surrogateescape writes it; the Hindi letter after it as its escape
    codecs.register_error(ESCAPE, _escape)  # as tuner.cli.main does under such a terminal
    text = "/d/\udce9tudes/\u0939"
    assert text.encode("ascii", ESCAPE) == b"/d/\xe9tudes/\\u0939"
    assert text.encode("latin-1", ESCAPE) == b"/d/\xe9tudes/\\u0939"
