"""A ``--flag/--no-flag`` switch of SGLang 0.5.23 (argparse's BooleanOptionalAction) named in
``server.args`` or a space's ``fixed`` by its ``--no-`` form is refused at ``tuner study create``, in
one line naming the key and the fix (tuner/config/server_arg_checks.py ``_check_server_arg``).

QA (qa200): argparse takes ``--no-enable-tf32-matmul`` (and its prefix ``--no-enable-tf32``) for
``enable_tf32_matmul`` set off, and the check kept such a key under the switch's name with its value
as given, so ``no_enable_tf32_matmul: true`` was created, launched as ``--enable-tf32-matmul`` (tf32
on, the opposite of its name) and exported so ("add them to the command line: --enable-tf32-matmul").
The on form and its prefixes are kept as before, false launched as ``--no-...``."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from support.demo_study import ROOT, demo_study

from tuner.cli import cli
from tuner.config.server_arg_checks import check_server_args
from tuner.server.command import arg_tokens


def _create(tmp_path, args=None, fixed=None):
    space = tmp_path / "space.yaml"
    data = yaml.safe_load((ROOT / "search_spaces" / "eagle3.yaml").read_text())
    data["fixed"] = fixed or {}
    space.write_text(yaml.safe_dump(data))
    study = demo_study(tmp_path, "off", **{"search_space": str(space), "server.args": args or {}})
    return CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)


@pytest.mark.parametrize("where, key, value", [
    ("server.args", "no_enable_tf32_matmul", True),
    ("server.args", "no_enable_tf32_matmul", False),
    ("server.args", "no_enable_tf32", True),  # a prefix argparse takes for the --no- form alone
    ("fixed", "no_lora_strict_loading", True),
])
def test_the_off_form_as_a_key_is_refused_at_create(tmp_path, where, key, value):
    dest = "enable_tf32_matmul" if "tf32" in key else "lora_strict_loading"
    r = _create(tmp_path, **{"args" if where == "server.args" else "fixed": {key: value}})
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    file = "off.yaml" if where == "server.args" else "space.yaml"
    assert f"{file}: {where}: {key}: is --{key.replace('_', '-')}, the off form of SGLang's switch {dest}" \
        in lines[0], r.output
    assert f"write {dest}: false" in lines[0], r.output
    assert not (tmp_path / "off.db").exists()


@pytest.mark.parametrize("key, value, argv", [
    ("enable_tf32_matmul", False, ["--no-enable-tf32-matmul"]),
    ("enable_tf32_matmul", True, ["--enable-tf32-matmul"]),
    ("enable_tf32", False, ["--no-enable-tf32-matmul"]),  # a prefix of the on form: the switch itself
    ("lora_strict_loading", True, ["--lora-strict-loading"]),
])
def test_the_on_form_launches_as_its_value_says(key, value, argv):
    args = check_server_args({key: value}, "server.args")
    assert [t for name, v in args.items() for t in arg_tokens(name, v)] == argv
