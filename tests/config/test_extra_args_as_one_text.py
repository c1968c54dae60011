"""``server.extra_args`` written as one shell line (``"--served-model-name 'a b'"``) is refused in one
line naming the file and the key, with the words as the list to write, split as a shell would
(tuner/config/study.py ``_words_as_a_list``).

QA (qa228): ``server.extra_args: input should be a valid list, got "--served-model-name 'a b'"`` named
no fix; the launcher runs no shell, so the text is never split, and the user must write the list."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from support.demo_study import demo_study

from tuner.cli import cli
from tuner.config.yamlfile import yaml_text


@pytest.mark.parametrize("text, words", [
    ("--served-model-name 'a b'", ["--served-model-name", "a b"]),
    ('--served-model-name "my model" --trust-remote-code', ["--served-model-name", "my model", "--trust-remote-code"]),
    ("--chat-template x,y --served-model-name 1 --revision 'it''s'", ["--chat-template", "x,y", "--served-model-name",
                                                                      "1", "--revision", "its"]),
])
def test_one_text_says_the_list_to_write(tmp_path, text, words):
    study = demo_study(tmp_path, "ea", **{"server.extra_args": text})
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert "ea.yaml: server.extra_args: expected a list of command-line words, got the text " in lines[0], r.output
    assert "without a shell" in lines[0], r.output
    suggested = lines[0].split("write each word as an item: extra_args: ", 1)[1]
    assert yaml_text(suggested) == words  # what the line says to write reads back as the shell's words
    assert not (tmp_path / "ea.db").exists()


def test_the_suggested_list_is_taken(tmp_path):
    study = demo_study(tmp_path, "ea", **{"server.extra_args": "--served-model-name 'a b'"})
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    suggested = r.output.strip().split("extra_args: ", 2)[-1]
    data = yaml.safe_load(study.read_text())
    study.write_text(yaml.safe_dump(data).replace(yaml.safe_dump({"extra_args": data["server"]["extra_args"]},
                                                                  width=1000).strip(), f"extra_args: {suggested}"))
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
