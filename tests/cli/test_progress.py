"""The live view of `tuner study run`: plain lines off a terminal, a rich panel on one."""

import io
import re

from rich.console import Console

from tuner.cli.progress import RunView, phase_text

EVENTS = [
    ("trial_start", {"trial": "baseline", "spec": None}),
    ("phase", {"phase": "launching", "label": "baseline"}),
    ("phase", {"phase": "warmup", "prompt": "fib", "max_tokens": 8, "repeat": 0, "step": 1, "total_steps": 9}),
    ("trial_start", {"trial": 0, "spec": "steps=3 topk=1 draft=4", "requested": "steps=3 topk=1 draft=4"}),
    ("phase", {"phase": "single", "prompt": "json", "max_tokens": 256, "repeat": 0, "step": 3, "total_steps": 9}),
    ("phase", {"phase": "sweep", "concurrency": 32, "max_tokens": 128, "repeat": 0, "step": 8, "total_steps": 9}),
    ("trial_done", {"trial": 0, "spec": "steps=3 topk=1 draft=4", "status": "measured",
                    "values": [2.297, 0.951], "failure_class": None}),
    ("progress", {"measured": 1, "n_trials": 4, "elapsed_s": 65.0, "eta_s": 195.0}),
    ("trial_skip", {"trial": 1, "spec": "steps=2 topk=4 draft=30", "why": "invalid (tree-too-large)"}),
    ("trial_start", {"trial": 2, "spec": "steps=5 topk=8 draft=58", "requested": "steps=5 topk=8 draft=58"}),
    ("phase", {"phase": "stopping", "label": "trials/2"}),
    ("trial_done", {"trial": 2, "spec": "steps=5 topk=8 draft=58", "status": "failed", "values": None,
                    "failure_class": "oom"}),
    ("trial_start", {"trial": 3, "spec": "steps=1 topk=1 draft=2", "requested": "steps=1 topk=1 draft=3"}),
    ("trial_done", {"trial": 3, "spec": "steps=1 topk=1 draft=2", "status": "measured",
                    "values": [1.576, 1.017], "failure_class": None}),
    ("waiting", {"for": "trial 7 measuring steps=1 topk=1 draft=2"}),
    ("reaped", {"trials": [5]}),
    ("finished", {"summary": {}}),
]

PLAIN = [
    "baseline (autoregressive): launching",
    "trial 0: steps=3 topk=1 draft=4: launching",
    "trial 0: measured (2.297, 0.951)",
    "1 launched this run; elapsed 1m05s, ETA 3m15s",
    "trial 1: steps=2 topk=4 draft=30 skipped, invalid (tree-too-large)",
    "trial 2: steps=5 topk=8 draft=58: launching",
    "trial 2: failed (oom)",
    "trial 3: steps=1 topk=1 draft=2: launching",
    "trial 3: measured (1.576, 1.017)",
    "waiting for trial 7 measuring steps=1 topk=1 draft=2",
    "trials [5] were left running by a dead worker: failed and queued again",
]


def _strip_time(lines):
    out = []
    for line in lines:
        m = re.fullmatch(r"\[\d+m\d\ds\] (.*)", line)
        assert m, f"not a plain log line: {line!r}"
        out.append(m.group(1))
    return out


def test_plain_mode_prints_one_line_per_trial_event(capsys):
    with RunView() as view:  # stdout is captured by pytest: not a terminal
        assert not view.is_live
        for kind, info in EVENTS:
            view.event(kind, info)
    out = capsys.readouterr().out
    assert "\x1b" not in out  # no control characters in log files
    assert _strip_time(out.splitlines()) == PLAIN


def test_plain_mode_on_a_non_terminal_console():
    buf = io.StringIO()
    view = RunView(Console(file=buf, width=40))
    assert not view.is_live
    for kind, info in EVENTS:
        view.event(kind, info)
    view.close()
    assert _strip_time(buf.getvalue().splitlines()) == PLAIN  # long lines are not wrapped at 40 columns


def test_live_mode_tracks_trial_phase_eta_and_best():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=120, color_system=None)
    view = RunView(console, objectives=["single_speedup", "speedup@32"])
    try:
        assert view.is_live
        shown = []
        for kind, info in EVENTS:
            view.event(kind, info)
            shown.append(_render(view))
        assert "trial 0: steps=3 topk=1 draft=4" in shown[4] and "single requests (json, 256 tokens)" in shown[4]
        assert "sweep at C=32" in shown[5] and "step 8/9" in shown[5]
        assert "stopping the server" in shown[10]
        assert "launching the server" in shown[1]
        assert "warming up" in shown[2]
        assert "1 of 4 this run" in shown[7] and "ETA 3m1" in shown[7]
        # best so far per objective, from different trials
        assert "single_speedup: 2.297 (trial 0)" in shown[-1] and "speedup@32: 1.017 (trial 3)" in shown[-1]
        assert "finished" in shown[-1]
    finally:
        view.close()
    view.close()  # twice is fine
    out = buf.getvalue()
    for line in PLAIN:  # the log lines are printed above the panel
        assert line in out
    assert "tuner study run" in out


def test_phase_texts():
    assert phase_text({"phase": "sweep", "concurrency": 8}) == "sweep at C=8"
    assert phase_text({"phase": "warmup"}) == "warming up"
    assert phase_text({"phase": "something new"}) is None


def test_pruned_trials_and_modelled_time(capsys):
    with RunView() as view:
        view.event("trial_done", {"trial": 6, "spec": "steps=1 topk=8 draft=8", "status": "pruned", "values": None,
                                  "pruned_at": "probe", "pruned_by": 0})
        view.event("progress", {"measured": 7, "n_trials": None, "elapsed_s": 2.0, "eta_s": None,
                                "model_elapsed_s": 3 * 3600 + 25 * 60})
    assert _strip_time(capsys.readouterr().out.splitlines()) == [
        "trial 6: pruned (after probe; trial 0 dominates it)",
        "7 launched this run; elapsed 0m02s, modelled GPU time 3h25m, ETA ?"]
    assert phase_text({"phase": "stage", "stage": "single 2/3"}) == "stage single 2/3"
    assert phase_text({"phase": "pruned", "stage": "probe", "by": 4}) == "decided after probe: stopping (trial 4 dominates it)"


def _render(view) -> str:
    c = Console(file=io.StringIO(), width=120, color_system=None)
    c.print(view.render())
    return c.file.getvalue()


INFO = {"signal": "SIGINT", "servers": [{"pid": 4242, "grace_s": 30.0, "url": "http://127.0.0.1:1"}]}


def test_a_signal_freezes_the_panel_and_says_what_happens():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=160, color_system=None)
    view = RunView(console, objectives=["single_speedup", "speedup@32"])
    for kind, info in EVENTS[:6]:  # trial 0, sweep at C=32
        view.event(kind, info)
    view.on_signal("stopping", INFO)  # as the signal handler calls it
    frozen = _render(view)
    assert "sweep at C=32" in frozen and "(interrupted)" in frozen
    for kind, info in EVENTS[6:]:  # whatever happens after the signal does not move the panel
        view.event(kind, info)
    assert _render(view) == frozen
    view.on_signal("killing", INFO)
    view.close()
    out = buf.getvalue()
    stopping = ("Ctrl-C: stopping the server (pid 4242: SIGTERM, SIGKILL after 30 s); press Ctrl-C again to "
                "kill it now. A running trial is queued again (if the storage does not answer, by the next "
                "tuner study run).")
    assert stopping in out
    assert "Ctrl-C again: killing the server's process group (pid 4242) with SIGKILL now" in out
    assert out.index(stopping) > out.rindex("(interrupted)")  # the notice comes under the frozen panel


def test_interrupt_texts():
    from tuner.cli.progress import interrupt_text

    term = {**INFO, "signal": "SIGTERM"}
    assert "press SIGTERM or Ctrl-C again" in interrupt_text("stopping", term)
    assert interrupt_text("stopping", {"signal": "SIGINT", "servers": []}) == "Ctrl-C: stopping (no server is running)"


def test_a_signal_while_the_storage_is_away_during_recording_says_the_measurement_is_kept():
    # (QA: SIGTERM while the storage was down said "queued again"; the journal entry was replayed)
    def notice(events) -> str:
        buf = io.StringIO()
        console = Console(file=buf, force_terminal=False, width=200, color_system=None)
        view = RunView(console, objectives=["a"])
        for kind, info in events:
            view.event(kind, info)
        view.on_signal("stopping", {**INFO, "signal": "SIGTERM"})
        view.close()
        return buf.getvalue()

    start = [EVENTS[3], ("phase", {"phase": "recording", "label": "trials/0"})]
    down = ("storage_down", {"storage": "postgresql://u:***@h/db", "error": "refused", "patience_s": 600})
    back = ("storage_back", {"storage": "postgresql://u:***@h/db", "after_s": 3.0})
    kept = "The measurement is kept in the journal: the next tuner study run on this host stores it."
    assert kept in notice(start + [down]) and "queued again" not in notice(start + [down])
    for events in (start, start + [down, back]):  # storage up, or back
        out = notice(events)
        assert "A running trial is queued again (" in out and kept not in out, out
    # not recording yet, the storage said away: the cleanup leaves the trial RUNNING (unreachable_now)
    # for the next run's reaper, as the last line says (QA, qa158: the notice said "queued again.")
    out = notice([EVENTS[3], down])
    assert "a running trial is left for the next tuner study run" in out and "queued again (" not in out, out
    assert kept not in out, out


def test_a_line_quoting_user_text_is_printed_escaped(capsys):
    # a failure or warning that quotes a dataset request's name (its id) or a server's message: the
    # bidi override and ESC it holds are printed escaped (tuner.config.names.shown), not obeyed
    with RunView() as view:
        view.event("warning", {"trial": 3, "message": "request x\u202ey: HTTP 400: \x1b[2Jgone"})
    out = capsys.readouterr().out
    assert _strip_time(out.splitlines()) == ["warning: trial 3: request x\\u202ey: HTTP 400: \\x1b[2Jgone"]


def test_the_notice_at_a_signal_does_not_promise_a_queue_the_cleanup_may_leave_to_the_next_run():
    # A storage frozen under a call has said nothing when the signal lands (no storage_down yet); the
    # cleanup may then find it away and leave the trial for the next run's reaper (tuner/cli/study.py:
    # "trial N was running and is left so ..."). QA, qa158: the notice said "A running trial is queued
    # again." without a word of that.
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=300, color_system=None)
    view = RunView(console, objectives=["a"])
    for kind, info in EVENTS[3:6]:
        view.event(kind, info)
    view.on_signal("stopping", {**INFO, "signal": "SIGTERM"})
    view.close()
    out = buf.getvalue()
    assert "SIGTERM: stopping the server" in out, out
    assert "if the storage does not answer, by the next tuner study run" in out, out
