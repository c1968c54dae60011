"""A study every setting of which is slower than the autoregressive baseline: the page warns under
its front, in the words ``tuner study export`` uses for the pick (QA, qa199: the page marked the
best setting ``single, throughput, knee`` with no word, while ``export --pick knee`` warned that
serving without speculative decoding would be faster)."""

from support.cli_in_process import tuner_here
from support.landscapes import table_from_profile, write_table

from tuner.engine.study import open_study
from tuner.results.report import write_report

STUDY = """name: {name}
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  model: {{landscape: {table}, noise: 0.0, seed: 1}}
bench: {{suite: quick}}
budget: {{n_trials: 3}}
"""


def _page(tmp_path, name: str, scale: float) -> str:
    """A 3-launch study on a landscape table whose rows run at ``scale`` times the baseline's figures."""
    data = table_from_profile(keep=lambda spec: spec.num_steps <= 2 and spec.num_draft_tokens <= 4)
    base = data["baseline"]
    for i, row in enumerate(data["configs"]):
        row.update({k: v * scale * (1 + i / 100) for k, v in base.items()})  # each its own figures
    write_table(tmp_path / f"{name}.json", data)
    (tmp_path / f"{name}.yaml").write_text(STUDY.format(name=name, table=f"{name}.json"))
    r = tuner_here("study", "run", str(tmp_path / f"{name}.yaml"))
    assert r.exit_code == 0, r.output
    study = open_study(name, f"sqlite:///{tmp_path / f'{name}.db'}")
    return write_report(study, tmp_path / f"{name}.html").html.read_text(encoding="utf-8")


def test_a_front_slower_than_the_baseline_is_warned_of(tmp_path):
    page = _page(tmp_path, "slow", 0.6)
    warnings = [line for line in page.splitlines() if line.startswith("<p class=\"missing\">Warning: ")]
    assert len(warnings) == 1, warnings  # three picks of one setting: said once
    assert "is slower than the autoregressive baseline on every objective (single_speedup 0.6" in warnings[0]
    assert "serving without speculative decoding would be faster on what was measured." in warnings[0]


def test_a_front_faster_than_the_baseline_gets_no_warning(tmp_path):
    assert "<p class=\"missing\">Warning: " not in _page(tmp_path, "fast", 1.5)
