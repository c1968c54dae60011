"""`tuner study report --png` where matplotlib's own folders cannot be written: a read-only HOME.
QA (qa157): matplotlib printed its warning on stderr ("mkdir -p failed ... Matplotlib created a temporary cache directory ... it is highly recommended to
set the MPLCONFIGDIR environment variable ..."); now the tuner gives it a private temporary folder
(tuner.results.report_plots.matplotlib_config_dir), removed when the command ends, and nothing is
printed. The command runs in a new user namespace (``unshare --user``, no uid mapped), where a
folder of mode 0555 cannot be written, by root as by any user.
"""

from __future__ import annotations

import os
import subprocess
import sys

from support.model_study import make_model_study


def test_png_report_with_a_read_only_home_prints_nothing_of_matplotlib(tmp_path):
    study = make_model_study(tmp_path, "png", n_trials=2)
    ro = tmp_path / "rohome"
    ro.mkdir(mode=0o555)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("HOME", "MPLCONFIGDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")}
    env["TMPDIR"] = str(tmp)  # where the temporary folder is made, to see it removed
    env["HOME"] = str(ro)
    done = subprocess.run(["unshare", "--user", sys.executable, "-m", "tuner", "study", "report", str(study),
                           "-o", "page.html", "--png", "charts"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.splitlines()[0] == "report: page.html"
    assert sorted(p.name for p in (tmp_path / "charts").iterdir()) and (tmp_path / "page.html").is_file()
    assert list(tmp.iterdir()) == [] and list(ro.iterdir()) == []  # the temporary folder removed
