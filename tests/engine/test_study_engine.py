"""The study engine (tuner/study.py) on real Optuna storage, measured through the ModelBackend
(the simulator's performance model, no processes): seeds, validity, reuse, budget, resume, claims,
dead workers. The full path over real servers is in test_study_e2e.py."""

import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import optuna
import pytest

from tuner.config.space import SearchSpace
from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError
from tuner.engine.backends import Measurement, ModelBackend
from tuner.engine.baseline import find_baseline
from tuner.engine.records import launched, load_records
from tuner.engine.runner import run_study
from tuner.engine.study import BASELINE_SUFFIX, create_study, open_study
from tuner.engine.workers import Worker, reap_dead_trials

ROOT = Path(__file__).resolve().parents[2]

STUDY = """
name: engine
search_space: {space}
server:
  backend: sim
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/draft
  tp_size: 8
bench: {{suite: quick}}
sampler: {{seed: 7}}
budget: {{n_trials: {budget}}}
"""


def make_study(tmp_path, space=None, budget=30, extra=""):
    space = space or ROOT / "search_spaces" / "eagle3.yaml"
    p = tmp_path / "engine.yaml"
    p.write_text(STUDY.format(space=space, budget=budget) + extra)
    config = load_study(p)
    create_study(config, config.storage)
    return config


def model_backend(seed=0):
    return ModelBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=seed)


def small_space(tmp_path, steps="[1, 2]", topk="[1, 4]", drafts="{low: 2, high: 6}"):
    p = tmp_path / "space.yaml"
    p.write_text(f"""
params:
  speculative_num_steps: {{choices: {steps}}}
  speculative_eagle_topk: {{choices: {topk}}}
  speculative_num_draft_tokens: {drafts}
""")
    return p


def test_baseline_then_seeds_then_sampler(tmp_path):
    from tuner.engine.seeds import DEFAULT_SEED_TRIALS

    article = ("seed_trials: [{speculative_num_steps: 1, speculative_eagle_topk: 1, "
               "speculative_num_draft_tokens: 3}]")
    config = make_study(tmp_path, extra=article)
    backend = model_backend()
    summary = run_study(config, config.storage, backend, n_trials=6)
    assert summary.measured == 6
    study = open_study(config.name, config.storage)
    records = load_records(study)
    # the baseline first, measured once, in its own study
    base = find_baseline(study)
    assert base is not None and 20 < base.figures.single_tok_per_s < 35
    # seeds: the defaults in their order (SGLang's automatic choice first), then the study file's:
    # the article's setting, which SGLang runs with 2 draft tokens
    assert [r.requested for r in records[:4]] == list(DEFAULT_SEED_TRIALS)
    assert records[0].requested.label() == "steps=3 topk=1 draft=4"
    article = records[4]
    assert article.requested.label() == "steps=1 topk=1 draft=3"
    assert article.effective.label() == "steps=1 topk=1 draft=2"
    assert article.attrs["rewritten"] is True
    measured = [r for r in records if r.status == "measured"]
    assert len(measured) == 6
    # one launch per measured setting plus the baseline: invalid and repeated proposals launch nothing
    assert backend.calls == 7
    assert len({r.attrs["effective_key"] for r in measured}) == 6
    for r in measured:
        assert r.feasible
        assert r.values == pytest.approx([r.attrs["single_speedup"], r.attrs["speedup@32"]])
        assert r.attrs["tok_per_s@32"] > 0
    # the article's setting: about 1.65x on a single request, about 1.05x at C=32
    assert article.values[0] == pytest.approx(1.65, rel=0.1)
    assert article.values[1] == pytest.approx(1.05, rel=0.1)


def test_invalid_settings_are_recorded_and_never_launched(tmp_path):
    # topk 4 with one step has 4 candidates: only 2..5 draft tokens are valid; 6 and up fail in SGLang.
    # Seeds that SGLang refuses, and random proposals (the default sampler proposes valid settings only).
    space = small_space(tmp_path, steps="[1]", topk="[4]", drafts="{low: 2, high: 40}")
    seeds = "".join(f"  - {{speculative_num_steps: 1, speculative_eagle_topk: 4, speculative_num_draft_tokens: {d}}}\n"
                    for d in (9, 30))
    config = make_study(tmp_path, space=space, extra=f"default_seed_trials: false\nseed_trials:\n{seeds}")
    config = config.model_copy(update={"sampler": config.sampler.model_copy(update={"name": "random"})})
    backend = model_backend()
    # two launches: the seeds and seven random proposals are refused before the second valid one
    # (sampler seed 7); four launches had to find all four valid settings, ~50 refusals, 4x the time
    summary = run_study(config, config.storage, backend, n_trials=2)
    records = load_records(open_study(config.name, config.storage))
    invalid = [r for r in records if r.status == "invalid"]
    assert summary.invalid == len(invalid) > 0
    for r in invalid:
        assert r.failure_class == "rule:tree-too-large"
        assert r.requested.num_draft_tokens > 5
        assert not r.feasible
        assert r.values == [0.0, 0.0]
        assert "selected index k out of range" in r.attrs["sglang_error"]
    assert backend.calls == summary.measured + 1


def test_stops_when_every_config_is_measured_and_reuses(tmp_path):
    space = small_space(tmp_path, steps="[1, 2]", topk="[1]", drafts="{low: 2, high: 6}")
    config = make_study(tmp_path, space=space)  # two effective configs: (1,1,2) and (2,1,3)
    backend = model_backend()
    summary = run_study(config, config.storage, backend, n_trials=10)
    assert summary.measured == 2
    assert "every valid effective config" in summary.stopped_because
    records = load_records(open_study(config.name, config.storage))
    reused = [r for r in records if r.status == "reused"]
    for r in reused:
        source = records[r.attrs["reused_from"]]
        assert source.status == "measured"
        assert r.attrs["effective_key"] == source.attrs["effective_key"]
        assert r.values == source.values
    assert backend.calls == 3


def test_resume_and_budget(tmp_path):
    config = make_study(tmp_path, budget=4)
    run_study(config, config.storage, model_backend(), n_trials=2)
    backend = model_backend(seed=1)
    summary = run_study(config, config.storage, backend, n_trials=10)
    assert summary.measured == 2
    assert "budget of 4" in summary.stopped_because
    assert backend.calls == 2  # the baseline is not measured again
    again = run_study(config, config.storage, model_backend(), n_trials=10)
    assert again.measured == 0
    records = load_records(open_study(config.name, config.storage))
    assert sum(r.status == "measured" for r in records) == 4


def test_rebaseline_measures_again(tmp_path):
    config = make_study(tmp_path)
    run_study(config, config.storage, model_backend(), n_trials=1)
    backend = model_backend()
    run_study(config, config.storage, backend, n_trials=1, rebaseline=True)
    bstudy = optuna.load_study(study_name=config.name + BASELINE_SUFFIX, storage=config.storage)
    done = [t for t in bstudy.trials if t.state.name == "COMPLETE"]
    assert len(done) == 2
    assert find_baseline(open_study(config.name, config.storage)).trial_number == done[-1].number
    # QA: with a seeded model backend the re-measurement replayed the first one's noise draw exactly
    # (both labelled "baseline"): --rebaseline after a slow read read just as slow
    assert done[0].values != done[-1].values


class FailingBackend(ModelBackend):
    """The model, but every tree with topk >= 4 'runs out of memory' at launch."""

    def measure(self, spec, label, record, on_event=None, on_stage=None):
        if spec is not None and spec.eagle_topk >= 4:
            self.calls += 1
            m = Measurement(None, failure_class="oom", failure_message="Not enough memory", log_tail="...")
            record(m)
            return m
        return super().measure(spec, label, record, on_event)


def test_failed_launch_is_infeasible_and_visible(tmp_path):
    space = small_space(tmp_path, steps="[1, 2]", topk="[1, 4]", drafts="{low: 2, high: 6}")
    config = make_study(tmp_path, space=space, extra="default_seed_trials: false\n")
    backend = FailingBackend("k2.6-tp8-pcie", load_suite("quick"))
    run_study(config, config.storage, backend, n_trials=12)
    records = load_records(open_study(config.name, config.storage))
    failed = [r for r in records if r.status == "failed"]
    assert failed, "the space has topk 4 settings; some must have been tried"
    for r in failed:
        assert r.state == "COMPLETE" and not r.feasible
        assert r.failure_class == "oom" and r.values == [0.0, 0.0]
    # a failed setting counts as measured: it is never launched twice
    keys = [r.attrs["effective_key"] for r in records if r.status in ("measured", "failed")]
    assert len(keys) == len(set(keys))
    # and no trial is asked only to repeat one while a setting was never tried (the sampler's
    # fallback, StructuredSampler.untried; QA: Optuna's random sampler there made 70 trials of 11)
    assert [r.status for r in records if r.status not in ("measured", "failed")] == []


def test_create_is_idempotent_and_refuses_a_changed_config(tmp_path):
    config = make_study(tmp_path)
    create_study(config, config.storage)  # same config: no-op
    changed = config.model_copy(update={"objectives": ["single_speedup", "speedup@8"]})
    with pytest.raises(ConfigError, match="different config"):
        create_study(changed, config.storage)


def test_a_study_stored_before_the_log_cap_existed_and_another_cap_are_the_same_study(tmp_path):
    """server.log_max_mb shapes no measurement: a study stored without the key (before it existed)
    opens from a file that has it, and a file with another cap is the same study."""
    from tuner.engine.study import CONFIG_ATTR

    config = make_study(tmp_path)
    study = open_study(config.name, config.storage)
    stored = dict(study.user_attrs[CONFIG_ATTR])
    stored["server"] = {k: v for k, v in stored["server"].items() if k != "log_max_mb"}
    study.set_user_attr(CONFIG_ATTR, stored)
    create_study(config, config.storage)  # no "different config (server.log_max_mb differs)"
    create_study(config.model_copy(update={"server": config.server.model_copy(update={"log_max_mb": 8.0})}),
                 config.storage)
    changed = config.model_copy(update={"server": config.server.model_copy(update={"tp_size": 4})})
    with pytest.raises(ConfigError, match="server.tp_size differs"):
        create_study(changed, config.storage)


def test_open_unknown_study_names_the_ones_there(tmp_path):
    config = make_study(tmp_path)
    with pytest.raises(ConfigError, match="no such study; studies here: engine"):
        open_study("nope", config.storage)


# Two workers as threads of one process (here only: the tuner runs one worker per process). Each
# acknowledges Optuna's "Heartbeat of storage is supposed to be used with Study.optimize" inside
# warnings.catch_warnings (tuner.engine.asktell), which is process-global and not thread-safe: one
# thread's exit restores the filters while the other is inside, and under pytest's
# filterwarnings=error the warning was raised in a worker (seen once in 16 runs on a loaded machine).
# Both threads also carry one worker name (host, pid, start): the read-back before a launch
# (TrialRunner._still_ours) cannot tell them apart, so here the claims and the queue's take keep
# them off each other's settings. Both once started the same queued seed at the same moment and
# launched it twice (an SQLite race, two processes too): tests/engine/test_queued_trial_taken_once.py.
@pytest.mark.filterwarnings("ignore:Heartbeat of storage is supposed to be used:UserWarning")
def test_two_workers_never_measure_a_config_twice(tmp_path):
    config = make_study(tmp_path, budget=10)

    class Slow(ModelBackend):
        def measure(self, spec, label, record, on_event=None, on_stage=None):
            time.sleep(0.05)
            return super().measure(spec, label, record, on_event, on_stage)

    backends = [Slow("k2.6-tp8-pcie", load_suite("quick"), seed=i) for i in range(2)]
    errors = []

    def worker(b):
        try:
            run_study(config, config.storage, b, n_trials=10)
        except Exception as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(b,)) for b in backends]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    records = load_records(open_study(config.name, config.storage))
    launches = [r for r in records if launched(r.status, r.attrs)]  # pruned ones too
    assert len(launches) == 10
    first = [r.attrs["effective_key"] for r in launches if r.attrs.get("remeasure_of") is None]
    assert len(first) == len(set(first))  # deliberate re-measurements apart, no setting twice
    bstudy = optuna.load_study(study_name=config.name + BASELINE_SUFFIX, storage=config.storage)
    assert sum(t.user_attrs.get("status") == "measured" for t in bstudy.trials) == 1
    assert sum(b.calls for b in backends) == 11


def ask(study):
    with warnings.catch_warnings():  # Optuna's note that heartbeats are meant for optimize()
        warnings.simplefilter("ignore", UserWarning)
        return study.ask()


def test_dead_local_worker_trial_is_failed_and_requeued(tmp_path):
    config = make_study(tmp_path)
    study = open_study(config.name, config.storage)
    trial = ask(study)
    # a worker on this host whose process is gone
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    trial.set_user_attr("worker", {**Worker().as_dict(), "pid": child.pid, "start": 1})
    params = dict(trial.params)
    assert reap_dead_trials(study) == [trial.number]
    states = {t.number: t.state.name for t in study.trials}
    assert states[trial.number] == "FAIL"
    # its parameters are queued again (the seeds' queue already holds waiting trials)
    waiting = [t for t in study.trials if t.state.name == "WAITING"]
    assert any(t.system_attrs.get("failed_trial") == trial.number for t in waiting) or params == {}
    # a live worker's trial is left alone
    live = ask(study)
    live.set_user_attr("worker", Worker().as_dict())
    assert reap_dead_trials(study) == []


def _write_study_file(tmp_path):
    p = tmp_path / "engine.yaml"
    p.write_text(STUDY.format(space=ROOT / "search_spaces" / "eagle3.yaml", budget=30))
    return load_study(p)


@pytest.mark.parametrize("cut_after", ["create", "config"])
def test_a_creation_cut_short_is_finished_by_the_next_create(tmp_path, monkeypatch, cut_after):
    """QA: a storage outage right after Optuna committed the new study (the patient retry then found
    the row), or Ctrl-C during creation, left a study every later run refused as "not a complete
    tuner study"; it is ours, so the next create finishes it (its writes are idempotent)."""
    import tuner.engine.study as engine_study

    monkeypatch.setattr(engine_study, "READY_WAIT_S", 0.2)
    config = _write_study_file(tmp_path)
    cut = optuna.create_study(study_name="engine", storage=config.storage, directions=["maximize"] * 2)
    if cut_after == "config":
        cut.set_user_attr(engine_study.CONFIG_ATTR, engine_study.stored_config(config))
        cut.enqueue_trial({"speculative_num_steps": 3, "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 4},
                          user_attrs={"seed": True})
    notes = []
    study = create_study(config, config.storage, notes.append)
    assert any("its creation was interrupted; finishing it" in n for n in notes), notes
    assert engine_study.READY_ATTR in study.user_attrs
    create_study(config, config.storage)  # ready now: a no-op
    waiting = [t for t in open_study("engine", config.storage).trials if t.state == optuna.trial.TrialState.WAITING]
    assert len(waiting) == len({tuple(sorted(t.system_attrs["fixed_params"].items())) for t in waiting}) == len(engine_study.seed_trials(
        config, SearchSpace(SearchSpace.load(config.search_space).config, config.search_space)))
    run_study(config, config.storage, model_backend(), n_trials=1)
    assert find_baseline(open_study("engine", config.storage)) is not None


def test_a_study_another_tool_made_is_refused_naming_the_way_out(tmp_path, monkeypatch):
    import tuner.engine.study as engine_study

    monkeypatch.setattr(engine_study, "READY_WAIT_S", 0.2)
    config = _write_study_file(tmp_path)
    other = optuna.create_study(study_name="engine", storage=config.storage, directions=["minimize"])
    other.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=1)
    with pytest.raises(ConfigError, match="not a complete tuner study .* tuner study delete engine"):
        create_study(config, config.storage)



@pytest.mark.parametrize("theirs", ["finished trial", "attribute"])
def test_a_study_no_creation_can_be_writing_is_refused_without_the_wait(tmp_path, monkeypatch, theirs):
    """QA: `tuner study run --study NAME` on a plain Optuna study with finished trials waited the
    whole ready wait (34 s) for a mark tuner's creation would have written; creation writes only
    queued seeds and its own attributes, so a finished trial or a foreign attribute ends it at once.
    The wait is set to an hour here: the test would hang instead of passing."""
    import tuner.engine.study as engine_study

    monkeypatch.setattr(engine_study, "READY_WAIT_S", 3600.0)
    config = _write_study_file(tmp_path)
    other = optuna.create_study(study_name="engine", storage=config.storage, directions=["maximize"] * 2)
    if theirs == "finished trial":
        other.optimize(lambda t: (t.suggest_float("x", 0, 1), 1.0), n_trials=1)
    else:
        other.set_user_attr("owner", "other-team")
    with pytest.raises(ConfigError, match="not a complete tuner study .* tuner study delete engine"):
        engine_study.wait_until_ready(open_study("engine", config.storage))


def test_a_study_being_created_is_waited_for(tmp_path):
    """The other side: a study with only what creation writes first (its config, a queued seed) is
    waited for, and returned once its ready mark is there."""
    import threading

    import tuner.engine.study as engine_study

    config = _write_study_file(tmp_path)
    other = optuna.create_study(study_name="engine", storage=config.storage, directions=["maximize"] * 2)
    other.set_user_attr(engine_study.CONFIG_ATTR, {"name": "engine"})
    other.enqueue_trial({"speculative_num_steps": 3}, user_attrs={"seed": True})
    marked = threading.Timer(1.0, lambda: other.set_user_attr(engine_study.READY_ATTR, "now"))
    marked.start()
    try:
        stored = engine_study.wait_until_ready(open_study("engine", config.storage), timeout_s=120)
    finally:
        marked.cancel()
    assert stored[engine_study.READY_ATTR] == "now"


@pytest.mark.parametrize("theirs", ["attribute", "trial", "seed-like trial"])
def test_a_study_another_tool_made_with_our_directions_is_refused_not_finished(tmp_path, monkeypatch, theirs):
    """QA: a study another tool made with the same directions -- an attribute of its own, or a queued
    trial of its own -- was taken for an interrupted creation and finished, and ``run`` measured its
    foreign ``{'lr': 0.1}`` trial as a setting."""
    import tuner.engine.study as engine_study

    monkeypatch.setattr(engine_study, "READY_WAIT_S", 0.2)
    config = _write_study_file(tmp_path)
    other = optuna.create_study(study_name="engine", storage=config.storage, directions=["maximize"] * 2)
    if theirs == "attribute":
        other.set_user_attr("owner", "other-team")
    elif theirs == "trial":
        other.enqueue_trial({"lr": 0.1})
    else:  # one of our settings, queued by someone else: not marked as a seed
        other.enqueue_trial({"speculative_num_steps": 7, "speculative_eagle_topk": 8,
                             "speculative_num_draft_tokens": 64})
    with pytest.raises(ConfigError, match="not a complete tuner study .* tuner study delete engine"):
        create_study(config, config.storage)
    assert engine_study.READY_ATTR not in open_study("engine", config.storage).user_attrs  # nothing finished


def test_a_proposal_another_worker_is_measuring_steps_aside_at_once(tmp_path):
    """Two workers asking the default sampler at once both choose the best move, each before the
    other's trial shows its setting. The later one used to wait for the other's whole launch (QA: a
    sim study with two workers: 'waiting for another worker measuring steps=1 topk=1 draft=2', 4 s of
    a 6 s trial, then a reuse; on GPUs a launch of many minutes idle). It steps aside (abandoned) and
    the sampler is asked again."""
    from optuna.trial import TrialState

    from tuner.engine.records import spec_from_params, spec_key
    from tuner.engine.runner import make_sampler
    from tuner.engine.study import config_from_study
    from tuner.engine.trial import ABANDONED, PROPOSAL_ATTR, TrialRunner

    config = make_study(tmp_path, extra="default_seed_trials: false\n")
    study = open_study(config.name, config.storage)
    _, space, _ = config_from_study(study)
    study = optuna.load_study(study_name=config.name, storage=config.storage, sampler=make_sampler(config, space, 0))
    events = []
    runner = TrialRunner(config, study, space, model_backend(), Worker(), lambda kind, info: events.append((kind, info)))
    mine = study.ask(space.distributions())
    assert PROPOSAL_ATTR in study._storage.get_trial_system_attrs(mine._trial_id)  # the sampler's own choice
    other = study.ask(space.distributions())  # another worker, measuring the same setting now
    key = spec_key(space.resolve(spec_from_params(mine.params)).effective)
    other.set_user_attr("claim", key)
    started = time.monotonic()
    assert runner._run(mine, baseline=None) == ABANDONED
    assert time.monotonic() - started < 5  # no wait for the other launch
    frozen = study._storage.get_trial(mine._trial_id)
    assert frozen.state == TrialState.FAIL and frozen.user_attrs["status"] == ABANDONED
    assert frozen.user_attrs["stepped_aside"] is True
    assert events[-1][0] == "trial_skip" and "the sampler is asked again" in events[-1][1]["why"]


def test_a_seed_that_finds_the_budget_taken_goes_back_to_the_queue(tmp_path):
    """A queued seed popped by a worker whose last budget slot another worker's launch took stepped
    back (abandoned) and was lost: `--add-trials` later measured the next seeds, never it (QA: two
    workers, n_trials 2; (2, 4, 8) abandoned, then `run --add-trials 2` launched (5, 8, 32) and a
    proposal). It goes back to the queue."""
    from optuna.trial import TrialState

    from tuner.engine.runner import make_sampler
    from tuner.engine.study import config_from_study
    from tuner.engine.trial import ABANDONED, TrialRunner

    config = make_study(tmp_path, budget=1)
    study = open_study(config.name, config.storage)
    _, space, _ = config_from_study(study)
    study = optuna.load_study(study_name=config.name, storage=config.storage, sampler=make_sampler(config, space, 0))
    other = study.ask(space.distributions())  # another worker's launch holds the only slot
    other.set_user_attr("launching", True)
    queued = [t.system_attrs["fixed_params"] for t in study.get_trials(states=(TrialState.WAITING,))]
    mine = study.ask(space.distributions())  # the next seed, popped from the queue
    assert mine.params == queued[0]
    runner = TrialRunner(config, study, space, model_backend(), Worker(), lambda kind, info: None)
    assert runner._run(mine, baseline=None) == ABANDONED
    waiting = [t.system_attrs["fixed_params"] for t in study.get_trials(states=(TrialState.WAITING,))]
    assert waiting == queued[1:] + [mine.params]  # every seed still to be measured, this one last


def test_a_queued_seed_the_budget_never_reached_shows_its_setting(tmp_path):
    """A study whose budget ends before its seeds (n_trials 1 of 4 seeds) keeps the others queued;
    ``status`` listed them WAITING with no setting. Their records carry the setting they were
    queued with; a queued trial of another shape (not three flags) still has none."""
    config = _write_study_file(tmp_path)
    create_study(config, config.storage)
    run_study(config, config.storage, model_backend(), n_trials=1)
    study = open_study("engine", config.storage)
    study.enqueue_trial({"lr": 0.1})
    records = load_records(study)
    waiting = [r for r in records if r.state == "WAITING"]
    queued = [t.system_attrs["fixed_params"] for t in study.get_trials(deepcopy=False) if t.state.name == "WAITING"]
    assert len(waiting) == len(queued) >= 2
    for r, params in zip(waiting[:-1], queued[:-1]):
        assert r.requested is not None and r.requested.as_dict() == {
            "num_steps": params["speculative_num_steps"], "eagle_topk": params["speculative_eagle_topk"],
            "num_draft_tokens": params["speculative_num_draft_tokens"]}
    assert waiting[-1].requested is None


def test_tens_of_thousands_of_seed_trials_are_deduplicated_in_one_pass(tmp_path):
    """A study file may list as many seeds as its space holds (a 4 MiB file: some 46,000), each
    once, in order. In a child with a timeout a hundred times what it needs: the check looked each
    seed up in the list kept so far (45,840 seeds took 296 s, and create or run call it three times)."""
    import subprocess
    import sys
    (tmp_path / "wide.yaml").write_text("algorithm: EAGLE3\nparams:\n  speculative_num_steps: {low: 1, high: 64}\n"
                                        "  speculative_eagle_topk: {low: 1, high: 8}\n"
                                        "  speculative_num_draft_tokens: {low: 2, high: 100}\nfixed: {}\n")
    _write_study_file(tmp_path)
    code = f"""
from tuner.config.space import SearchSpace
from tuner.config.study import SeedTrial, load_study
from tuner.engine.study import seed_trials
seeds = [SeedTrial(speculative_num_steps=s, speculative_eagle_topk=k, speculative_num_draft_tokens=d)
         for s in range(1, 65) for k in range(1, 9) for d in range(2, 101)]
config = load_study({str(tmp_path / 'engine.yaml')!r}).model_copy(update={{"seed_trials": seeds + seeds[:10]}})
out = seed_trials(config, SearchSpace.load({str(tmp_path / 'wide.yaml')!r}))
print(len(seeds), len(out), len(set(out)), out[-1].label())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    n, kept, distinct, last = out.stdout.split(maxsplit=3)
    assert int(kept) == int(distinct) and int(n) <= int(kept) <= int(n) + 4, out.stdout  # + the default seeds
    assert last.strip() == "steps=64 topk=8 draft=100", out.stdout


def test_seeds_are_queued_reading_the_trials_once(tmp_path, monkeypatch):
    """Creating a study reads its trials once to skip seeds already queued, not once per seed: QA,
    Optuna's enqueue_trial(skip_if_exists=True) read every trial at each of 45,840 seeds (7 a
    second after 600, some 58 hours in all). A creation cut short still queues each seed once."""
    from tuner.config.study import SeedTrial
    from tuner.engine.study import seed_trials

    config = _write_study_file(tmp_path)
    space = SearchSpace.load(config.search_space)
    specs = [req for req, res in space.proposals() if res.ok][:20]
    config = config.model_copy(update={"seed_trials": [
        SeedTrial(speculative_num_steps=s.num_steps, speculative_eagle_topk=s.eagle_topk,
                  speculative_num_draft_tokens=s.num_draft_tokens) for s in specs]})
    seeds = seed_trials(config, space)
    assert len(seeds) >= 20
    import tuner.engine.study as engine_study

    monkeypatch.setattr(engine_study, "READY_WAIT_S", 0.2)  # the cut creation is no other worker's
    cut = optuna.create_study(study_name="engine", storage=config.storage, directions=["maximize"] * 2)
    cut.enqueue_trial(seeds[5].server_args(), user_attrs={"seed": True})  # a creation cut short
    reads = []
    real = optuna.Study.get_trials
    monkeypatch.setattr(optuna.Study, "get_trials", lambda self, *a, **k: reads.append(1) or real(self, *a, **k))
    create_study(config, config.storage)
    assert len(reads) < 10, len(reads)
    waiting = [t.system_attrs["fixed_params"] for t in open_study("engine", config.storage).trials
               if t.state == optuna.trial.TrialState.WAITING]
    assert sorted(map(sorted, map(dict.items, waiting))) == sorted(sorted(s.server_args().items()) for s in seeds)
