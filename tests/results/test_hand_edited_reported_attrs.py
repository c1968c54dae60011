"""A measured trial whose stored limits, lossless check, warnings or per-concurrency figure keys
were edited by hand (sqlite3 on the study's file) or written by another tool: status, pareto,
export and report each go on, the trial shown as ``unreadable: <attribute, what is wrong>``
(tuner/engine/records.py, attrs_problem). QA, qa175: each edit here ended a reader in a traceback."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from support.cli_in_process import tuner_here
from support.model_study import make_model_study
from support.prepared_once import prepared_once

from tuner.engine.records import attrs_problem


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    # run once per session, whichever xdist worker asks first; each worker reads its own copy
    return prepared_once(tmp_path_factory, "reported", lambda folder: make_model_study(folder, "ed", n_trials=6)) \
        / "ed.yaml"


#: (the edits of trial 3, a measured one: attribute -> its JSON text, inserted when not stored;
#: what the unreadable line says; the trial, when not 3: 6 is an invalid one)
EDITS = [
    ({"tok_per_s@x": "5.0"}, "tok_per_s@x does not name a concurrency"),
    ({"speedup@0": "1.5"}, "speedup@0 does not name a concurrency"),
    ({"slo_checks": '"x"'}, "slo_checks 'x' is not a list"),
    ({"slo_checks": '[{"ok": false}]'}, "slo_checks entry {'ok': False} is not"),
    ({"slo_checks": '[{"concurrency": 32, "limit": "ttft_p99_ms", "limit_ms": 2000, "measured_ms": "slow", '
                    '"ok": false, "excess": 0.1}]'}, "slo_checks entry"),
    ({"lossless_flag": "true", "lossless_share": '"half"'}, "lossless_share 'half' is not a share from 0 to 1"),
    ({"lossless_compared": "3"}, "lossless_compared is stored without lossless_share"),
    ({"lossless_flag": "true"}, "lossless_flag is stored without lossless_share"),
    ({"lossless_compared": "3", "lossless_share": "0.5", "lossless_first_divergence": "5"},
     "lossless_first_divergence 5 is not"),
    ({"lossless_compared": "3", "lossless_share": "0.5", "lossless_identical": '"x"'},
     "lossless_identical 'x' is not a whole number"),
    ({"server_args": "5"}, "server_args 5 is not a mapping"),
    ({"worker": "5"}, "worker 5 is not {host, pid, start}"),
    ({"effective_key": '["a"]'}, "effective_key ['a'] is not text"),
    ({"effective_key": '{"steps": 5}'}, "effective_key {'steps': 5} is not text"),
    ({"failure_class": '["oom"]'}, "failure_class ['oom'] is not text", 6),
    ({"file_warnings": "5"}, "file_warnings 5 is not a list of text"),
    ({"file_warnings": "[5]"}, "file_warnings [5] is not a list of text"),
]

READERS = [["status"], ["status", "-f", "json"], ["pareto"], ["pareto", "-f", "csv"], ["export", "--pick", "knee"],
           ["export", "--pick", "N"], ["report"]]


@pytest.mark.parametrize("edits, why, number", [(*e, 3)[:3] for e in EDITS],
                         ids=[",".join(f"{k}={v}" for k, v in e[0].items()) for e in EDITS])
def test_every_reader_goes_on_past_an_edited_trial(measured, tmp_path, edits, why, number):
    for f in ("ed.yaml", "ed.db"):
        shutil.copy(measured.parent / f, tmp_path / f)
    con = sqlite3.connect(tmp_path / "ed.db")
    try:
        (tid,) = con.execute("SELECT trial_id FROM trials JOIN studies USING (study_id) WHERE study_name = 'ed' "
                             "AND number = ?", (number,)).fetchone()
        assert con.execute("SELECT value_json FROM trial_user_attributes WHERE trial_id = ? AND key = 'status'",
                           (tid,)).fetchone() == ('"measured"' if number == 3 else '"invalid"',)
        for key, value in edits.items():
            con.execute("DELETE FROM trial_user_attributes WHERE trial_id = ? AND key = ?", (tid, key))
            con.execute("INSERT INTO trial_user_attributes (trial_id, key, value_json) VALUES (?, ?, ?)",
                        (tid, key, value))
        con.commit()
    finally:
        con.close()
    path = str(tmp_path / "ed.yaml")
    for args in READERS:
        more = ["-o", str(tmp_path / "r.html")] if args[0] == "report" else [
            str(number) if a == "N" else a for a in args[1:]]
        r = tuner_here("study", args[0], path, *more)
        assert r.exception is None or isinstance(r.exception, SystemExit), (args, repr(r.exception))
        if args[1:] == ["--pick", "N"]:  # the edited trial itself: refused, with why
            assert r.exit_code == 1 and why in r.output, (args, r.output)
        else:
            assert r.exit_code == 0, (args, r.output)
        if args[0] == "export" and args[2] == "knee":
            assert f"-> trial {number}\n" not in r.output, r.output
    r = tuner_here("study", "status", path, "-f", "json")
    assert r.exit_code == 0 and f"unreadable: {why}" in r.output, r.output


def test_what_the_tuner_writes_passes():
    """The shapes the writers store (tuner.engine.limits, tuner.bench.lossless, tuner.engine.finish)
    are not unreadable."""
    good = {"status": "measured", "effective": {"num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4},
            "tok_per_s@32": 719.2, "speedup@32": 0.94,
            "slo_checks": [{"concurrency": 32, "limit": "ttft_p99_ms", "limit_ms": 2000, "measured_ms": None,
                            "ok": False, "excess": 1.0},
                           {"concurrency": 1, "limit": "tpot_p50_ms", "limit_ms": 20.0, "measured_ms": 12.5,
                            "ok": True, "excess": -0.375}],
            "lossless_share": 0.5, "lossless_compared": 4, "lossless_identical": 2,
            "lossless_first_divergence": {"prompt": "p1", "max_tokens": 64, "repeat": 0, "position": 17},
            "lossless_mismatches": [{"prompt": "p1", "max_tokens": 64, "repeat": 0, "position": 17}],
            "lossless_min_share": 0.9, "lossless_flag": True, "lossless_enforced": False,
            # SGLang reports arguments of any JSON shape (/server_info): lists and mappings too
            "server_args": {"mem_fraction_static": 0.85, "trust_remote_code": True, "model_path": "m",
                            "gc_threshold": [700, 10, 10], "cuda_graph_config": {"decode": {"max_bs": 16}}},
            "worker": {"host": "gpu-1", "pid": 4242, "start": 1765090000.0},
            "file_warnings": ["log not written: disk full"]}
    assert attrs_problem(good) is None
    assert attrs_problem({**good, "lossless_identical": 5}) == "lossless_identical 5 is more than lossless_compared 4"
    assert attrs_problem({**good, "lossless_min_share": 1.5}) == "lossless_min_share 1.5 is not a share from 0 to 1"
    # export names the host of a trial SGLang measured: (record.attrs.get("worker") or {}).get("host")
    assert attrs_problem({**good, "worker": ["gpu-1"]}) == "worker ['gpu-1'] is not {host, pid, start}"
    assert attrs_problem({**good, "lossless_enforced": "yes"}) == "lossless_enforced 'yes' is not true or false"
