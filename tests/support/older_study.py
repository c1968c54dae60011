"""The study file the tests of studies made by an older tuner start from (``tests/engine/
test_older_studies.py``, ``tests/cli/test_older_study_launch.py``): a small MLA study on the
simulator, whose stored attributes each test then rewrites as an older tuner stored them."""

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
