"""The simulator's argument handling against SGLang 0.5.23's on cases nobody wrote, in-process.

QA (qa123): a differential grid, SGLang's own ``prepare_server_args`` + ``resolve_once`` on CPU (stubbed
GPU imports, ``benchmarks/sglang_agreement.py``'s child, a tiny config.json of each model) against
``tuner.sim.args.resolve_launch`` with a profile of the same architecture, attention kind and GPU.
Each case holds SGLang's verdict as data, with the SGLang source that decides it.
"""

import logging

import pytest
import yaml

from tuner.sim.args import parse_args, resolve_launch
from tuner.sim.profile import PROFILES_DIR, Profile

LOG = logging.getLogger("sim-edges-test")


def _profile(architecture: str, attention: str = "mha", capability: str = "9.0") -> Profile:
    """The dense profile as a model of ``architecture`` on GPUs of ``capability``."""
    data = yaml.safe_load((PROFILES_DIR / "dense-27b-tp1.yaml").read_text())
    data["model"].update(architecture=architecture, attention=attention)
    data["hardware"]["compute_capability"] = capability
    return Profile(**data)


def _launch(*flags: str, profile: Profile | None = None):
    ns = parse_args(["--model-path", "m", *flags])
    return resolve_launch(ns, LOG, profile or _profile("Qwen3ForCausalLM"))


def _spec(algorithm: str, steps=3, topk=1, draft=4) -> list[str]:
    return ["--speculative-algorithm", algorithm, "--speculative-draft-model-path", "d",
            "--speculative-num-steps", str(steps), "--speculative-eagle-topk", str(topk),
            "--speculative-num-draft-tokens", str(draft)]


@pytest.mark.parametrize("given, runs", [("nextn", "EAGLE"), ("NEXTN", "EAGLE"), ("eagle3", "EAGLE3"),
                                         ("Eagle", "EAGLE"), ("EAGLE3", "EAGLE3")])
def test_the_algorithm_is_reported_as_sglang_resolves_it(given, runs):
    # speculative_hook.py, handle_speculative_decoding: `speculative_algorithm.upper()`, then
    # _resolve_speculative_algorithm_alias: NEXTN (and EAGLE) -> "EAGLE". SGLang's /server_info for
    # `--speculative-algorithm nextn` says "EAGLE"; the simulator said "nextn".
    plan = _launch(*_spec(given))
    assert plan.server_args["speculative_algorithm"] == runs
