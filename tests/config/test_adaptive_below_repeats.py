"""`adaptive.max_repeats` below a phase's fixed repeats is refused (QA: `max_repeats: 2` with
`single.repeats: 5` measured every row 5 times: the fixed repeats are the minimum every row gets
first, so the cap was passed silently, and so was the night's time it was meant to bound)."""

import pytest
import yaml

from support.cli_in_process import tuner_here
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

PROMPTS = [{"name": "a", "text": "Name a colour."}]


def _suite(tmp_path, **keys):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"name": "ad", "prompts": PROMPTS, **keys}, sort_keys=False))
    return path


@pytest.mark.parametrize("keys, key, repeats", [
    ({"single": {"lengths": [8], "repeats": 5}}, "single.repeats", 5),
    ({"single": {"lengths": [8]}}, "single.repeats", 3),  # the default 3
    ({"single": {"lengths": []}, "sweep": {"concurrencies": [4], "repeats": 4}}, "sweep.repeats", 4),
])
def test_a_cap_below_the_fixed_repeats_is_refused(tmp_path, keys, key, repeats):
    path = _suite(tmp_path, adaptive={"rel_ci95": 0.05, "max_repeats": 2}, **keys)
    with pytest.raises(ConfigError) as err:
        load_suite(path)
    assert str(err.value) == (f"{path}: adaptive.max_repeats: 2 is below {key} {repeats}, the repeats every "
                              f"row gets before the adaptive ones; raise it to {repeats} or more, or lower {key}")


def test_tuner_bench_refuses_it_before_any_request(tmp_path):
    _suite(tmp_path, single={"lengths": [8], "repeats": 5}, adaptive={"rel_ci95": 0.05, "max_repeats": 2})
    res = tuner_here("bench", "--url", "http://127.0.0.1:9", "--suite", "s.yaml", "--json", "out.json",
                     cwd=tmp_path)
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [
        "error: s.yaml: adaptive.max_repeats: 2 is below single.repeats 5, the repeats every row gets before the "
        "adaptive ones; raise it to 5 or more, or lower single.repeats"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]


def test_a_phase_the_suite_skips_does_not_count(tmp_path):
    # no single requests: single.repeats (3 by default) bounds nothing; the sweep's 1 is within the cap
    suite = load_suite(_suite(tmp_path, single={"lengths": []}, sweep={"concurrencies": [4]},
                              adaptive={"rel_ci95": 0.05, "max_repeats": 2}))
    assert suite.adaptive.max_repeats == 2 and suite.single.repeats == 3
