"""Server arguments SGLang 0.5.23's launch checks refuse (``ServerArgs.check_server_args``, run after
the arguments are resolved and before anything loads, at every launch, the baseline's too) are refused
when the study file is read, not after a night of failed launches (QA, qa194: ``nnodes: 3`` at tp_size
8 and ``chunked_prefill_size: 1000`` with ``page_size: 16`` were created; SGLang's own verdicts:
"tp_size must be divisible by number of nodes", "chunked_prefill_size must be divisible by page_size")."""

from __future__ import annotations

import pytest

from tuner.config.study import ServerSettings

BASE = {"backend": "sim", "model_path": "moonshotai/Kimi-K2.6", "tp_size": 8}


@pytest.mark.parametrize("args, extra, said", [
    ({"nnodes": 3}, [], "args: nnodes: SGLang 0.5.23 refuses every launch before loading (AssertionError: tp_size "
                        "must be divisible by number of nodes"),
    ({"chunked_prefill_size": 1000, "page_size": 16}, [], "chunked_prefill_size must be divisible by page_size"),
    ({"page_size": 16}, ["--chunked-prefill-size", "1000"], "args with extra_args: chunked_prefill_size, page_size"),
    ({"dp_size": 2, "nnodes": 2}, [], "multi-node data-parallel replicas are not supported"),
])
def test_a_launch_sglang_refuses_before_loading_is_refused_at_create(args, extra, said):
    with pytest.raises(ValueError) as exc:
        ServerSettings(**BASE, args=args, extra_args=extra)
    assert said in str(exc.value), str(exc.value)


@pytest.mark.parametrize("args", [{"nnodes": 2}, {"chunked_prefill_size": 1024, "page_size": 16},
                                  {"chunked_prefill_size": -1, "page_size": 16},
                                  {"chunked_prefill_size": 1000, "page_size": 16, "disaggregation_mode": "decode"}])
def test_what_sglang_takes_is_taken(args):
    assert ServerSettings(**BASE, args=args).args == args
