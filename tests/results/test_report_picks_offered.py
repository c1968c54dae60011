"""The report marks only the picks ``tuner study export --pick`` offers for the study's objectives."""

from __future__ import annotations

import html
import re

import pytest
import yaml
from support.model_study import model_study_data

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.backends import ModelBackend
from tuner.engine.runner import run_study
from tuner.engine.study import create_study, open_study
from tuner.results.pareto import absent_pick
from tuner.results.report import render_html
from tuner.results.report_data import load_report_data


def one_objective_study(tmp_path, objective: str):
    data = model_study_data("one", seed=1)
    data["objectives"] = [objective]
    data["budget"] = {"n_trials": 4, "prune": False}
    path = tmp_path / "one.yaml"
    path.write_text(yaml.safe_dump(data))
    config = load_study(path)
    create_study(config, config.storage)
    run_study(config, config.storage, ModelBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=1),
              n_trials=4)
    return open_study("one", config.storage)


@pytest.mark.parametrize("objective, absent", [("speedup@32", "single"), ("single_speedup", "throughput")])
def test_a_pick_the_study_has_not_is_not_marked(tmp_path, objective, absent):
    """QA: on a study of `objectives: [speedup@32]` the page's front table marked trial 4 `single,
    throughput, knee`, under "Picks as `tuner study export --pick single|throughput|knee` chooses
    them", while `export --pick single` answered `the study has no single-request objective`."""
    study = one_objective_study(tmp_path, objective)
    assert absent_pick([objective], absent) is not None  # what export refuses
    data = load_report_data(study)
    assert data.front and {p.name for p in data.picks} == {"single", "throughput", "knee"} - {absent}
    page = render_html(data, [], [])
    front = html.unescape(page.split("<h3>Pareto front")[1].split("</table>")[0])
    marks = re.findall(r"<td>([a-z, ]*knee[a-z, ]*)</td></tr>", front)
    assert marks and all(absent not in m for m in marks)
    assert absent not in data.picks_note and "knee" in data.picks_note
