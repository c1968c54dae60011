"""ServerSettings.with_extra_args: the one place a study's server arguments get what
``server.extra_args`` sets laid over them (the study's checks, the rules' context and the launcher's
attention-DP cap read it), as SGLang's argparse reads argv appended last."""

from __future__ import annotations

from tuner.config.study import ServerSettings


def server(**kw) -> ServerSettings:
    return ServerSettings(model_path="m", **kw)


def test_server_args_with_what_extra_args_sets():
    s = server(args={"mem_fraction_static": 0.8}, extra_args=["--page-size", "16", "--disable-radix-cache"])
    assert s.with_extra_args() == {"mem_fraction_static": 0.8, "page_size": 16, "disable_radix_cache": True}


def test_given_args_stand_in_for_server_args_and_extra_args_win():
    """A caller's own args (fixed ones included) replace server.args; the last value given wins."""
    s = server(args={"mem_fraction_static": 0.8}, extra_args=["--page-size=8", "--max-running-requests", "7"])
    assert s.with_extra_args({"page_size": 1, "dp_size": 2}) == {"page_size": 8, "dp_size": 2,
                                                                 "max_running_requests": 7}


def test_flags_sglang_does_not_know_are_left_out_and_nothing_is_changed():
    s = server(args={"page_size": 4}, extra_args=["--no-such-flag", "3"])
    given = {"page_size": 2}
    assert s.with_extra_args(given) == {"page_size": 2}
    assert given == {"page_size": 2} and s.args == {"page_size": 4}
