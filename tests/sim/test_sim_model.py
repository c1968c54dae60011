"""The simulator's performance model: calibration to the article, sanity of its shape, profiles."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from tuner.config.yamlfile import ConfigError
from tuner.sglang.rules import SpecConfig
from tuner.sim.model import ExpectedFigures, PerfModel, list_profiles, load_profile

ROOT = Path(__file__).resolve().parents[2]
SEED = yaml.safe_load((ROOT / "tuner/config/suites/seed.yaml").read_text())
PROMPTS = [p["text"] for p in SEED["prompts"]]
ARTICLE_SPEC = SpecConfig(1, 1, 2)  # requested steps 1, topk 1, draft 3: SGLang runs draft tokens 2


@pytest.fixture(scope="module")
def pcie() -> PerfModel:
    return PerfModel(load_profile("k2.6-tp8-pcie"))


def figures(model: PerfModel, spec: SpecConfig | None) -> ExpectedFigures:
    return model.expected_figures(spec, prompts=PROMPTS, single_lengths=SEED["single"]["lengths"],
                                  concurrencies=[1, 8, 32], sweep_tokens=SEED["sweep"]["max_tokens"])


# The article's table (model time), each within 5%; "41-45" for the single request is its range.
CALIBRATION = [
    ("autoregressive single", None, "single", 26.3, 26.3),
    ("autoregressive C=8", None, 8, 208.9, 208.9),
    ("autoregressive C=32", None, 32, 807.5, 807.5),
    ("eagle3 1/1/2 single", ARTICLE_SPEC, "single", 41.0, 45.0),
    ("eagle3 1/1/2 C=8", ARTICLE_SPEC, 8, 344.6, 344.6),
    ("eagle3 1/1/2 C=32", ARTICLE_SPEC, 32, 844.1, 844.1),
]


@pytest.mark.parametrize("label,spec,figure,low,high", CALIBRATION, ids=[c[0] for c in CALIBRATION])
def test_calibration_to_the_article(pcie, label, spec, figure, low, high):
    fig = figures(pcie, spec)
    value = fig.single_tok_per_s if figure == "single" else fig.tok_per_s[figure]
    assert low * 0.95 <= value <= high * 1.05, f"{label}: {value:.1f} tok/s, article {low}-{high}"


def test_autoregressive_throughput_scales_about_linearly(pcie):
    fig = figures(pcie, None)
    per_request = [fig.tok_per_s[c] / c for c in (1, 8, 32)]
    assert max(per_request) / min(per_request) < 1.1


def test_shipped_profiles_load():
    assert {"k2.6-tp8-pcie", "k2.6-tp8-nvlink", "dense-27b-tp1"} <= set(list_profiles())
    for name in list_profiles():
        profile = load_profile(name)
        assert profile.name == name
        assert load_profile(Path(__file__).resolve().parents[2] / f"tuner/sim/profiles/{name}.yaml") == profile


def test_acceptance_grows_with_steps_and_tree_size(pcie):
    for pred in (0.1, 0.5, 0.9):
        chain = [pcie.mean_accept_length(SpecConfig(s, 1, s + 1), pred) for s in range(1, 9)]
        assert all(b > a for a, b in zip(chain, chain[1:]))
        tree = [pcie.mean_accept_length(SpecConfig(4, 4, d), pred) for d in range(2, 18)]
        assert all(b > a for a, b in zip(tree, tree[1:]))
        by_topk = [pcie.mean_accept_length(SpecConfig(4, k, 16), pred) for k in (2, 4, 8)]
        assert by_topk == sorted(by_topk)
        assert 1.0 <= chain[0] <= 2.0 and chain[-1] <= 9.0


def test_tree_gains_diminish(pcie):
    gains = [pcie.mean_accept_length(SpecConfig(5, 4, d + 8), 0.6) - pcie.mean_accept_length(SpecConfig(5, 4, d), 0.6)
             for d in (2, 10, 18, 26)]
    assert all(b < a for a, b in zip(gains, gains[1:]))


def test_predictable_prompts_accept_more(pcie):
    by_name = {p["name"]: pcie.predictability(p["text"]) for p in SEED["prompts"]}
    assert by_name["json"] > by_name["haiku"] and by_name["fib"] > by_name["haiku"]
    assert pcie.predictability("Tell me about the weather in a small town.") == pytest.approx(0.5, abs=0.03)
    assert pcie.predictability(PROMPTS[0]) == pcie.predictability(PROMPTS[0])  # deterministic
    spec = SpecConfig(3, 1, 4)
    assert pcie.mean_accept_length(spec, by_name["json"]) > pcie.mean_accept_length(spec, by_name["haiku"])


def test_step_cost_grows_with_verified_tokens_and_batch(pcie):
    costs = [pcie.decode_step_time_s(8, SpecConfig(4, 4, d)) for d in (4, 8, 16, 32, 64)]
    assert all(b > a for a, b in zip(costs, costs[1:]))
    by_steps = [pcie.decode_step_time_s(1, SpecConfig(s, 1, s + 1)) for s in range(1, 9)]
    assert all(b > a for a, b in zip(by_steps, by_steps[1:]))
    by_batch = [pcie.decode_step_time_s(b, None) for b in (1, 8, 32, 64, 128)]
    assert by_batch == sorted(by_batch)
    assert pcie.decode_step_time_s(1, ARTICLE_SPEC) > pcie.decode_step_time_s(1, None)


def test_eager_above_cuda_graph_max_bs_is_slower(pcie):
    # SGLang counts the CUDA-graph batch in requests, also for the verify forward.
    spec = SpecConfig(3, 1, 4)
    assert pcie.decode_step_time_s(16, spec, cuda_graph_max_bs=16) < pcie.decode_step_time_s(16, spec, cuda_graph_max_bs=8)
    assert pcie.decode_step_time_s(16, None, cuda_graph_max_bs=16) < pcie.decode_step_time_s(16, None, cuda_graph_max_bs=15)


@pytest.mark.parametrize("spec,pred", [(SpecConfig(1, 1, 2), 0.2), (SpecConfig(3, 1, 4), 0.7),
                                       (SpecConfig(5, 4, 16), 0.5), (SpecConfig(8, 8, 64), 0.9)])
def test_sampled_accept_length_matches_the_mean(pcie, spec, pred):
    rng = random.Random(1234)
    samples = [pcie.sample_accept_length(spec, pred, rng) for _ in range(8000)]
    assert min(samples) >= 1 and max(samples) <= spec.num_steps + 1
    assert sum(samples) / len(samples) == pytest.approx(pcie.mean_accept_length(spec, pred), rel=0.03)


def test_sampling_is_reproducible_from_the_seed(pcie):
    spec = SpecConfig(4, 2, 8)
    a = [pcie.sample_accept_length(spec, 0.6, random.Random(7)) for _ in range(3)]
    runs = [[pcie.sample_accept_length(spec, 0.6, rng) for _ in range(50)] for rng in (random.Random(7), random.Random(7))]
    assert runs[0] == runs[1] and len(set(a)) == 1


def test_step_noise(pcie):
    assert pcie.step_noise(random.Random(1)) == 1.0
    noisy = PerfModel(pcie.profile, noise=0.1)
    values = [noisy.step_noise(random.Random(i)) for i in range(400)]
    assert len(set(values)) > 300 and 0.95 < sum(values) / len(values) < 1.05
    assert 0.7 - 1e-9 <= min(values) and max(values) <= 1.3 + 1e-9


def test_kv_budget(pcie):
    ok, message = pcie.kv_budget_ok(SpecConfig(3, 1, 4), 48, 8192)
    assert ok and message == ""
    ok, message = pcie.kv_budget_ok(SpecConfig(8, 8, 64), 1024, 32768)
    assert not ok and "Not enough memory" in message and "--mem-fraction-static" in message
    # More draft tokens x running requests needs more memory: find a budget between the two.
    assert pcie.kv_budget_ok(SpecConfig(3, 1, 4), 48, 8192, mem_fraction_static=0.6)[0] is False
    assert pcie.kv_budget_ok(None, 48, 8192, mem_fraction_static=0.88)[0] is True


def test_prefill_is_counted_in_single_request_figures(pcie):
    fast = pcie.expected_figures(None, prompts=["x" * 40], single_lengths=[256], concurrencies=[], sweep_tokens=256)
    slow = pcie.expected_figures(None, prompts=["x" * 40000], single_lengths=[256], concurrencies=[], sweep_tokens=256)
    assert slow.single_tok_per_s < fast.single_tok_per_s


def test_sweep_ends_with_the_slowest_prompt(pcie):
    easy = PROMPTS[3]  # json
    hard = PROMPTS[4]  # haiku
    kwargs = dict(single_lengths=[256], concurrencies=[2], sweep_tokens=512)
    both = pcie.expected_figures(ARTICLE_SPEC, prompts=[easy, hard], **kwargs).tok_per_s[2]
    easy_only = pcie.expected_figures(ARTICLE_SPEC, prompts=[easy], **kwargs).tok_per_s[2]
    hard_only = pcie.expected_figures(ARTICLE_SPEC, prompts=[hard], **kwargs).tok_per_s[2]
    # The pair finishes when the haiku does (prefill of the longer JSON prompt aside).
    assert both == pytest.approx(hard_only, rel=0.01) and both < easy_only * 0.97


BAD_PROFILES = [
    ("unknown key", {"model": {"layerz": 3}}, "model.layerz", "unknown key"),
    ("wrong type", {"hardware": {"tp_size": "eight"}}, "hardware.tp_size", "integer"),
    ("out of range", {"acceptance": {"alpha_high": 1.5}}, "acceptance.alpha_high", "less than 1"),
    ("missing section", {"runtime": None}, "runtime", ""),
]


@pytest.mark.parametrize("label,change,key,text", BAD_PROFILES, ids=[b[0] for b in BAD_PROFILES])
def test_bad_profile_names_file_and_key(tmp_path, label, change, key, text):
    data = yaml.safe_load((ROOT / "tuner/sim/profiles/k2.6-tp8-pcie.yaml").read_text())
    for section, value in change.items():
        if value is None:
            del data[section]
        else:
            data[section].update(value)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as err:
        load_profile(str(path))
    assert str(err.value).startswith(f"{path}: {key}")
    assert text in str(err.value)


def test_unknown_profile_name_lists_the_shipped_ones():
    with pytest.raises(ConfigError, match="k2.6-tp8-pcie"):
        load_profile("no-such-profile")
    with pytest.raises(ConfigError, match="file not found"):
        load_profile("/nonexistent/profile.yaml")
