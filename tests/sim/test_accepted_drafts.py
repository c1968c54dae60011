"""What the simulated scheduler counts per request (tuner/sim/scheduler.py): each verify step gives its
accepted drafts plus the bonus token, so accepted drafts + verify steps is the tokens after the
prefill's one, short of them by at most what the last step accepted beyond the request's end; a
request of no new tokens generates none."""

from __future__ import annotations

from tuner.sglang.rules import SpecConfig
from tuner.sim.model import PerfModel, load_profile
from tuner.sim.scheduler import BatchEngine, SimRequest

MODEL = PerfModel(load_profile("k2.6-tp8-pcie"))


def _engine(spec) -> BatchEngine:
    return BatchEngine(MODEL, spec=spec, max_running_requests=8, speedup=1.0, seed=5, clock=lambda: 0.0)


def test_accepted_drafts_and_verify_steps_add_up_to_the_tokens_after_the_prefill():
    spec = SpecConfig(3, 1, 4)
    reqs = [SimRequest(rid=str(i), prompt_tokens=20, max_new_tokens=200, predictability=0.2 * i) for i in range(5)]
    _engine(spec).simulate(reqs)
    for r in reqs:
        assert r.generated == 200 and r.verify_ct > spec.num_steps
        overshoot = r.correct_drafts + r.verify_ct - (r.generated - 1)
        assert 0 <= overshoot <= spec.num_steps, (r.rid, r.correct_drafts, r.verify_ct)


def test_a_request_of_no_new_tokens_generates_none():
    r = SimRequest(rid="z", prompt_tokens=20, max_new_tokens=0, predictability=0.5)
    _engine(SpecConfig(3, 1, 4)).simulate([r])
    assert r.finished and r.generated == 0 and r.verify_ct == 0
