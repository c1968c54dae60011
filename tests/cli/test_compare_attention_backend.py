"""`tuner study compare` shows each study's attention backend beside the other server facts (the
table's side-by-side rows and the JSON's ``hardware``): the backend decides which settings SGLang
can run and how fast, and compare did not say it (QA: two studies of one model, one on fa3 and
one on flashinfer, read as the same hardware). A study an older tuner made, which stored no
decision, shows the backend its launches ran: its own (``server.args.attention_backend``), else
the pin ``flashinfer`` (:func:`tuner.engine.facts.older_study_backend`), as run and launch use."""

from __future__ import annotations

import json

from click.testing import CliRunner
from support.older_study import created_older_or_newer

from tuner.cli import cli


def _study(tmp_path, name: str, *, older: bool, args: str = ""):
    return created_older_or_newer(tmp_path, name, older=older, args=args)


def test_compare_shows_each_studys_attention_backend(tmp_path):
    new, old = _study(tmp_path, "new", older=False), _study(tmp_path, "old", older=True)
    own = _study(tmp_path, "own", older=True, args="attention_backend: triton")
    r = CliRunner().invoke(cli, ["study", "compare", str(new), str(old), "-f", "json"])
    assert r.exit_code == 0, r.output
    cmp = json.loads(r.stdout)
    assert cmp["a"]["hardware"]["attention_backend"] == "fa3"  # this tuner's decision for the MLA study, stored
    assert cmp["b"]["hardware"]["attention_backend"] == "flashinfer"  # the pin its launches ran
    assert cmp["b"]["hardware"]["attention_decision"] == "not stored (older study): the tuner's pin"
    r = CliRunner().invoke(cli, ["study", "compare", str(own), str(new), "-f", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["a"]["hardware"]["attention_backend"] == "triton"  # its own
    r = CliRunner().invoke(cli, ["study", "compare", str(new), str(old)])
    assert r.exit_code == 0, r.output
    row = next(line for line in r.stdout.splitlines() if "attention backend" in line)
    assert "fa3" in row and "flashinfer (not stored: the tuner's pin)" in row, row
