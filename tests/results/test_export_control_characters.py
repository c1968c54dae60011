"""The export's header comments hold no ASCII control character: PyYAML's reader, which SGLang
0.5.23's ``--config`` loader runs (``srt/utils/server_args_config_parser.py``, ``yaml.safe_load``),
refuses a whole file holding one anywhere, in a comment too (``unacceptable character #x001b:
special characters are not allowed``). QA: a ``server.env`` name (the study takes any name without
``=`` or NUL) and the study's folder (in the storage URL the header names) reached the header raw,
and the exported file did not load."""

import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli
from tuner.sim.args import build_parser, merge_config

# ESC, BEL, DEL and a tab: each but the tab is refused by PyYAML's reader
ENV = {"A\x1bB": "1", "C\x7fD": "2", "E\x07F\tG": "3"}


def test_control_characters_of_the_study_are_escaped_in_the_header(tmp_path):
    folder = tmp_path / "runs\x1bnight"
    folder.mkdir()
    data = model_study_data("ctl", seed=1)
    data["server"]["env"] = ENV
    path = folder / "ctl.yaml"
    path.write_text(yaml.safe_dump(data))
    r = CliRunner().invoke(cli, ["study", "run", str(path)])
    assert r.exit_code == 0, r.output
    out = tmp_path / "best.yaml"
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", "knee", "-o", str(out)])
    assert r.exit_code == 0, r.output
    text = out.read_text(encoding="ascii")
    assert all(" " <= ch <= "~" for ch in text.replace("\n", "")), [ch for ch in text if ch < " " or ch > "~"]
    mapping = yaml.safe_load(text)  # SGLang's loader: this raised ReaderError
    assert mapping["model-path"] == "m"
    # said, readably, inside the comments
    assert "A\\x1bB, C\\x7fD, E\\x07F\\x09G" in text and "runs\\x1bnight" in text
    argv = merge_config(["--config", str(out)], build_parser())
    assert argv[argv.index("--model-path") + 1] == "m"
