"""A command draws its dataset once: `tuner study create` loads the study file's suite for the config and
again in each check of its preflight, and each load drew the file anew, a UTF-8 scan and a parse of every
row (QA qa188: six parses of a 100,000-row file for one `study create`, seven for `study run`: minutes for
a file of a GiB). The same draw again returns the last one's requests after one streamed SHA-256 pass; a
file changed between two loads is drawn again."""

from __future__ import annotations

import json
import os

import pytest
import yaml
from click.testing import CliRunner

import tuner.config.dataset as dataset
from tuner.cli import cli
from tuner.config.suite import load_suite

ROWS = [{"prompt": f"plain prompt number {i}", "max_tokens": 8} for i in range(50)]
SUITE = {"name": "s", "dataset": {"path": "d.jsonl", "n": 20, "seed": 3}, "single": {"prompts": 2, "repeats": 1},
         "sweep": {"concurrencies": [2]}, "warmup": {"requests": 0}, "timeout_s": 30}
STUDY = {"name": "ds", "server": {"backend": "sim", "model_path": "m", "draft_model_path": "d",
                                  "sim": {"speedup": 50}},
         "bench": {"suite": "suite.yaml"}, "objectives": ["single_speedup", "speedup@2"]}


@pytest.fixture
def parses(monkeypatch):
    """How many times a dataset's lines are parsed (each pass of the JSON-lines reader)."""
    count = []
    reader = dataset._json_lines

    def counting(*args, **kwargs):
        count.append(1)
        return reader(*args, **kwargs)

    monkeypatch.setattr(dataset, "_json_lines", counting)
    # no draw kept from another test (of another file: it would not count here, but it holds memory)
    monkeypatch.setattr(dataset, "_LAST_DRAW", [], raising=False)
    yield count


def test_study_create_parses_its_dataset_once(tmp_path, parses):
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(SUITE))
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(STUDY))
    r = CliRunner().invoke(cli, ["study", "create", str(tmp_path / "study.yaml")])
    assert r.exit_code == 0, r.output
    assert len(parses) == 1, len(parses)
    # what it stored is the draw, as a load of the file draws it
    status = CliRunner().invoke(cli, ["study", "status", str(tmp_path / "study.yaml"), "-f", "json"])
    assert status.exit_code == 0, status.output
    stored = load_suite(str(tmp_path / "suite.yaml"))
    assert stored.dataset.sha256 in status.output


def test_a_file_changed_between_two_loads_is_drawn_again(tmp_path, parses):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    spec = {"name": "t", "dataset": {"path": "d.jsonl"}}
    first = load_suite(spec, tmp_path)
    again = load_suite(spec, tmp_path)
    assert len(parses) == 1 and again.prompts == first.prompts
    assert again.prompts is not first.prompts
    # the same size and modification time, other bytes: read again
    st = os.stat(path)
    path.write_text(path.read_text().replace("number 1\"", "number X\""))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_size == st.st_size
    changed = load_suite(spec, tmp_path)
    assert len(parses) == 2
    assert changed.dataset.sha256 != first.dataset.sha256
    assert [p.text for p in changed.prompts][1] == "plain prompt number X"
    # another spec of the same file: its own draw
    other = load_suite({"name": "t", "dataset": {"path": "d.jsonl", "n": 5}}, tmp_path)
    assert len(parses) == 3 and len(other.prompts) == 5
