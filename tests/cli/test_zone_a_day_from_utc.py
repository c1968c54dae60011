"""A ``TZ`` a day or more from UTC (``UTC+24``, ``<+25>-25``: the C library takes offsets up to
24:59:59). Optuna hands trial times back in the local zone, which Python's ``datetime`` cannot hold
at such an offset: every ``tuner study`` command that read trials ended in a traceback, and ``run``
only after it had created the study and queued its seed trials (QA, qa168). Now one line naming
``TZ`` and the fix, exit 2, nothing written. A zone short of a day, with summer time or unknown to
the C library (read as UTC), works as before.

Real processes: ``TZ`` is read when Python starts.
"""

import os
import subprocess
import sys

import pytest

from support.model_study import model_study_yaml

STUDY = model_study_yaml("zone", "sqlite:///zone.db", 2, noise=0.02, seed=1)


def _tuner(cwd, zone: str, *args):
    env = {**os.environ, "TZ": zone}
    done = subprocess.run([sys.executable, "-m", "tuner", *args], cwd=cwd, env=env, timeout=300,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("zone", ["UTC+24", "<+25>-25"])
def test_run_in_a_zone_a_day_from_utc_is_refused_in_one_line_before_anything_is_written(tmp_path, zone):
    (tmp_path / "zone.yaml").write_text(STUDY)
    code, _, err = _tuner(tmp_path, zone, "study", "run", "zone.yaml")
    assert code == 2, err
    assert err.splitlines() == [err.strip()] and err.startswith(f"error: TZ={zone!r}") and "unset it" in err
    assert not (tmp_path / "zone.db").exists()


def test_a_zone_short_of_a_day_with_summer_time_or_unknown_runs_and_reads(tmp_path):
    (tmp_path / "zone.yaml").write_text(STUDY)
    code, _, err = _tuner(tmp_path, "<-2359>23:59", "study", "run", "zone.yaml")
    assert code == 0, err
    for zone in ("CET-1CEST,M3.5.0,M10.5.0/3", "Nowhere/Else"):
        code, out, err = _tuner(tmp_path, zone, "study", "status", "zone.yaml", "-f", "csv")
        assert code == 0, err
        # the seed trials the budget did not reach wait in the queue
        launched = [row for row in out.splitlines()[1:] if ",WAITING," not in row]
        assert len(launched) == 2, out  # the study's two launches
