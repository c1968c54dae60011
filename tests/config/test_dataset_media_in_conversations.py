"""A ShareGPT or ``custom`` conversation that carries an image, a video or audio (LLaVA-Instruct's and
ShareGPT4V's ``image``, LLaVA-Video's ``video``, a list under ``images``) is refused by its key, with the
``jq`` line that writes the file without such conversations, in the same layout; the file it writes is
read (QA qa207: LLaVA's conversations were drawn as text requests, ``<image>\\nWhat is shown?`` sent
without the image, where a JSONL row's ``image_url`` part is refused). A null or empty media key, as a
mixed set's text-only rows carry, is no media."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

TEXT = [{"from": "human", "value": "Tell me about the sea, please."},
        {"from": "gpt", "value": "The sea is wide and deep, and it rolls on."}]
PICTURE = [{"from": "human", "value": "<image>\nWhat is shown in this picture?"},
           {"from": "gpt", "value": "A cat sitting on a red sofa near a window."}]


def _load(folder: Path, name: str, fmt: str):
    (folder / "s.yaml").write_text(json.dumps({"name": "s", "dataset": {"path": name, "format": fmt},
                                               "single": {"prompts": 1, "repeats": 1}}))
    return load_suite(folder / "s.yaml")


def _run_as_printed(line: str) -> Path:
    """Run the line's ``jq ... FILE > OUT`` (split here, not given to a shell) and return OUT."""
    found = re.search(r"\((jq .*?) > (\S+) writes ", line)
    assert found, line
    out = Path(shlex.split(found.group(2))[0])
    with open(out, "wb") as f:
        subprocess.run(shlex.split(found.group(1)), stdout=f, check=True, timeout=60)
    return out


@pytest.mark.parametrize("key, value", [("image", "coco/000000123.jpg"), ("images", ["a.png", "b.png"]),
                                        ("video", "clips/1.mp4")])
def test_a_sharegpt_conversation_with_media_is_refused_and_the_line_drops_it(tmp_path, key, value):
    rows = [{"id": "t0", "conversations": TEXT}, {"id": "m1", key: value, "conversations": PICTURE},
            {"id": "t2", key: None, "conversations": TEXT}]
    (tmp_path / "d.json").write_text(json.dumps(rows))
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, "d.json", "sharegpt")
    line = str(err.value)
    assert line.startswith(f"{tmp_path / 'd.json'}: [1].{key}: the conversation carries "), line
    assert "which the tuner does not send: its prompt would go without it" in line
    assert line.endswith(f" > {tmp_path / 'd.text.json'} writes the file without them; give that file as "
                         "dataset.path)"), line
    out = _run_as_printed(line)
    suite = _load(tmp_path, out.name, "sharegpt")
    assert [p.name for p in suite.prompts] == ["t0", "t2"]


def test_a_custom_line_with_an_image_is_refused_by_its_line_and_the_line_drops_it(tmp_path):
    rows = [{"conversations": TEXT}, {"conversations": TEXT, "images": []}, {"image": "x.jpg", "conversations": PICTURE}]
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, "c.jsonl", "custom")
    line = str(err.value)
    assert line.startswith(f"{tmp_path / 'c.jsonl'}: line 3: image: the conversation carries an image"), line
    out = _run_as_printed(line)
    assert out == tmp_path / "c.text.jsonl"
    assert [p.name for p in _load(tmp_path, out.name, "custom").prompts] == ["line1", "line2"]
