"""``export --adaptive-out`` names the policy file in the YAML (``speculative-adaptive-config``), and
SGLang 0.5.23's ``--config`` loader hands that value to argparse as the word after the flag
(``utils/server_args_config_parser.py``, ``_add_scalar_arg``): a path starting with ``-`` is read as
an option, and the server does not start (``argument --speculative-adaptive-config: expected one
argument``). QA: ``--adaptive-out=-p.json`` wrote both files, exit 0. It is one line naming the flag
and the fix, exit 2, nothing written; ``./-p.json``, the same file, loads."""

import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli
from tuner.sim.args import build_parser, merge_config


def test_a_policy_path_argparse_reads_as_an_option_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = model_study_data("pol", seed=1)
    data["budget"]["n_trials"] = 3
    (tmp_path / "pol.yaml").write_text(yaml.safe_dump(data))
    assert CliRunner().invoke(cli, ["study", "run", "pol.yaml"]).exit_code == 0
    before = sorted(p.name for p in tmp_path.iterdir())

    r = CliRunner().invoke(cli, ["study", "export", "pol.yaml", "-o", "best.yaml", "--adaptive-out=-p.json"])
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "--adaptive-out: -p.json:" in lines[0] and "./-p.json" in lines[0], r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written

    r = CliRunner().invoke(cli, ["study", "export", "pol.yaml", "-o", "best.yaml", "--adaptive-out", "./-p.json"])
    assert r.exit_code == 0, r.output
    argv = merge_config(["--config", "best.yaml"], build_parser())  # the loader's words, parsed
    args = build_parser().parse_args(argv)
    assert args.speculative_adaptive_config == "./-p.json" and (tmp_path / "-p.json").is_file()
