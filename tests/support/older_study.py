"""The study file the tests of studies made by an older tuner start from (``tests/engine/
test_older_studies.py``, ``tests/cli/test_older_study_launch.py``): a small MLA study on the
simulator, whose stored attributes each test then rewrites as an older tuner stored them; and
:func:`measured_model_study`, the measured study the CLI tests of older studies rewrite."""

from pathlib import Path

OLDER_STUDY = """
name: old
search_space: eagle3
server:
  backend: sim
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
bench: {suite: quick}
objectives: [single_speedup, speedup@32]
budget: {n_trials: 4}
"""


def measured_model_study(tmp_path: Path):
    """Study ``c`` on the performance model (``support.model_study``), its three default seeds
    measured by `tuner study run` -- (3, 1, 4), (4, 8, 64), (2, 4, 8) -- in ``tmp_path/c.db``:
    the study file and the Optuna study."""
    import optuna
    import yaml
    from click.testing import CliRunner
    from support.model_study import model_study_data

    from tuner.cli import cli

    path = tmp_path / "c.yaml"
    data = model_study_data("c", seed=1)
    data["budget"] = {"n_trials": 3}
    path.write_text(yaml.safe_dump(data))
    r = CliRunner().invoke(cli, ["study", "run", str(path)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return path, optuna.load_study(study_name="c", storage=f"sqlite:///{tmp_path / 'c.db'}")
