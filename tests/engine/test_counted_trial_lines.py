"""A trial's failure lines take their noun's number (tuner.config.wording.counted): a suite of one
request said "1 of 1 answers cannot be true" (the verify rule) where `tuner bench` already says
"1 of 1 answer"."""

from types import SimpleNamespace

from tuner.bench.records import RequestRecord
from tuner.engine.verify import _responses


def _answer(completion_tokens: int) -> RequestRecord:
    return RequestRecord(phase="single", prompt="fib", max_tokens=8, ok=True, completion_tokens=completion_tokens,
                         finish_reason="length")


def test_one_answer_that_cannot_be_true_is_one_answer():
    cls, message = _responses(SimpleNamespace(suite={"ignore_eos": True}, records=[_answer(9)]), None)
    assert cls == "bad_response"
    assert message.startswith("1 of 1 answer cannot be true (first: single fib at 8 tokens: "), message


def test_two_answers_keep_the_plural():
    records = [_answer(9), _answer(8)]
    _, message = _responses(SimpleNamespace(suite={"ignore_eos": True}, records=records), None)
    assert message.startswith("1 of 2 answers cannot be true"), message
