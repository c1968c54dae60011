"""``server.args`` (and a space's ``fixed``) is checked one argument at a time, in the file's order:
the first wrong one ends the check (tuner/config/server_arg_checks.py ``check_server_args``).

QA: every name was looked up in SGLang's table for the reserved and unmeasurable flags before any
was checked to exist; each lookup scans the table's 531 options, so a 3.7 MB study file (within the
4 MiB cap) of 200,000 unknown names ran `study run --dry-run` for 198 s before its one-line refusal
(20,000 in the demo study: 24 s before "k0: not a server argument"), and a reserved name after an
unknown one was reported first.
"""

import pytest

from tuner.config.server_arg_checks import check_server_args
from tuner.sglang.server_args import ServerArgsTable


def test_the_first_wrong_argument_in_the_file_s_order_is_reported():
    with pytest.raises(ValueError, match=r"^k0: not a server argument"):
        check_server_args({"mem_fraction_static": 0.8, "k0": 1, "port": 8000}, "server.args")
    with pytest.raises(ValueError, match=r"^'port' is searched or set by the tuner"):
        check_server_args({"mem_fraction_static": 0.8, "port": 8000, "k0": 1}, "server.args")


def test_many_unknown_names_cost_the_lookups_of_the_first(monkeypatch):
    lookups = []
    real = ServerArgsTable.option_for_flag

    def counted(self, flag):  # the real lookup, counted
        lookups.append(flag)
        return real(self, flag)

    monkeypatch.setattr(ServerArgsTable, "option_for_flag", counted)
    with pytest.raises(ValueError, match=r"^k0: not a server argument"):
        check_server_args({f"k{i}": i for i in range(2000)}, "server.args")
    assert 0 < len(lookups) <= 10 and "--k1" not in lookups


def test_valid_arguments_are_all_kept_under_sglang_s_names():
    assert check_server_args({"mem_fraction_static": 0.8, "attention_back": "triton", "trust_remote_code": True},
                             "server.args") == {"mem_fraction_static": 0.8, "attention_backend": "triton",
                                                "trust_remote_code": True}
