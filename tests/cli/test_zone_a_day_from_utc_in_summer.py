"""A ``TZ`` whose summer time is a day or more from UTC while its January and July are not
(``STD0DST-24:30,M3.1.0,M4.1.0``: summer time in March only). Python reads ``time.timezone`` and
``time.altzone`` in January and July alone, so the study group's zone check passed it, and a run on
a day of that summer time ended in Optuna's traceback (``offset must be a timedelta strictly
between ...``) after it had created the study (QA, qa174: in December with
``STD0DST-24:30,M12.1.0/0,M12.5.6/23``). The zone's offsets over a whole year are checked now: one
line naming ``TZ``, exit 2, nothing written, whatever the date.

Real processes: ``TZ`` is read when Python starts.
"""

import os
import subprocess
import sys

import pytest

from support.model_study import model_study_yaml

STUDY = model_study_yaml("zone", "sqlite:///zone.db", 2, noise=0.02, seed=1)


@pytest.mark.parametrize("zone", ["STD0DST-24:30,M3.1.0,M4.1.0", "<-01>1<+24>-24,M9.1.0,M11.1.0"])
def test_a_summer_time_a_day_from_utc_outside_january_and_july_is_refused(tmp_path, zone):
    (tmp_path / "zone.yaml").write_text(STUDY)
    done = subprocess.run([sys.executable, "-m", "tuner", "study", "run", "zone.yaml"], cwd=tmp_path,
                          env={**os.environ, "TZ": zone}, timeout=300, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True)
    err = done.stderr
    assert done.returncode == 2, err
    assert err.splitlines() == [err.strip()] and err.startswith(f"error: TZ={zone!r}") and "unset it" in err
    assert not (tmp_path / "zone.db").exists()
