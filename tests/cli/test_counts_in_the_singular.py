"""A count of one is said in the singular (QA: `confirming 1 settings (trial 0)`, `delete study x
(1 trials)`, `copied x (1 trials)`, `Pareto front of 1 of 1 feasible settings`, `budget of 1 trials`, `wrote t.json: 1 settings of profile ...`, a report's log tail
`1 lines`). The other sentences of this kind are checked where they are made (tests/results/
test_confirm.py: `1 round`; tests/engine/test_verify.py: `1 verify step`; tests/cli/
test_study_model_backend.py: `its one setting lies outside the search space`)."""

from __future__ import annotations

import types

from click.testing import CliRunner
from support.model_study import model_study_yaml

from tuner.cli import cli
from tuner.cli import study_manage
from tuner.cli.sim_landscape import landscape as landscape_cmd
from tuner.config.study import load_study
from tuner.engine.backends import Measurement, ModelBackend
from tuner.engine.runner import run_study
from tuner.engine.study import create_study, open_study
from tuner.results.report import write_report


def _one_trial_study(tmp_path):
    path = tmp_path / "one.yaml"
    path.write_text(model_study_yaml("one", "sqlite:///one.db", 1) + "default_seed_trials: false\n")
    r = CliRunner().invoke(cli, ["study", "run", str(path)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "(the study's budget of 1 trial is spent)" in r.output, r.output
    return path


def test_pareto_copy_and_delete_of_a_study_of_one_trial(tmp_path, monkeypatch):
    path = _one_trial_study(tmp_path)
    r = CliRunner().invoke(cli, ["study", "pareto", str(path)], catch_exceptions=False)
    assert r.exit_code == 0 and "Pareto front of 1 of 1 feasible setting;" in r.output, r.output
    r = CliRunner().invoke(cli, ["study", "copy", str(path), "two"], catch_exceptions=False)
    assert r.exit_code == 0 and "copied one (1 trial) to two" in r.output, r.output
    # the prompt asks only on a terminal (else --yes is required): stdin is one here
    terminal = types.SimpleNamespace(stdin=types.SimpleNamespace(isatty=lambda: True))
    monkeypatch.setattr(study_manage, "sys", terminal)
    r = CliRunner().invoke(cli, ["study", "delete", str(path)], input="n\n")
    assert r.exit_code == 1 and "delete study one (1 trial) and its companions" in r.output, r.output


def test_a_landscape_table_of_one_setting(tmp_path):
    space = tmp_path / "one.yaml"
    space.write_text("algorithm: EAGLE3\nparams:\n  speculative_num_steps: {low: 2, high: 2}\n"
                     "  speculative_eagle_topk: {choices: [1]}\n"
                     "  speculative_num_draft_tokens: {low: 3, high: 3}\n")
    out = tmp_path / "t.json"
    r = CliRunner().invoke(landscape_cmd, ["--space", str(space), "--concurrency", "1", "--table", str(out)])
    assert r.exit_code == 0, r.output
    assert f"wrote {out}: 1 setting of profile" in r.stderr, r.stderr


class _OneLineOom:
    """The performance model for the baseline; every trial fails with a one-line log tail."""

    def __init__(self, model: ModelBackend):
        self.model = model

    def measure(self, spec, label, record, on_event=None, on_stage=None):
        if spec is None:
            return self.model.measure(spec, label, record, on_event)
        m = Measurement(None, failure_class="oom", failure_message="Not enough memory",
                        log_tail="RuntimeError: Not enough memory.", log_path=f"/tmp/{label}/server.log")
        record(m)
        return m


def test_a_report_s_one_line_log_tail(tmp_path):
    path = tmp_path / "rep.yaml"
    path.write_text(model_study_yaml("rep", "sqlite:///rep.db", 1))
    config = load_study(path)
    create_study(config, config.storage)
    from tuner.config.suite import load_suite

    run_study(config, config.storage, _OneLineOom(ModelBackend("k2.6-tp8-pcie", load_suite("quick"), seed=1)),
              n_trials=1)
    page = tmp_path / "report.html"
    write_report(open_study("rep", config.storage), page)
    assert "<summary>1 line</summary>" in page.read_text(encoding="utf-8")
