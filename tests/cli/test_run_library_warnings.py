"""A warning of the tuner's own layers during `tuner study run` is one of the run's lines (QA, qa222).

On a disk filled mid-run (a 2 MB tmpfs as the workdir, filled once the baseline's server record was
written), the launcher could not add the server's processes to that record, and Python's last-resort
handler printed its bare log message on stderr between the run's lines: ``server record not updated
with the group's members (/tmp/.../servers): No space left on device``, saying neither what it meant
nor what became of the server. Now it is a run line, ``[0m04s] warning: server pid N: its record in
DIR could not be updated with its processes (No space left on device); nothing is lost: ...``.

Here the record's update alone is refused as a full disk refuses it (``ENOSPC``); the run is real
(the simulator, in-process CLI)."""

from __future__ import annotations

import errno
import re

from support.cli_in_process import tuner_here
from support.demo_study import demo_study

from tuner.server.orphans import ServerRecord

SUITE = {"name": "tiny", "prompts": [{"name": "p", "text": "Write a haiku about autumn leaves."}],
         "single": {"lengths": [16], "repeats": 1}, "sweep": {"concurrencies": [32], "max_tokens": 16},
         "warmup": {"requests": 1, "max_tokens": 4}, "timeout_s": 300, "ignore_eos": True}


def test_a_record_the_full_disk_refuses_is_a_run_line_saying_what_it_means(tmp_path, monkeypatch):
    path = demo_study(tmp_path, "full", **{"bench.suite": SUITE, "budget.n_trials": 1,
                                           "server.sim.speedup": 50})
    real = ServerRecord.save

    def full_disk(self, folder):
        if self.members:  # the update made once the server is ready; the record written at launch is kept
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, folder)

    monkeypatch.setattr(ServerRecord, "save", full_disk)
    r = tuner_here("study", "run", str(path), cwd=tmp_path)
    assert r.exit_code == 0, r.output
    said = [line for line in r.output.splitlines() if "could not be updated with its processes" in line]
    # one per server launched: the baseline's and the trial's, and a baseline measured again when a
    # loaded machine made the trial read too fast over it (CI, at load: three launches, three lines)
    launches = [line for line in r.output.splitlines() if line.endswith(": launching")]
    assert len(launches) >= 2 and len(said) == len(launches), r.output
    assert len({re.search(r"server pid (\d+)", line).group(1) for line in said}) == len(said), said
    for line in said:
        assert re.fullmatch(r"\[\dm\d\ds\] warning: server pid \d+: its record in .*/work/servers could not be "
                            r"updated with its processes \(No space left on device\); nothing is lost: it is "
                            r"stopped as usual, and if this tuner dies first the next run still stops it by "
                            r"the record written at its launch", line), line
    assert "record not updated" not in r.stderr, r.stderr
    assert not list((tmp_path / "work" / "servers").glob("*.json"))  # every server was stopped, its record gone
