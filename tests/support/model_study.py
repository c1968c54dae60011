"""Real Optuna studies measured through the performance model (ModelBackend: no process, no HTTP),
shared by the results tests."""

from __future__ import annotations

from pathlib import Path

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.backends import ModelBackend
from tuner.engine.runner import run_study
from tuner.engine.study import create_study

ROOT = Path(__file__).resolve().parents[2]
SPACE = ROOT / "search_spaces" / "eagle3.yaml"

STUDY = """
name: {name}
search_space: {space}
server:
  backend: sim
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  args:
    mem_fraction_static: 0.85
    trust_remote_code: true{args}
  sim: {{profile: {profile}}}
bench: {{suite: quick}}
sampler: {{seed: 3}}
budget: {{n_trials: 40}}
{seeds}"""

#: A study file measured through the performance model (k2.6-tp8-pcie, 2% noise, seed 1) in one
#: launch: the tests of what a command refuses before it runs, or says of a study's files.
ONE_LAUNCH_STUDY = """
name: {name}
search_space: {space}
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  model: {{profile: k2.6-tp8-pcie, noise: 0.02, seed: 1}}
bench: {{suite: quick}}
budget: {{n_trials: 1}}
"""


def one_launch_study(name: str) -> str:
    """:data:`ONE_LAUNCH_STUDY`'s text for study ``name``, the eagle3 search space."""
    return ONE_LAUNCH_STUDY.format(name=name, space=SPACE)


# Seeds that make the study hold every kind of trial whatever the sampler does: SGLang runs the
# article's (1, 1, 3) and (1, 1, 5) both as (1, 1, 2) (the second a reused trial), and (1, 4, 40)
# asks for more draft tokens than one step of topk 4 drafts (an invalid one).
REUSE_SEED = """seed_trials:
  - {speculative_num_steps: 1, speculative_eagle_topk: 1, speculative_num_draft_tokens: 3}
  - {speculative_num_steps: 1, speculative_eagle_topk: 1, speculative_num_draft_tokens: 5}
  - {speculative_num_steps: 1, speculative_eagle_topk: 4, speculative_num_draft_tokens: 40}
"""


def model_study_data(name: str, *, seed: int | None = None, search_space: str | None = None,
                     suite: str = "quick") -> dict:
    """The smallest study file the CLI tests write: the performance model (no process, no HTTP) on
    the shipped PCIe profile, ``suite``, a budget of 2 launches; ``seed``: the model's noise and
    the sampler seeded with it (a study the test runs)."""
    model = {"profile": "k2.6-tp8-pcie", **({"seed": seed} if seed is not None else {})}
    data = {"name": name, "search_space": search_space or str(SPACE),
            "server": {"backend": "model", "model_path": "m", "draft_model_path": "d", "tp_size": 8,
                       "model": model},
            "bench": {"suite": suite}}
    if seed is not None:
        data["sampler"] = {"seed": seed}
    data["budget"] = {"n_trials": 2}
    return data


def make_model_study(folder: Path, name: str = "demo", n_trials: int | None = 12, space: Path = SPACE,
                     profile: str = "k2.6-tp8-pcie", args: dict | None = None):
    """A study file in ``folder``, created in its SQLite storage and run for ``n_trials`` settings
    through the performance model (``n_trials=None``: created, never run); ``args``: more
    ``server.args``. Returns the file path."""
    path = folder / f"{name}.yaml"
    more = "".join(f"\n    {k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in (args or {}).items())
    path.write_text(STUDY.format(name=name, space=space, profile=profile, args=more,
                                 seeds=REUSE_SEED if space == SPACE else ""))
    config = load_study(path)
    create_study(config, config.storage)
    if n_trials:
        run_study(config, config.storage, ModelBackend(profile, load_suite("quick"), noise=0.01, seed=1),
                  n_trials=n_trials)
    return path


def model_study_yaml(name: str, storage: str, n_trials: int, *, noise: float | None = None,
                     seed: int | None = None) -> str:
    """A study file's text for the CLI tests that only need some study to run: the performance model
    (no process, no HTTP) on the shipped PCIe profile, the quick suite, ``storage`` as written (a
    relative SQLite URL is beside the file), a budget of ``n_trials`` launches; ``noise``/``seed``:
    the model's."""
    model = ", ".join(["profile: k2.6-tp8-pcie", *([f"noise: {noise}"] if noise is not None else []),
                       *([f"seed: {seed}"] if seed is not None else [])])
    return (f"name: {name}\nsearch_space: {SPACE}\nstorage: {storage}\nserver:\n  backend: model\n"
            f"  model_path: moonshotai/Kimi-K2.6\n  draft_model_path: sim/kimi-k2.6-eagle3\n"
            f"  model: {{{model}}}\nbench: {{suite: quick}}\nbudget: {{n_trials: {n_trials}}}\n")


def stale_fast_storage(config):
    """The study's SQLite storage with a heartbeat that goes stale quickly (every 1 s, a 2-second
    grace) and the tuner's own stale-trial callback, closing its connections as the tuner's own
    storage does (NullPool: Python 3.13 warns of a pooled one collected unclosed)."""
    import optuna
    from sqlalchemy.pool import NullPool

    from tuner.engine.requeue import RetryStaleTrial

    return optuna.storages.RDBStorage(config.storage, heartbeat_interval=1, grace_period=2,
                                      heartbeat_stale_trial_callback=RetryStaleTrial(3),
                                      engine_kwargs={"poolclass": NullPool})


def model_study_here(tmp_path: Path, monkeypatch, name: str = "s") -> Path:
    """A model-backend study file ``NAME.yaml`` in ``tmp_path``, made the current folder, with no
    ``$TUNER_STORAGE`` set: what a command given only a storage URL under test sees."""
    import yaml

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(model_study_data(name)))
    return path

