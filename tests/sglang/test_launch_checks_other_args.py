"""SGLang 0.5.23's launch checks of the other server arguments refuse a study when its file loads, and
the simulator at launch, as ``ServerArgs.check_server_args`` does before anything loads.

``arg_groups/validation_hook.py`` (lines 187, 214, 273-316), which SGLang's Engine runs after the
arguments are resolved (``entrypoints/engine.py`` line 1165), at every launch, the baseline's too. QA
(qa226): ``served_model_name: kimi:k2``, ``enable_torch_compile`` with ``disable_cuda_graph_padding``,
``schedule_conservativeness: -1``, ``retraction_policy: priority`` alone, ``enable_priority_scheduling``
with ``schedule_policy: lpm`` and ``tokenizer_worker_num: 0`` were created (`tuner study create` exit 0),
and the simulator started with them.
"""

from __future__ import annotations

import logging

import pytest
from pydantic import ValidationError

from tuner.config.study import ServerSettings
from tuner.sim.args import parse_args, resolve_launch

REFUSED = [
    ({"served_model_name": "kimi:k2"}, "served_model_name cannot contain a colon"),
    ({"disable_cuda_graph_padding": True, "enable_torch_compile": True},
     "--disable-cuda-graph-padding is incompatible with --enable-torch-compile"),
    ({"schedule_conservativeness": -1}, "schedule_conservativeness must be non-negative"),
    ({"retraction_policy": "priority"}, "--retraction-policy priority requires --enable-priority-scheduling"),
    ({"enable_priority_scheduling": True, "schedule_policy": "lpm"},
     "To use priority scheduling, schedule_policy must be 'fcfs' or 'lof'. 'lpm' is not supported."),
    ({"tokenizer_worker_num": 0}, "Tokenizer worker num must >= 1"),
]
TAKEN = [
    {"served_model_name": "s3://bucket/kimi:k2"},  # an object-storage URI may hold a colon
    {"enable_priority_scheduling": True, "retraction_policy": "priority"},
    {"enable_priority_scheduling": True, "schedule_policy": "lof"},
    {"enable_torch_compile": True},
    {"schedule_conservativeness": 0.5},
]


def _server(args: dict, context: dict | None = None, **server) -> ServerSettings:
    """The server section as a study file gives it (a file's context; None: as a stored study is read)."""
    data = {"backend": "sim", "model_path": "moonshotai/Kimi-K2.6", "draft_model_path": "d", "tp_size": 8,
            "args": args, **server}
    return ServerSettings.model_validate(data, context={} if context is None else context)


def _argv(args: dict) -> list[str]:
    out = []
    for name, value in args.items():
        flag = "--" + name.replace("_", "-")
        out += [flag] if value is True else [flag, str(value)]
    return out


@pytest.mark.parametrize("args, sglang_says", REFUSED, ids=[next(iter(a)) for a, _ in REFUSED])
def test_the_study_file_refuses_what_sglangs_launch_check_refuses(args, sglang_says):
    with pytest.raises(ValidationError) as err:
        _server(args)
    line = str(err.value.errors()[0]["msg"])
    assert "\n" not in line and "args: " in line and sglang_says in line, line
    assert "SGLang 0.5.23 refuses every launch before loading" in line, line


def test_a_model_path_with_a_colon_is_named_when_no_served_model_name_is_given():
    with pytest.raises(ValidationError) as err:
        _server({}, model_path="/models/kimi:k2")
    line = str(err.value.errors()[0]["msg"])
    assert "model_path: '/models/kimi:k2'" in line and "served_model_name: kimi-k2" in line, line
    _server({"served_model_name": "kimi-k2"}, model_path="/models/kimi:k2")  # named otherwise, it starts


@pytest.mark.parametrize("args, sglang_says", REFUSED, ids=[next(iter(a)) for a, _ in REFUSED])
def test_a_stored_study_is_read_back_as_it_measured(args, sglang_says):
    # a study the simulator ran before the check existed keeps its figures readable (status, export)
    data = {"backend": "sim", "model_path": "m", "draft_model_path": "d", "tp_size": 8, "args": args}
    assert ServerSettings.model_validate(data).args == args


@pytest.mark.parametrize("args", TAKEN)
def test_what_sglang_takes_loads(args):
    assert _server(args).args == args


@pytest.mark.parametrize("args, sglang_says", REFUSED, ids=[next(iter(a)) for a, _ in REFUSED])
def test_the_simulator_refuses_them_before_it_loads(args, sglang_says):
    ns = parse_args(["--model-path", "m", *_argv(args)])
    with pytest.raises((AssertionError, ValueError)) as err:
        resolve_launch(ns, logging.getLogger("test"))
    assert sglang_says in str(err.value)


@pytest.mark.parametrize("args", TAKEN)
def test_the_simulator_takes_what_sglang_takes(args):
    plan = resolve_launch(parse_args(["--model-path", "m", *_argv(args)]), logging.getLogger("test"))
    assert plan.server_args["schedule_policy"] == args.get("schedule_policy", "fcfs")
