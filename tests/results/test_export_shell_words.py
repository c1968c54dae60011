"""The export's "add them to the command line" for ``server.extra_args`` gives back, pasted into a
shell, exactly the argv words every launch handed SGLang.

The launch appends ``server.extra_args`` to argv as they are (``tuner.server.command.plan_launch``),
and SGLang 0.5.23's ``--config`` loader puts the words given beside ``--config`` after the file's
(``srt/utils/server_args_config_parser.py``, ``merge_config_with_args``: ``return config_args +
before_config + after_config``), so those words reach its argparse as written: the words a shell
makes of the line must be the study's. QA: they were joined with spaces, so a JSON value
(``--json-model-override-args '{"a": 1}'``) came back as three words, a newline as a space and a
non-ASCII character as the literal text ``\\u4ee3`` (the header is one ASCII comment line).
"""

import subprocess

import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli

EXTRA_ARGS = ["--json-model-override-args", '{"a": 1, "b": "x y"}', "--served-model-name", "代码 model",
              "--chat-template", "line1\nline2\ttab", "--revision=it's $HOME `id` \\n", "--download-dir",
              "a\u2028b\x85c\x7f", "--tokenizer-path", "emoji😀"]
LORA_PATHS = ["名=/models/a b", "x=/m\nn"]

_SAYS = "add them to the command line: "


def _shell_split(line: str) -> list[str] | str:
    """The words bash makes of ``line`` (a real shell: it reads ANSI-C quotes, which shlex does not),
    or what bash said when it could not."""
    out = subprocess.run(["bash", "-c", f"printf '%s\\0' {line}"], capture_output=True, timeout=60)
    if out.returncode != 0:
        return f"bash exit {out.returncode}: {out.stderr.decode(errors='replace')}"
    return out.stdout.decode("utf-8").split("\0")[:-1]


def _words_after(text: str, what: str) -> list[str] | str:
    line = next(x for x in text.splitlines() if _SAYS in x and what in x)
    assert line.startswith("# WARNING: ")
    return _shell_split(line.split(_SAYS, 1)[1])


def test_the_command_line_words_are_the_launch_s(tmp_path):
    data = model_study_data("words", seed=1)
    data["server"]["extra_args"] = EXTRA_ARGS
    # an option SGLang's --config loader refuses (LoRAPathAction) goes to the command line too
    data["server"]["args"] = {"lora_paths": LORA_PATHS}
    path = tmp_path / "words.yaml"
    path.write_text(yaml.safe_dump(data))
    assert CliRunner().invoke(cli, ["study", "run", str(path)]).exit_code == 0
    out = tmp_path / "best.yaml"
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", "knee", "-o", str(out)])
    assert r.exit_code == 0, r.output
    text = out.read_text(encoding="ascii")  # still one ASCII file (SGLang's plain open())
    assert _words_after(text, "extra_args") == EXTRA_ARGS
    assert _words_after(text, "LoRAPathAction") == ["--lora-paths", *LORA_PATHS]
    yaml.safe_load(text)  # and the file still loads


def test_the_printed_command_is_printable_and_splits_back_into_the_launch_s_argv(tmp_path):
    """``--print-command`` (and the JSON's ``command``) give the launch's argv as one printable line
    bash splits back into exactly those words. QA (qa200): it was ``shlex.join``'s, which wrote a
    value's ESC raw to the terminal (a control sequence: ``weight_version: "a\\x1bb"`` is taken by
    the study check) and a line break as a second line; printable non-ASCII stays as it reads."""
    data = model_study_data("printed", seed=1)
    data["server"]["extra_args"] = EXTRA_ARGS
    data["server"]["args"] = {"weight_version": "a\x1b[31mb", "file_storage_path": "x\ny"}
    path = tmp_path / "printed.yaml"
    path.write_text(yaml.safe_dump(data))
    assert CliRunner().invoke(cli, ["study", "run", str(path)]).exit_code == 0
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", "knee", "--format", "json"])
    assert r.exit_code == 0, r.output
    import json

    exported = json.loads(r.stdout)
    argv = exported["argv"]
    assert "a\x1b[31mb" in argv and "x\ny" in argv
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", "knee", "--print-command"])
    assert r.exit_code == 0, r.output
    (line,) = r.stdout.splitlines()
    assert line.isprintable() and "代码 model" in line
    assert _shell_split(line) == argv
    assert _shell_split(exported["command"]) == argv
