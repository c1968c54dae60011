"""SIGUSR1 and SIGUSR2 to `tuner study run`: what a batch scheduler sends ahead of a job's time limit
(Slurm's `sbatch --signal=USR1@120`, `scancel --signal=USR1`). As SIGTERM: the server is stopped, the
trial under way queued again, one line said, exit 128 + the signal. Real processes, real signals.

QA (qa180): both kept their default action, which ended the tuner at once (exit 138), silently: the
trial under way was left RUNNING until the next run on that host reaped it, its server ended only by
its parent-death signal; run as PID 1 (a container), the signals were ignored instead.
"""

import signal

import pytest

from support.signalled_run import signal_mid_trial
from tuner.server.signals import stop_on_signals


def test_sigusr1_stops_the_server_and_queues_the_trial_again(tmp_path):
    trials, trial = signal_mid_trial(tmp_path, "usr", signal.SIGUSR1)
    assert trials[trial].user_attrs.get("status") == "interrupted"
    assert not [t for t in trials if t.state.name == "RUNNING"]


@pytest.mark.parametrize("sig", [signal.SIGUSR1, signal.SIGUSR2])
def test_sigusr_at_its_default_action_raises_as_sigterm_does(sig):
    before = signal.signal(sig, signal.SIG_DFL)
    try:
        with pytest.raises(SystemExit) as caught:
            with stop_on_signals():
                # checked first: at its default action the signal would end this test process
                assert signal.getsignal(sig) not in (signal.SIG_DFL, signal.SIG_IGN), "no handler installed"
                signal.raise_signal(sig)
        assert caught.value.code == 128 + sig
        assert signal.getsignal(sig) is signal.SIG_DFL  # put back as it was
    finally:
        signal.signal(sig, before)


@pytest.mark.parametrize("sig", [signal.SIGUSR1, signal.SIGUSR2])
def test_sigusr_ignored_or_handled_by_the_caller_is_left_alone(sig):
    def theirs(signum, frame):
        pass

    before = signal.getsignal(sig)
    try:
        for disposition in (signal.SIG_IGN, theirs):
            signal.signal(sig, disposition)
            with stop_on_signals():
                assert signal.getsignal(sig) is disposition
                signal.raise_signal(sig)  # no exception: theirs, or ignored
            assert signal.getsignal(sig) is disposition
    finally:
        signal.signal(sig, before)
