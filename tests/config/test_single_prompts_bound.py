"""``single.prompts`` may ask for every prompt the suite has, not one more
(:func:`tuner.config.suite.refuse_too_many_single_prompts`)."""

import pytest

from tuner.config.suite import load_suite, refuse_too_many_single_prompts
from tuner.config.yamlfile import ConfigError


def suite(n: int):
    return load_suite({"name": "s", "prompts": [{"name": "a", "text": "hello"}, {"name": "b", "text": "there"}],
                       "single": {"prompts": n, "lengths": [8], "repeats": 1},
                       "sweep": {"concurrencies": [1], "max_tokens": 8}, "warmup": {"requests": 0}, "timeout_s": 30})


def test_asking_for_every_prompt_is_allowed_and_one_more_is_not(tmp_path):
    refuse_too_many_single_prompts(suite(2), tmp_path / "suite.yaml")  # exactly the two it has
    with pytest.raises(ConfigError, match="3 prompts asked for, but the suite has 2 prompt"):
        refuse_too_many_single_prompts(suite(3), tmp_path / "suite.yaml")


@pytest.mark.parametrize("concurrencies", [[0], [1, 0, 4], [-2]])
def test_a_sweep_concurrency_below_one_is_refused(concurrencies):
    """A concurrency of 0 sends no request (no figure for the objectives that name it): refused."""
    from pydantic import ValidationError

    from tuner.config.suite import SweepSpec

    with pytest.raises(ValidationError, match="requests at once measure nothing; give each concurrency as 1 or more"):
        SweepSpec(concurrencies=concurrencies)
    assert SweepSpec(concurrencies=[1, 4]).concurrencies == [1, 4]
