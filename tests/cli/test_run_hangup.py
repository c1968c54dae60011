"""SIGHUP to `tuner study run` (the ssh session or terminal that started it closed): as SIGTERM, the
server is stopped, the trial under way queued again, one line said, exit 129 (128 + SIGHUP); under
`nohup` (SIGHUP ignored) the run is left to go on. Real processes, real signals.

QA: SIGHUP had its default action, which ended the tuner at once, silently, and left the trial's
server running (holding its GPUs) until the next run on that host found it.
"""

import signal

from support.signalled_run import signal_mid_trial


def test_sighup_stops_the_server_and_queues_the_trial_again(tmp_path):
    signal_mid_trial(tmp_path, "hup", signal.SIGHUP)


def test_sighup_ignored_under_nohup_stays_ignored():
    """`nohup tuner study run ...` asks to outlive the terminal: the handlers leave SIGHUP ignored."""
    from tuner.server.signals import stop_on_signals

    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with stop_on_signals():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        with stop_on_signals():
            assert signal.getsignal(signal.SIGHUP) not in (signal.SIG_DFL, signal.SIG_IGN)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGHUP, before)
