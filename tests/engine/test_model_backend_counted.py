"""The model backend's refusal of requests over the context says the suite's prompts in their number
(tuner.config.wording.counted): a one-prompt suite read "1 of the suite's 1 prompts refused"."""

from __future__ import annotations

from tuner.config.suite import load_suite
from tuner.engine.backends import ModelBackend
from tuner.sglang.rules import SpecConfig

#: one prompt, one request of 512 tokens: over a 540-token context with a tree's draft slots
ONE = {"name": "one", "prompts": [{"name": "fib", "text": "def fib(n):"}],
       "single": {"lengths": [512], "repeats": 1}, "sweep": {"concurrencies": []}, "warmup": {"requests": 0}}


def test_the_one_prompt_of_a_suite_refused_is_one_prompt():
    backend = ModelBackend("k2.6-tp8-pcie", load_suite(ONE), noise=0.0, seed=None,
                           server_args={"context_length": 540})
    seen = []
    m = backend.measure(SpecConfig(4, 8, 64), "trials/0", seen.append)
    assert seen == [m] and m.figures is None and m.failure_class == "request_errors", m
    assert m.failure_message.startswith("1 of the suite's 1 prompt refused; first: fib at 512 tokens"), \
        m.failure_message
