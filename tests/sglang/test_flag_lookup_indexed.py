"""Flag lookups in SGLang's option table answer as argparse does, without scanning the table.

QA: a study file with 5,000 ``server.extra_args`` flags took 83 s to check, each lookup scanning
all 531 options; the table now keeps indexes, and these tests hold it to the answers of a scan.
"""

from __future__ import annotations

import dataclasses

from tuner.sglang.server_args import server_args_table


class _CountingOptions(tuple):
    """The table's options, counting how often something walks them."""

    walks = 0

    def __iter__(self):
        type(self).walks += 1
        return super().__iter__()


def _scan(options, flag):
    """argparse's answer by a plain scan: an exact flag, else a unique prefix (allow_abbrev)."""
    exact = [o for o in options if flag in o.flags]
    if exact:
        return exact[0]
    prefixed = {o.dest: o for o in options if any(f.startswith(flag) for f in o.flags)}
    return next(iter(prefixed.values())) if len(prefixed) == 1 else None


def test_lookups_agree_with_a_scan_of_every_flag_and_prefix():
    table = server_args_table()
    flags = sorted({f for o in table.options for f in o.flags})
    probes = set(flags) | {f[:n] for f in flags for n in range(2, len(f))} | {"--no-such-flag", "--", "-"}
    wrong = [p for p in sorted(probes) if table.option_for_flag(p) != _scan(table.options, p)]
    assert not wrong, wrong[:10]
    assert table.option_for_flag("--cuda-graph-max-bs") is None  # ambiguous: -decode and -prefill
    assert table.option_for_flag("--model").dest == "model_path"  # SGLang's alias
    for o in table.options:
        assert table.option(o.dest) == next(x for x in table.options if x.dest == o.dest)


def test_repeated_lookups_do_not_walk_the_options():
    base = server_args_table()
    table = dataclasses.replace(base, options=_CountingOptions(base.options))
    table.option_for_flag("--tp")  # the indexes are built once
    _CountingOptions.walks = 0
    for _ in range(200):
        assert table.option_for_flag("--tp-size").dest == "tp_size"
        assert table.option_named("speculative_num_steps").dest == "speculative_num_steps"
        table.reads_as_option("--port=1 x")
    assert _CountingOptions.walks == 0
