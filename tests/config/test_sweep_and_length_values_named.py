"""A sweep concurrency or a single-request length that cannot be is refused naming its key, the value
and the fix, as a repeated single length is (QA: "e.yaml: sweep: concurrencies must not repeat", "sweep:
concurrencies must be positive", "single: lengths must be positive token counts": the section alone,
no value, no fix)."""

from pathlib import Path

import pytest
import yaml

from support.cli_in_process import tuner_here

PROMPTS = [{"name": "a", "text": "Name a colour."}]


@pytest.mark.parametrize("section, said", [
    ({"sweep": {"concurrencies": [1, 0, 8]}},
     "sweep.concurrencies: 0 requests at once measure nothing; give each concurrency as 1 or more"),
    ({"sweep": {"concurrencies": [8, 32, 8]}},
     "sweep.concurrencies: 8 is given twice; give each concurrency once (sweep.repeats says how often each "
     "is measured)"),
    ({"single": {"lengths": [256, -5]}},
     "single.lengths: -5 is no output length; give each length as 1 or more tokens"),
])
def test_tuner_bench_names_the_key_the_value_and_the_fix(tmp_path, section, said):
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({"name": "t", "prompts": PROMPTS, **section}))
    res = tuner_here("bench", "--url", "http://127.0.0.1:9", "--suite", "s.yaml", "--json", "out.json",
                     cwd=tmp_path)
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [f"error: s.yaml: {said}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]


def test_an_inline_suite_names_its_key_in_the_study_file(tmp_path):
    from tuner.config.study import load_study
    from tuner.config.yamlfile import ConfigError

    study = yaml.safe_load((Path(__file__).parents[2] / "studies" / "sim-demo.yaml").read_text())
    study["bench"] = {"suite": {"name": "t", "prompts": PROMPTS, "single": {"lengths": [8]},
                                "sweep": {"concurrencies": [1, 32, 32]}}}
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(study))
    with pytest.raises(ConfigError) as err:
        load_study(tmp_path / "study.yaml")
    assert str(err.value) == (f"{tmp_path / 'study.yaml'}: bench.suite.sweep.concurrencies: 32 is given twice; "
                              "give each concurrency once (sweep.repeats says how often each is measured)")
