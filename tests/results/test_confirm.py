"""`tuner study confirm`: interleaved repeats stored in NAME.confirm, confirmed means with 95%
intervals, a lucky single measurement overturned, ties within noise to the cheaper setting, and
"no safe improvement" (exit 1). The noisy backend is tests/support/suite_backend.py."""

from __future__ import annotations

import copy
import pickle
import shutil
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.model_study import SPACE
from support.prepared_once import prepared_once
from support.suite_backend import SuiteBackend
from support.zygote import cli_zygote

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.confirm import BASELINE, RUN_TIME, open_confirm_study, run_confirmation
from tuner.engine.records import load_records
from tuner.engine.runner import run_study
from tuner.engine.study import create_study, open_study
from tuner.results.confirmed import (
    ConfirmedCandidate,
    Interval,
    confirm_candidates,
    decide_picks,
    load_confirmation,
)
from tuner.results.export import build_export
from tuner.results.pareto import PickError, study_front
from tuner.sglang.rules import SpecConfig

STUDY = f"""
name: noisy
search_space: {SPACE}
server: {{backend: sim, model_path: m, draft_model_path: d, tp_size: 8}}
bench: {{suite: quick}}
sampler: {{seed: 1}}
budget: {{n_trials: 10}}
# the seeds this test's lucky draw was built on (the defaults before issue 17's last change)
default_seed_trials: false
seed_trials:
  - {{speculative_num_steps: 3, speculative_eagle_topk: 1, speculative_num_draft_tokens: 4}}
  - {{speculative_num_steps: 1, speculative_eagle_topk: 1, speculative_num_draft_tokens: 3}}
  - {{speculative_num_steps: 4, speculative_eagle_topk: 4, speculative_num_draft_tokens: 16}}
  - {{speculative_num_steps: 5, speculative_eagle_topk: 8, speculative_num_draft_tokens: 32}}
"""
AUTO, SMALL = SpecConfig(3, 1, 4), SpecConfig(1, 1, 2)


def _build_lucky_study(folder: Path) -> None:
    path = folder / "noisy.yaml"
    path.write_text(STUDY)
    config = load_study(path)
    create_study(config, config.storage)
    backend = SuiteBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.005, seed=4, lucky={AUTO: 1.15})
    run_study(config, config.storage, backend, n_trials=4)
    (folder / "backend.pickle").write_bytes(pickle.dumps(backend))  # its state, for every worker


@pytest.fixture(scope="module")
def lucky_study_built(tmp_path_factory):
    """The four seed trials, run once per session (whichever xdist worker asks first): the study's
    folder and the backend as it stands after them (its noise draws and the settings it measured)."""
    folder = prepared_once(tmp_path_factory, "lucky", _build_lucky_study)
    return folder, pickle.loads((folder / "backend.pickle").read_bytes())


@pytest.fixture
def lucky_study(lucky_study_built, tmp_path):
    """The four seed trials; SGLang's automatic choice (3, 1, 4), truly 0.95x at C=32, drew a lucky
    +15% the one time the study measured it, and looks like the best throughput setting.
    Each test gets its own copy of the study's folder (SQLite file and all) and of the backend, in
    the state the four trials left it, so no test sees another's confirmation."""
    folder, backend = lucky_study_built
    shutil.copytree(folder, tmp_path, dirs_exist_ok=True)
    path = tmp_path / "noisy.yaml"
    config = load_study(path)
    return path, config, copy.deepcopy(backend), open_study(config.name, config.storage)


def test_confirmation_overturns_a_lucky_pick(lucky_study):
    path, config, backend, study = lucky_study
    before = study_front(study).throughput.record
    assert before.effective == AUTO and before.attrs["speedup@32"] > 1.05  # the lucky draw won

    candidates = confirm_candidates(study, ["single", "throughput", "knee"], near=0.1)
    assert {c.spec for c in candidates} >= {AUTO, SMALL}
    n_before = len(backend.measured)
    summary = run_confirmation(study, config, backend, candidates, repeats=3)
    assert summary.measured == 3 * (1 + len(candidates)) and not summary.failed
    # interleaved: baseline, A, B, ..., baseline, A, B, ...
    assert backend.measured[n_before:] == [None, *(c.spec for c in candidates)] * 3
    stored = [t.user_attrs for t in open_confirm_study(study).get_trials()]
    assert [(a["round"], a["candidate"]) for a in stored] == [
        (r, who) for r in range(3) for who in [BASELINE, *(c.trial for c in candidates)]]

    conf = load_confirmation(study)
    auto = next(c for c in conf.candidates if c.spec == AUTO)
    assert auto.rounds == 3 and auto.speedups[32].hi < 1.0 and auto.versus_baseline(32) == "loss"
    after = conf.picks["throughput"]
    assert after.spec == SMALL and after.speedups[32].includes(after.speedups[32].mean)
    assert after.speedups[32].lo is not None and after.speedups[32].lo < after.speedups[32].mean

    exp = build_export(study, "throughput")
    assert exp.spec == SMALL
    text = exp.yaml_text()
    assert "# confirmed: run" in text and "3 rounds interleaved with the baseline" in text
    assert "--pick throughput after confirmation" in text
    assert "speculative-num-steps: 1" in text

    r = CliRunner().invoke(cli, ["study", "confirm", str(path), "--show"])
    assert r.exit_code == 0, r.output
    assert "confirmation" in r.output and "throughput: trial" in r.output


def test_no_safe_improvement_exits_1(lucky_study):
    path, config, backend, study = lucky_study
    run_confirmation(study, config, backend, confirm_candidates(study, ["throughput", "single"], near=0.1), repeats=2)
    with pytest.raises(PickError, match=r"no safe improvement: every confirmed candidate's speedup@32 lies below 1.2"):
        load_confirmation(study, min_speedup_c32=1.2)
    out = path.parent / "best.yaml"
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", "throughput", "--min-speedup-c32", "1.2",
                                 "-o", str(out)])
    assert r.exit_code == 1 and "no safe improvement" in r.output and not out.exists()
    # what survives beyond noise is still picked
    assert build_export(study, "throughput", min_speedup_c32=0.99).spec == SMALL


def cand(trial, spec, rounds_values):
    per = {"speedup@32": dict(enumerate(rounds_values))}
    return ConfirmedCandidate(trial, spec, [], len(rounds_values), {"speedup@32": Interval.of(rounds_values)},
                              {32: Interval.of(rounds_values)}, None, per)


def test_settings_equal_within_noise_resolve_to_the_cheaper_one():
    big = cand(1, SpecConfig(2, 2, 6), [1.040, 1.010, 1.032])
    cheap = cand(2, SpecConfig(2, 1, 3), [1.030, 1.012, 1.020])
    worse = cand(3, SpecConfig(1, 1, 2), [0.95, 0.94, 0.96])
    picks, why = decide_picks([big, cheap, worse], ["speedup@32"])
    assert picks["throughput"] is cheap and "equal within noise to trial 1" in why["throughput"]
    # QA: two rounds make the interval of a difference 12.7 standard errors wide; a setting that
    # measured half as fast is "not told apart", not as good, and keeps no pick
    fast = cand(5, SpecConfig(5, 8, 32), [3.9, 2.3])
    slow = cand(6, SpecConfig(1, 1, 2), [1.1, 2.0])
    picks, why = decide_picks([fast, slow], ["speedup@32"])
    assert picks["throughput"] is fast and why["throughput"] == "best confirmed speedup@32"
    # a clear winner stays the winner, however expensive
    clear = cand(4, SpecConfig(3, 4, 16), [1.20, 1.21, 1.19])
    picks, why = decide_picks([big, cheap, clear], ["speedup@32"])
    assert picks["throughput"] is clear and why["throughput"] == "best confirmed speedup@32"


def test_a_setting_steadily_behind_is_not_equal_within_noise_and_one_within_noise_of_the_floor_is_safe():
    # 2% behind in every round, with a tight interval of the difference that excludes 0: told apart,
    # so the cheaper setting does not take the pick however close the margin (3%) lets it come
    # (mutation testing: judging by the margin alone passed every test)
    best = cand(1, SpecConfig(3, 4, 16), [1.100, 1.101, 1.099])
    cheap = cand(2, SpecConfig(1, 1, 2), [1.080, 1.081, 1.079])
    picks, why = decide_picks([best, cheap], ["speedup@32"])
    assert picks["throughput"] is best and why["throughput"] == "best confirmed speedup@32"
    # --min-speedup-c32 rules out only what lies below it beyond noise: a mean of 0.993 whose interval
    # reaches above 1.0 stays a candidate (mutation testing: judging the mean passed every test)
    near = cand(3, SpecConfig(2, 1, 3), [0.98, 1.01, 0.99])
    assert near.speedups[32].mean < 1.0 < near.speedups[32].hi
    picks, _ = decide_picks([near], ["speedup@32"], min_speedup_c32=1.0)
    assert picks["throughput"] is near


def test_confirm_refuses_bad_requests(lucky_study):
    path, *_ = lucky_study
    r = CliRunner().invoke(cli, ["study", "confirm", str(path), "--picks", "fastest"])
    assert r.exit_code == 2 and "--picks" in r.output
    r = CliRunner().invoke(cli, ["study", "confirm", str(path), "--repeats", "1"])
    assert r.exit_code == 2
    r = CliRunner().invoke(cli, ["study", "confirm", str(path), "--show"])
    assert r.exit_code == 1 and "has not been confirmed yet" in r.output


def test_confirm_names_picks_for_a_trial_that_does_not_exist(lucky_study):
    """QA: `confirm --picks 99` answered `error: --pick: study noisy has no trial 99`, naming
    export's flag, and said no fix."""
    path, *_ = lucky_study
    r = CliRunner().invoke(cli, ["study", "confirm", str(path), "--picks", "99"])
    lines = r.output.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1, r.output
    assert lines[0].startswith("error: --picks: study noisy has no trial 99; give a trial number 0..3"), lines[0]
    assert "single, throughput, knee" in lines[0]
    assert len(load_records(open_study("noisy", load_study(path).storage))) == 4  # nothing written


def test_companions_go_with_their_study_and_never_into_another_of_its_name(lucky_study, tmp_path):
    """QA: `delete` left NAME.confirm behind, and a new study of the name exported a pick from the
    old study's confirmation (trials of other settings). Now delete takes every companion, a
    companion is never read or deleted on its own while its study exists, `.confirm` names are
    reserved, and a confirmation left by another study of the name is not this study's."""
    path, config, backend, study = lucky_study
    url = config.storage
    run_confirmation(study, config, backend, confirm_candidates(study, ["throughput"], near=0.1), repeats=2)
    assert load_confirmation(study) is not None
    for args, says in ((["study", "delete", "noisy.confirm", "--storage", url, "--yes"],
                        "is the confirmation of study noisy, deleted with it"),
                       (["study", "pareto", "noisy.confirm", "--storage", url],
                        "is the confirmation companion of study noisy"),
                       (["study", "copy", "noisy", "other.confirm", "--storage", url],
                        "reserved for the confirmation companion")):
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 2 and says in r.output, (args, r.output)
    r = CliRunner().invoke(cli, ["study", "list", "--storage", url, "-f", "csv"])
    assert r.exit_code == 0 and "noisy.confirm" not in r.output and "noisy" in r.output

    # a confirmation left by an earlier study of the name (here: from before companions carried
    # the study's id, measured before this study was created) is not this study's
    from tuner.engine.study import UID_ATTR

    cstudy = open_confirm_study(study)
    cstudy.set_user_attr(UID_ATTR, "another-study")
    assert load_confirmation(study) is None and open_confirm_study(study) is None
    assert build_export(study, "throughput").spec == AUTO  # the study's own (lucky) pick again
    # the next confirmation replaces it, and says so
    said = []
    run_confirmation(study, config, backend, confirm_candidates(study, ["throughput"], near=0.1), repeats=2,
                     on_event=lambda kind, info: said.append((kind, info)))
    assert ("warning", {"message": "noisy.confirm was left by an earlier study of this name (deleted since): "
                                   "replaced"}) in said
    assert open_confirm_study(study).user_attrs[UID_ATTR] == study.user_attrs[UID_ATTR]
    assert load_confirmation(study) is not None

    r = CliRunner().invoke(cli, ["study", "delete", "noisy", "--storage", url, "--yes"])
    assert r.exit_code == 0 and "noisy.confirm" in r.output, r.output
    import optuna

    assert not [s.study_name for s in optuna.get_all_study_summaries(url)]


def _edit(config, trial, key: str, value_json: str) -> None:
    """Set a finished trial's stored attribute, as a user with sqlite3 would (Optuna refuses)."""
    import sqlite3

    con = sqlite3.connect(config.storage.removeprefix("sqlite:///"))
    changed = con.execute("UPDATE trial_user_attributes SET value_json = ? WHERE trial_id = ? AND key = ?",
                          (value_json, trial._trial_id, key)).rowcount
    con.commit()
    con.close()
    assert changed == 1


def test_a_confirmation_decides_only_with_two_rounds_and_readable_trials(lucky_study):
    """QA: a confirmation whose second round lost its baseline still decided picks (n=1, no
    interval); a study trial edited unreadable stayed the confirmed pick; a confirmation trial with
    an edited candidate number ended readers in a traceback."""
    path, config, backend, study = lucky_study
    run_confirmation(study, config, backend, confirm_candidates(study, ["throughput", "single"], near=0.1), repeats=2)
    conf = load_confirmation(study)
    assert conf.rounds == 2 and conf.picks
    second_baseline = next(t for t in open_confirm_study(study).trials
                           if t.user_attrs["candidate"] == BASELINE and t.user_attrs["round"] == 1)
    _edit(config, second_baseline, "candidate", '"3x"')  # unreadable: counts in no round
    fresh = open_study("noisy", config.storage)  # not the cached trials of the study in hand
    conf = load_confirmation(fresh)
    assert conf.rounds == 1 and conf.picks == {}
    exp = build_export(fresh, "throughput")
    assert exp.spec == AUTO  # the study's own pick, not a confirmed one
    assert "# confirmed: run " in exp.yaml_text() and " 1 round interleaved" in exp.yaml_text()
    r = CliRunner().invoke(cli, ["study", "confirm", str(path), "--show"])
    assert r.exit_code == 0 and "1 round interleaved" in r.output, r.output  # one, in the singular
    r = CliRunner().invoke(cli, ["study", "status", str(path)])
    assert r.exit_code == 0 and "1 round;" in r.output, r.output
    from tuner.results.report import write_report

    write_report(fresh, path.parent / "one-round.html")
    assert ": 1 round interleaved" in (path.parent / "one-round.html").read_text(encoding="utf-8")
    _edit(config, second_baseline, "candidate", '"baseline"')
    picked = load_confirmation(open_study("noisy", config.storage)).picks["throughput"].trial
    _edit(config, next(t for t in study.trials if t.number == picked), "speedup@32", "NaN")
    conf = load_confirmation(open_study("noisy", config.storage))
    assert picked not in {c.trial for c in conf.candidates} and conf.picks["throughput"].trial != picked


class _EveryLaunchFails(SuiteBackend):
    """The same backend on a node where no server starts any more (a broken driver after the night)."""

    def measure(self, spec, label, record, on_event=None, on_stage=None):
        from tuner.engine.measurement import Measurement

        m = Measurement(None, failure_class="startup", failure_message="the server exited before it was ready")
        record(m)
        return m


def test_confirm_exits_1_when_fewer_than_two_rounds_complete(lucky_study, monkeypatch):
    """A confirmation whose launches all fail decides nothing: `tuner study confirm` says so, exit 1,
    and export keeps picking by the study's own measurements."""
    path, config, _, _ = lucky_study
    failing = _EveryLaunchFails("k2.6-tp8-pcie", load_suite("quick"), noise=0.005, seed=4)
    monkeypatch.setattr("tuner.cli.study._backend", lambda *a: failing)
    r = CliRunner().invoke(cli, ["study", "confirm", str(path), "--repeats", "2"])
    assert r.exit_code == 1, r.output
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "completed 0 rounds of 2: no interval to decide picks by" in errors[0], r.stderr
    assert "warning: failed:" in r.stderr
    assert build_export(open_study("noisy", config.storage), "throughput").spec == AUTO


def test_a_confirmation_of_trial_numbers_decides_no_named_pick(lucky_study):
    """QA: `confirm --picks 1` measured trial 1 alone, and `export --pick single` then returned it,
    2.12x, over the study's own single pick at 2.35x that the confirmation never measured."""
    _, config, backend, study = lucky_study
    own = build_export(study, "single").record.number
    other = next(r.number for r in load_records(study) if r.status == "measured" and r.number != own)
    run_confirmation(study, config, backend, confirm_candidates(study, [str(other)], near=0.0), repeats=2)
    conf = load_confirmation(study)
    assert conf.rounds == 2 and [c.trial for c in conf.candidates] == [other]
    assert conf.picks == {}
    assert build_export(study, "single").record.number == own


def test_a_confirmed_pick_s_header_shows_its_setting_at_the_mean_of_its_readings(lucky_study):
    """QA: after `confirm`, `export --pick single` named trial 14 and wrote its first reading in the
    header (single request 84.5 tok/s = 3.19x) although the study had read that setting twice
    (mean 3.11x, what `export --pick 14`, pareto and status show). The confirmed pick's header now
    shows the mean of the setting's readings, and says so, as an unconfirmed pick's does."""
    from optuna.trial import create_trial

    path, config, backend, study = lucky_study
    run_confirmation(study, config, backend, confirm_candidates(study, ["single", "throughput"], near=0.1),
                     repeats=2)
    conf = load_confirmation(study)
    picked = conf.picks["single"].trial
    first = study.trials[picked]
    lower = [v * 0.9 for v in first.values]
    figures = {k: v * 0.9 for k, v in first.user_attrs.items()
               if k in ("single_tok_per_s", "single_speedup") or k.startswith(("tok_per_s@", "speedup@"))}
    study.add_trial(create_trial(values=lower, params=first.params, distributions=first.distributions,
                                 user_attrs={**first.user_attrs, **figures, "remeasure_of": picked},
                                 system_attrs=first.system_attrs))
    export = build_export(study, "single")
    assert export.provenance["trial"] == picked
    header = "\n".join(export.header)
    assert f"each figure the mean of 2 measurements (trials {picked}, {len(study.trials) - 1})" in header
    mean = (first.user_attrs["single_tok_per_s"] + figures["single_tok_per_s"]) / 2
    assert f"single request: {mean:.1f} vs" in header


def test_an_unconfirmed_pick_measured_twice_is_not_said_to_have_one_measurement(lucky_study):
    """QA: an unconfirmed pick the sampler measured again had a header that said "each figure the
    mean of 2 measurements (trials 4, 15)" and then "not confirmed: one measurement per setting"."""
    from optuna.trial import create_trial

    _path, _config, _backend, study = lucky_study
    picked = build_export(study, "single").record.number
    first = study.trials[picked]
    study.add_trial(create_trial(values=first.values, params=first.params, distributions=first.distributions,
                                 user_attrs={**first.user_attrs, "remeasure_of": picked},
                                 system_attrs=first.system_attrs))
    header = "\n".join(build_export(study, "single").header)
    assert f"each figure the mean of 2 measurements (trials {picked}, {len(study.trials) - 1})" in header
    assert "one measurement per setting" not in header, header
    assert "not confirmed: " in header and "tuner study confirm" in header, header


class _LiesInRoundTwo(SuiteBackend):
    """The same backend, whose server reports a candidate's second confirm repeat ten times faster
    than it is: a speedup no accept length allows (a clock that lies, or a bad baseline)."""

    def __init__(self, *args, liar: SpecConfig, **kwargs):
        super().__init__(*args, **kwargs)
        self.liar = liar

    def expected(self, spec):
        from dataclasses import replace

        exp = super().expected(spec)
        if spec == self.liar and getattr(self, "_label", "").startswith("confirm/") and "/1-t" in self._label:
            return replace(exp, tok_per_s={c: 10 * v for c, v in exp.tok_per_s.items()})
        return exp

    def measure(self, spec, label, record, on_event=None, on_stage=None):
        self._label = label
        return super().measure(spec, label, record, on_event=on_event, on_stage=on_stage)


def test_a_confirm_repeat_faster_than_its_accept_length_allows_fails_and_counts_in_no_mean(lucky_study):
    """QA (qa68, read in the code): confirmation repeats were never held to the bound a trial is
    (outcome.speedup_problem): a server's impossible reading fed the confirmed means that decide
    the picks. It fails as bad_response, its figures not kept, and the other rounds decide."""
    path, config, backend, study = lucky_study
    liar = _LiesInRoundTwo("k2.6-tp8-pcie", load_suite("quick"), noise=0.005, seed=4, liar=AUTO)
    candidates = confirm_candidates(study, ["throughput", "single"], near=0.1)
    assert AUTO in {c.spec for c in candidates}
    summary = run_confirmation(study, config, liar, candidates, repeats=3)
    lied = next(c.trial for c in candidates if c.spec == AUTO)
    assert summary.failed == [f"round 2: trial {lied} (bad_response)"], summary.failed
    stored = [t.user_attrs for t in open_confirm_study(study).get_trials()
              if t.user_attrs["candidate"] == lied and t.user_attrs["round"] == 1]
    assert len(stored) == 1 and stored[0]["status"] == "failed" and stored[0]["failure_class"] == "bad_response"
    assert "accept length" in stored[0]["failure_message"] and "tok_per_s@32" not in stored[0]
    conf = load_confirmation(study)
    auto = conf.candidate(lied)
    assert auto.rounds == 2 and auto.speedups[32].hi < 1.5, auto.speedups[32]
    assert conf.failed == 1


class _SlowBaselineInRoundTwo(SuiteBackend):
    """The same backend, whose server reports the baseline of the second confirm round ten times
    slower than it is, measured again too (``1-baseline-again``): every candidate of that round reads
    faster than its accept length allows."""

    def expected(self, spec):
        from dataclasses import replace

        exp = super().expected(spec)
        if spec is None and "/1-baseline" in getattr(self, "_label", ""):
            return replace(exp, single_tok_per_s=exp.single_tok_per_s / 10,
                           tok_per_s={c: v / 10 for c, v in exp.tok_per_s.items()})
        return exp

    def measure(self, spec, label, record, on_event=None, on_stage=None):
        self._label = label
        return super().measure(spec, label, record, on_event=on_event, on_stage=on_stage)


def test_a_confirm_repeat_is_judged_by_its_own_round_s_baseline(lucky_study):
    """The paired ratio of a round is its candidate over ITS baseline, so the bound is judged against
    that baseline: a round whose baseline read ten times slow fails each of its candidates as
    bad_response (their ratios cannot be true), and the other rounds decide. Judged against the
    study's baseline, or a round before, every repeat here passed and the impossible ratios went into
    the means (the test of a lying candidate passes either way)."""
    path, config, backend, study = lucky_study
    slow = _SlowBaselineInRoundTwo("k2.6-tp8-pcie", load_suite("quick"), noise=0.005, seed=4)
    candidates = confirm_candidates(study, ["throughput", "single"], near=0.1)
    summary = run_confirmation(study, config, slow, candidates, repeats=3)
    assert summary.failed == [f"round 2: trial {c.trial} (bad_response)" for c in candidates], summary.failed
    # the way on is this round's baseline, not the study's (`study run --rebaseline` measures that one)
    said = {t.user_attrs["failure_message"] for t in open_confirm_study(study).get_trials()
            if t.user_attrs.get("failure_class") == "bad_response"}
    assert said and all("that round's baseline" in s and "--rebaseline" not in s for s in said), said
    conf = load_confirmation(study)
    assert all(c.rounds == 2 and c.speedups[32].hi < 1.5 for c in conf.candidates), conf.candidates


class _HiccupInRoundTwo(_SlowBaselineInRoundTwo):
    """The round-two baseline ten times slow the first time only (a host delay on it): measured again
    in its round (``1-baseline-again``), it reads true."""

    def expected(self, spec):
        if getattr(self, "_label", "").endswith("-again"):
            return SuiteBackend.expected(self, spec)
        return super().expected(spec)


def test_a_round_s_baseline_that_hiccupped_is_measured_again_and_its_candidates_count(lucky_study):
    """QA (qa203): a round's baseline read slow by a hiccup failed every candidate of the round as
    bad_response, their repeats lost to the confirmed means. The round's baseline is suspected first:
    measured again in the round (once; its reason stored), the candidate's repeat judged again against
    it and measured, and the round counts for every candidate, over the baseline measured again."""
    from tuner.engine.baseline import REMEASURED_FOR

    path, config, backend, study = lucky_study
    hiccup = _HiccupInRoundTwo("k2.6-tp8-pcie", load_suite("quick"), noise=0.005, seed=4)
    candidates = confirm_candidates(study, ["throughput", "single"], near=0.1)
    summary = run_confirmation(study, config, hiccup, candidates, repeats=3)
    assert summary.failed == [], summary.failed
    bases = [t.user_attrs for t in open_confirm_study(study).get_trials()
             if t.user_attrs["candidate"] == BASELINE and t.user_attrs["round"] == 1]
    assert [b["status"] for b in bases] == ["measured", "measured"], bases
    assert "round 2: trial" in bases[1][REMEASURED_FOR] and REMEASURED_FOR not in bases[0], bases
    conf = load_confirmation(study)
    assert conf.failed == 0 and all(c.rounds == 3 and c.speedups[32].hi < 1.5 for c in conf.candidates), \
        conf.candidates


#: A `tuner` command run in the zone its environment's TZ names. A worker forked from tz_zygote has
#: the zygote's C library, which read its own zone already: without tzset() the worker ran in the
#: zygote's zone whatever its TZ said (checked: the summer-time test then passed with qa168's fix undone).
IN_ITS_ZONE = "import time\ntime.tzset()\nfrom tuner.cli import main\nmain()"


@pytest.fixture(scope="module")
def tz_zygote(tmp_path_factory):
    """Real `tuner` processes for the time-zone tests (each its own pid and environment), forked from
    one that imported tuner once (tests/support/zygote.py): four fresh interpreters cost a CPU second
    or more each, nearly all of it imports."""
    yield from cli_zygote(tmp_path_factory)


def test_a_confirmation_s_start_reads_the_same_in_every_time_zone(lucky_study, tz_zygote):
    """``started_at`` (``confirm --json``, ``status --json``) is UTC with its offset: it was the
    reader's local time without a zone, so a node in Tokyo and one in UTC printed two times, 9 hours
    apart, for one run (QA, qa95). Real ``tuner`` processes, each with its own ``TZ``."""
    import json
    from datetime import timezone

    path, config, backend, study = lucky_study
    run_confirmation(study, config, backend, confirm_candidates(study, ["single"]), repeats=2)
    shown = {}
    for zone in ("UTC0", "JST-9", "PST8PDT,M3.2.0,M11.1.0"):
        env = {"PATH": "/usr/bin:/bin", "PYTHONWARNINGS": "ignore", "TZ": zone}
        out = tz_zygote.run(IN_ITS_ZONE, ["study", "confirm", str(path), "--show", "--json"], env=env,
                            cwd=path.parent, timeout=300)
        assert out.returncode == 0, out.stderr
        shown[zone] = json.loads(out.stdout)["started_at"]
    # the run's start, as its run id stamps it from a UTC clock (engine.confirm.RUN_TIME)
    run = open_confirm_study(study).get_trials()[0].user_attrs["run"]
    expected = datetime.strptime(run.partition("-")[0], RUN_TIME).replace(tzinfo=timezone.utc)
    assert shown == dict.fromkeys(shown, expected.isoformat(timespec="seconds"))
    assert expected.isoformat().endswith("+00:00")


def test_a_confirmation_s_start_in_the_hour_summer_time_repeats(lucky_study, tz_zygote):
    """A run started at 01:40 UTC on 2026-10-25, read in Europe/Berlin (02:40 there, an hour its clocks
    show twice that night), was said to start at 00:40 UTC: Optuna hands the start back as local time
    without a zone, and which of the two 02:40s it was is lost (QA, qa168). The run id's UTC stamp
    says it. The stored times are set to that night by editing the SQLite file (no clock is faked)."""
    import json
    import sqlite3

    path, config, backend, study = lucky_study
    run_confirmation(study, config, backend, confirm_candidates(study, ["single"]), repeats=2)
    run = open_confirm_study(study).get_trials()[0].user_attrs["run"]
    night = run.replace(run.partition("-")[0], "20261025T014003Z", 1)
    db = sqlite3.connect(config.storage.removeprefix("sqlite:///"))
    with db:
        db.execute("UPDATE trials SET datetime_start = '2026-10-25 01:40:03.000000' "
                   "WHERE datetime_start IS NOT NULL AND trial_id IN (SELECT trial_id FROM trial_user_attributes "
                   "WHERE key = 'run')")
        assert db.execute("UPDATE trial_user_attributes SET value_json = ? WHERE key = 'run'",
                          (json.dumps(night),)).rowcount >= 4
    db.close()
    env = {"PATH": "/usr/bin:/bin", "PYTHONWARNINGS": "ignore", "TZ": "Europe/Berlin"}
    out = tz_zygote.run(IN_ITS_ZONE, ["study", "confirm", str(path), "--show", "--json"], env=env,
                        cwd=path.parent, timeout=300)
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout)
    assert shown["run"] == night and shown["started_at"] == "2026-10-25T01:40:03+00:00", shown
