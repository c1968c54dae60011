"""`tuner study report -o PAGE --png DIR` where the page is the folder itself or one of its charts:
one line naming -o, exit 2, nothing written (the page is never renamed over by a chart)."""

from __future__ import annotations

import pytest
from support.cli_in_process import tuner_here
from support.model_study import make_model_study


@pytest.fixture(scope="module")
def study_file(tmp_path_factory):
    return make_model_study(tmp_path_factory.mktemp("pages"), "pg", n_trials=2)


def test_a_page_named_as_the_png_folder_is_one_line(study_file, tmp_path):
    """QA: `report -o same --png same` made the folder `same`, then ended in IsADirectoryError's
    traceback, exit 1."""
    r = tuner_here("study", "report", str(study_file), "-o", "same", "--png", "same", cwd=tmp_path)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: -o: same: is the --png folder same"), r.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("through_a_link", ["no", "folder", "page"])
def test_a_page_named_as_a_chart_is_refused_before_anything_is_written(study_file, tmp_path, through_a_link):
    """QA: `report -o pp/pareto.png --png pp` said `report: pp/pareto.png` and `9 PNGs in pp`, exit 0,
    and the page was gone: the Pareto chart had been renamed over it. Also through a link to the
    folder (`-o link/pareto.png --png pp`), and through a link to the chart itself (`-o page.html`, a
    link to pp/pareto.png: the page is written through it)."""
    pngs = tmp_path / "pp"
    pngs.mkdir()
    (pngs / "pareto.png").write_bytes(b"old")
    page = pngs / "pareto.png"
    if through_a_link == "folder":
        (tmp_path / "link").symlink_to(pngs)
        page = tmp_path / "link" / "pareto.png"
    elif through_a_link == "page":
        page = tmp_path / "page.html"
        page.symlink_to(pngs / "pareto.png")
    r = tuner_here("study", "report", str(study_file), "-o", str(page), "--png", str(pngs))
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: -o: ") and "is the chart pareto.png" in lines[0], r.output
    assert [p.name for p in pngs.iterdir()] == ["pareto.png"]  # no chart, no temporary folder left
    assert (pngs / "pareto.png").read_bytes() == b"old"


def test_a_page_in_the_png_folder_under_its_own_name_is_written_with_the_charts(study_file, tmp_path):
    pngs = tmp_path / "pp"
    pngs.mkdir()
    r = tuner_here("study", "report", str(study_file), "-o", str(pngs / "page.html"), "--png", str(pngs))
    assert r.exit_code == 0, r.output
    assert "figure-data" in (pngs / "page.html").read_text() and (pngs / "pareto.png").read_bytes()[:4] == b"\x89PNG"
