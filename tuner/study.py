"""The study engine: Optuna's ask/tell loop over relaunched servers.

One call of :func:`run_study` is one worker. Per trial it asks the sampler, applies SGLang's rules
(:mod:`tuner.rules`), skips what SGLang would reject without launching anything, reuses a
measurement of the same effective config, otherwise has the :class:`~tuner.backends.Backend` launch
the server and run the suite, and tells Optuna the objective values against the baseline.

Contracts:

* Trial state lives in Optuna storage only (study config, space and suite in the study's user
  attributes), so any worker given the storage URL and study name can continue the study.
* Results reach storage before the server stops (the backend calls back before stopping).
* A trial left RUNNING by a dead worker is failed (Optuna heartbeat, or at once when the worker was
  on this host and its process is gone) and its parameters are queued again.
* Two workers never measure the same effective config at once: each records a claim on its RUNNING
  trial, and the lowest-numbered claim wins; the other waits and reuses the result.
* Ctrl-C: the backend stops the server, the trial is failed and queued again, the run raises
  ``KeyboardInterrupt`` (the CLI exits 130).
"""

from __future__ import annotations

import json
import os
import random
import socket
import threading
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from . import __version__
from .config import StudyConfig, study_from_dict
from .objectives import objective_values, worst_values
from .procs import process_alive, read_stat
from .records import (
    CONSTRAINT, FAILED, INVALID, MEASURED, REUSED, StoredFigures, figure_attrs, load_records, spec_from_params,
    spec_key,
)
from .rules import SpecConfig
from .space import SearchSpace
from .storage import HEARTBEAT_INTERVAL_S, open_storage, redact
from .yamlfile import ConfigError

CONFIG_ATTR, SPACE_ATTR, SUITE_ATTR = "tuner_config", "tuner_space", "tuner_suite"
READY_ATTR = "created_at"
BASELINE_SUFFIX = ".baseline"
#: status of a trial that stepped back because another worker took the study's last budget slot
ABANDONED = "abandoned"
#: Proposals in a row that launch nothing (invalid or already measured) before a worker concludes
#: the sampler has nothing new to offer.
MAX_IDLE_PROPOSALS = 200
POLL_S = 1.0

Event = Callable[[str, dict], None]


def _noop(kind: str, info: dict) -> None:
    pass


# --------------------------------------------------------------------------------------------------
# Creating and opening studies


def stored_config(config: StudyConfig) -> dict:
    """The study config as stored: no storage URL (it may hold a password), portable paths."""
    data = config.model_dump(mode="json")
    data["storage"] = None
    data["workdir"] = None
    return data


def _space_and_suite(config: StudyConfig) -> tuple[dict, dict]:
    from .bench import load_suite
    from .config import load_space

    space = load_space(config.search_space).model_dump(mode="json")
    suite = load_suite(config.bench.suite).model_dump(mode="json")
    return space, suite


def seed_trials(config: StudyConfig, space: SearchSpace) -> list[SpecConfig]:
    """SGLang's automatic choice, the article's setting, then the study file's seeds; in-range only."""
    from .sampling import DEFAULT_SEED_TRIALS

    seeds = list(DEFAULT_SEED_TRIALS) if config.default_seed_trials else []
    for i, s in enumerate(config.seed_trials):
        spec = SpecConfig(s.speculative_num_steps, s.speculative_eagle_topk, s.speculative_num_draft_tokens)
        if not space.contains(spec):
            raise ConfigError("study file", f"seed_trials[{i}]", f"{spec.label()} lies outside the "
                              f"search space {space.source}; widen the space or change the seed")
        seeds.append(spec)
    out = []
    for spec in seeds:
        if space.contains(spec) and spec not in out:
            out.append(spec)
    return out


def create_study(config: StudyConfig, storage_url: str):
    """Create the Optuna study (and its baseline study) for ``config``; a no-op when it exists with
    the same config, :class:`ConfigError` when it exists with a different one."""
    import optuna

    storage = open_storage(storage_url)
    space_dict, suite_dict = _space_and_suite(config)
    wanted = stored_config(config)
    space = SearchSpace(SearchSpace.load(config.search_space).config, config.search_space)
    seeds = seed_trials(config, space)
    directions = ["maximize"] * len(config.objectives)
    try:
        study = optuna.create_study(study_name=config.name, storage=storage, directions=directions)
    except optuna.exceptions.DuplicatedStudyError:
        study = optuna.load_study(study_name=config.name, storage=storage)
        _same_or_error(study, wanted, space_dict, suite_dict, storage_url)
        return study
    study.set_user_attr(CONFIG_ATTR, wanted)
    study.set_user_attr(SPACE_ATTR, space_dict)
    study.set_user_attr(SUITE_ATTR, suite_dict)
    study.set_user_attr("tuner_version", __version__)
    study.set_user_attr("objectives", list(config.objectives))
    for spec in seeds:
        study.enqueue_trial(_params(spec), user_attrs={"seed": True}, skip_if_exists=True)
    optuna.create_study(study_name=config.name + BASELINE_SUFFIX, storage=storage, direction="maximize",
                        load_if_exists=True)
    # Written last: a study is ready (config, space, suite, seeds, baseline study) once it has this.
    study.set_user_attr(READY_ATTR, _now())
    return study


def wait_until_ready(study, timeout_s: float = 30.0) -> dict:
    """The study's user attributes once its creator has written them all.

    Another worker may have created the study an instant ago and still be writing; a study that
    never becomes ready was not created by tuner (or its creator died): :class:`ConfigError`.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        stored = study._storage.get_study_user_attrs(study._study_id)
        if READY_ATTR in stored:
            return stored
        if time.monotonic() > deadline:
            raise ConfigError(study.study_name, READY_ATTR, "the study exists but is not a complete tuner "
                              "study (another tool made it, or its creation was interrupted); pick another name")
        time.sleep(0.2)


def _same_or_error(study, config: dict, space: dict, suite: dict, url: str) -> None:
    stored = wait_until_ready(study)
    for attr, wanted in ((CONFIG_ATTR, config), (SPACE_ATTR, space), (SUITE_ATTR, suite)):
        have = stored.get(attr)
        if have != wanted:
            key = _first_difference(have or {}, wanted)
            raise ConfigError(redact(url) or "", study.study_name,
                              f"the study exists with a different {attr.split('_')[1]} ({key} differs); "
                              f"use a new study name or the original file")


def _first_difference(a: Any, b: Any, prefix: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{prefix}.{k}" if prefix else str(k))
    return prefix or "value"


def open_study(name: str, storage_url: str, sampler=None):
    """Load a tuner study; :class:`ConfigError` when it does not exist."""
    import optuna

    storage = open_storage(storage_url)
    try:
        return optuna.load_study(study_name=name, storage=storage, sampler=sampler)
    except KeyError:
        names = [s.study_name for s in optuna.get_all_study_summaries(storage)
                 if not s.study_name.endswith(BASELINE_SUFFIX)]
        raise ConfigError(redact(storage_url) or "", name, f"no such study; studies here: "
                          f"{', '.join(names) or 'none'} (create it with `tuner study create`)") from None


def config_from_study(study, workdir: str | None = None) -> tuple[StudyConfig, SearchSpace, dict]:
    """The study's config, search space and suite as stored (nothing needed from local files)."""
    from .config import SearchSpaceConfig
    from .yamlfile import parse_model

    attrs = wait_until_ready(study)
    config = study_from_dict(attrs[CONFIG_ATTR])
    space = SearchSpace(parse_model(SearchSpaceConfig, attrs[SPACE_ATTR], "<stored search space>"),
                        config.search_space)
    wd = workdir or str(Path("studies") / config.name)
    # The stored suite replaces the suite's name or path: another machine may not have the file.
    bench = config.bench.model_copy(update={"suite": attrs[SUITE_ATTR]})
    return (config.model_copy(update={"workdir": str(Path(wd).resolve()), "bench": bench}),
            space, attrs[SUITE_ATTR])


@contextmanager
def _heartbeat_by_hand():
    # Optuna warns that storage heartbeats are meant for Study.optimize; with ask/tell the tuner
    # records them itself (Heartbeat below), which is what the warning asks for.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used")
        yield


def _ask(study, distributions=None):
    with _heartbeat_by_hand():
        return study.ask(distributions)


def _tell(study, trial, values=None, state=None):
    with _heartbeat_by_hand():
        return study.tell(trial, values, state=state)


def _params(spec: SpecConfig) -> dict:
    return {"speculative_num_steps": spec.num_steps, "speculative_eagle_topk": spec.eagle_topk,
            "speculative_num_draft_tokens": spec.num_draft_tokens}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# --------------------------------------------------------------------------------------------------
# Workers, heartbeats and claims


def _start_ticks(pid: int) -> int | None:
    st = read_stat(pid)
    return None if st is None else st.start_ticks


@dataclass(frozen=True)
class Worker:
    """Who runs a trial: enough to tell, on the same host, whether that process still lives."""

    host: str = field(default_factory=socket.gethostname)
    pid: int = field(default_factory=os.getpid)
    start: int | None = field(default_factory=lambda: _start_ticks(os.getpid()))

    def as_dict(self) -> dict:
        return {"host": self.host, "pid": self.pid, "start": self.start}

    @staticmethod
    def alive(d: dict | None) -> bool | None:
        """True/False for a worker on this host; None when it ran elsewhere (ask the heartbeat)."""
        if not d or d.get("host") != socket.gethostname():
            return None
        return process_alive(int(d["pid"]), d.get("start"))


class Heartbeat:
    """Records Optuna heartbeats for one running trial from a background thread (ask/tell does not)."""

    def __init__(self, storage, trial_id: int):
        self.storage, self.trial_id = storage, trial_id
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True, name=f"heartbeat-{trial_id}")

    def _record(self) -> None:
        try:
            self.storage.record_heartbeat(self.trial_id)
        except Exception:  # noqa: BLE001 - a missed beat is retried; the trial must go on
            pass

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_INTERVAL_S):
            self._record()

    def __enter__(self):
        if hasattr(self.storage, "record_heartbeat"):
            self._record()  # the first beat before anything else happens to the trial
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)


def reap_dead_trials(study) -> list[int]:
    """Fail RUNNING trials whose worker is gone and queue their parameters again.

    Workers on this host are checked by pid and start time at once; others by Optuna's heartbeat
    (``fail_stale_trials``, after the grace period). Returns the numbers of the trials failed here.
    """
    from optuna.storages import fail_stale_trials
    from optuna.trial import TrialState

    storage = study._storage
    if not hasattr(storage, "get_heartbeat_stale_trial_callback"):
        return []  # a storage without heartbeats (in-memory, for benchmarks): one process, no deaths
    fail_stale_trials(study)
    reaped = []
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        if Worker.alive(t.user_attrs.get("worker")) is False:
            if storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL):
                reaped.append(t.number)
                callback = storage.get_heartbeat_stale_trial_callback()
                if callback is not None and t.params:
                    callback(study, storage.get_trial(t._trial_id))
    return reaped


def try_claim(study, trial, key: str) -> bool:
    """Claim ``key`` for the RUNNING ``trial``; True when no other running trial holds it.

    Claim, then look: every claimant writes its claim before reading the others', so of two racing
    workers at least one sees the other. Whoever sees another claim withdraws its own (and retries
    after a random pause): two workers can never both proceed, and at worst both step back once.
    """
    from optuna.trial import TrialState

    trial.set_user_attr("claim", key)
    running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    if any(t.number != trial.number and t.user_attrs.get("claim") == key for t in running):
        trial.set_user_attr("claim", None)
        return False
    return True


# --------------------------------------------------------------------------------------------------
# Baseline


@dataclass
class Baseline:
    figures: StoredFigures
    attrs: dict
    trial_number: int


def find_baseline(study) -> Baseline | None:
    """The latest completed baseline measurement of a study, if any."""
    import optuna
    from optuna.trial import TrialState

    try:
        bstudy = optuna.load_study(study_name=study.study_name + BASELINE_SUFFIX, storage=study._storage)
    except KeyError:
        return None
    done = [t for t in bstudy.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            if t.user_attrs.get("status") == MEASURED]
    if not done:
        return None
    t = done[-1]
    return Baseline(StoredFigures.from_attrs(t.user_attrs), dict(t.user_attrs), t.number)


# --------------------------------------------------------------------------------------------------
# The run


@dataclass
class RunSummary:
    measured: int = 0  #: servers launched and measured by this worker (failures included)
    invalid: int = 0
    reused: int = 0
    stopped_because: str = ""


def make_sampler(config: StudyConfig, space: SearchSpace, n_existing: int):
    """The configured sampler with this worker's own seed (see :mod:`tuner.sampling`).

    With a seed in the study file, the worker's seed is that plus the number of trials already in
    the study: a fresh study is reproducible, and a restarted worker does not replay the crash.
    """
    from .config import SPEC_PARAMS
    from .sampling import make_sampler as _make

    seed = config.sampler.seed
    seed = random.SystemRandom().randrange(2**31) if seed is None else seed + n_existing
    return _make(config.sampler, seed, {name: space.values(name) for name in SPEC_PARAMS})


def run_study(config: StudyConfig, storage_url: str, backend, *, n_trials: int | None = None,
              timeout_s: float | None = None, rebaseline: bool = False, on_event: Event = _noop) -> RunSummary:
    """Run one worker until the budget is spent, the time is up or the space is exhausted."""
    import optuna

    study = open_study(config.name, storage_url)
    _, space, _ = config_from_study(study)
    sampler = make_sampler(config, space, len(study.get_trials(deepcopy=False)))
    study = optuna.load_study(study_name=config.name, storage=study._storage, sampler=sampler)
    runner = _Runner(config, study, space, backend, on_event)
    return runner.run(n_trials=n_trials, timeout_s=timeout_s, rebaseline=rebaseline)


class _Runner:
    def __init__(self, config: StudyConfig, study, space: SearchSpace, backend, on_event: Event):
        self.config, self.study, self.space, self.backend, self.emit = config, study, space, backend, on_event
        self.storage = study._storage
        self.worker = Worker()
        self.durations: list[float] = []
        self.n_configs = len(space.effective_configs())

    # -- budget ---------------------------------------------------------------------------------
    def _launched_in_study(self, records=None) -> int:
        records = load_records(self.study) if records is None else records
        return sum(1 for r in records if r.status in (MEASURED, FAILED))

    @staticmethod
    def _measured_keys(records) -> set[str]:
        return {r.attrs.get("effective_key") for r in records
                if r.status in (MEASURED, FAILED) and r.attrs.get("effective_key")}

    def _expected_duration_s(self) -> float:
        recent = self.durations[-5:]
        return 1.1 * (sum(recent) / len(recent)) if recent else 0.0

    def run(self, n_trials, timeout_s, rebaseline) -> RunSummary:
        summary = RunSummary()
        started = time.monotonic()
        deadline = started + timeout_s if timeout_s else None
        stopped = getattr(self.backend, "cleanup_orphans", lambda: [])()
        if stopped:
            self.emit("orphans", {"servers": stopped})
        reaped = reap_dead_trials(self.study)
        if reaped:
            self.emit("reaped", {"trials": reaped})
        baseline = self._ensure_baseline(rebaseline)
        total_budget = self.config.budget.n_trials
        idle = 0
        while True:
            records = load_records(self.study)  # one read of the storage per proposal
            if n_trials is not None and summary.measured >= n_trials:
                summary.stopped_because = f"--n-trials {n_trials} reached"
                break
            if total_budget is not None and self._launched_in_study(records) >= total_budget:
                summary.stopped_because = f"the study's budget of {total_budget} trials is spent"
                break
            if len(self._measured_keys(records)) >= self.n_configs:
                summary.stopped_because = "every valid effective config has been measured"
                break
            if deadline is not None and time.monotonic() + self._expected_duration_s() > deadline:
                summary.stopped_because = "the next trial would not finish before --timeout"
                break
            if idle >= MAX_IDLE_PROPOSALS:
                summary.stopped_because = f"{idle} proposals in a row were invalid or already measured"
                break
            outcome = self._one_trial(baseline)
            if outcome == ABANDONED:
                time.sleep(random.uniform(0.05, 0.5))  # another worker took the last budget slot
                continue
            if outcome == MEASURED or outcome == FAILED:
                summary.measured += 1
                idle = 0
            else:
                idle += 1
                summary.invalid += outcome == INVALID
                summary.reused += outcome == REUSED
            self.emit("progress", {"measured": summary.measured, "n_trials": n_trials or total_budget,
                                   "elapsed_s": time.monotonic() - started,
                                   "eta_s": self._eta(summary, n_trials, total_budget)})
        self.emit("finished", {"summary": summary.__dict__})
        return summary

    def _eta(self, summary, n_trials, total_budget) -> float | None:
        left = None
        if n_trials is not None:
            left = n_trials - summary.measured
        if total_budget is not None:
            left_total = total_budget - self._launched_in_study()
            left = left_total if left is None else min(left, left_total)
        if left is None or not self.durations:
            return None
        return max(left, 0) * (sum(self.durations) / len(self.durations))

    # -- baseline -------------------------------------------------------------------------------
    def _ensure_baseline(self, rebaseline: bool) -> Baseline:
        import optuna
        from optuna.trial import TrialState

        bstudy = optuna.create_study(study_name=self.study.study_name + BASELINE_SUFFIX, storage=self.storage,
                                     direction="maximize", load_if_exists=True)
        current = find_baseline(self.study)
        if current and not rebaseline:
            self.emit("baseline", {"reused": True, "figures": current.figures.__dict__})
            return current
        after = current.trial_number if current else -1
        while True:
            reap_dead_trials(bstudy)
            done = find_baseline(self.study)
            if done and done.trial_number > after:
                return done
            trial = _ask(bstudy)
            with Heartbeat(self.storage, trial._trial_id):
                trial.set_user_attr("worker", self.worker.as_dict())
                if not try_claim(bstudy, trial, "baseline"):
                    # Another worker is measuring the baseline: wait for it (or for it to die).
                    _tell(bstudy, trial, state=TrialState.FAIL)
                    self.emit("waiting", {"for": "the baseline, measured by another worker"})
                    self._wait_for_claim(bstudy, "baseline")
                    continue
                done = find_baseline(self.study)
                if done and done.trial_number > after:
                    # Another worker finished it between our look and our claim.
                    _tell(bstudy, trial, state=TrialState.FAIL)
                    return done
                self.emit("trial_start", {"trial": "baseline", "spec": None})
                m = self._measure(None, "baseline", trial, study=bstudy)
                if m.failure_class:
                    _tell(bstudy, trial, state=TrialState.FAIL)
                    raise BaselineError(m)
                self.durations.append(m.duration_s)
                _tell(bstudy, trial, 0.0)
            return find_baseline(self.study)

    def _wait_for_claim(self, study, key: str) -> None:
        """Wait until no running trial holds ``key`` (it finished, or its worker died)."""
        from optuna.trial import TrialState

        while True:
            reap_dead_trials(study)
            running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
            if not any(t.user_attrs.get("claim") == key for t in running):
                time.sleep(random.uniform(0, POLL_S))  # racing claimants must not retry in step
                return
            time.sleep(POLL_S)

    # -- one trial ------------------------------------------------------------------------------
    def _one_trial(self, baseline: Baseline) -> str:
        reap_dead_trials(self.study)
        trial = _ask(self.study, self.space.distributions())
        # Beat from the first moment: a worker that dies before its first heartbeat would leave a
        # trial (and its claim) that Optuna never calls stale.
        with Heartbeat(self.storage, trial._trial_id):
            return self._run_trial(trial, baseline)

    def _run_trial(self, trial, baseline: Baseline) -> str:
        from optuna.trial import TrialState

        trial.set_user_attr("worker", self.worker.as_dict())
        trial.set_user_attr("launching", False)  # a retried trial inherits its dead original's attrs
        requested = spec_from_params(trial.params)
        res = self.space.resolve(requested)
        trial.set_user_attr("requested", requested.as_dict())
        if not res.ok:
            v = res.violation
            self._finish(trial, INVALID, None, {
                "effective": res.effective.as_dict() if res.effective else None,
                "failure_class": f"rule:{v.rule}", "failure_message": v.message,
                "sglang_error": f"{v.sglang_exception}: {v.sglang_message}".rstrip(": "),
            })
            self.emit("trial_skip", {"trial": trial.number, "spec": requested.label(), "why": f"invalid ({v.rule})"})
            return INVALID
        eff = res.effective
        key = spec_key(eff)
        trial.set_user_attr("effective", eff.as_dict())
        trial.set_user_attr("effective_key", key)
        trial.set_user_attr("rewritten", res.rewritten)
        while True:
            prior = self._prior_measurement(key, trial.number)
            if prior is not None:
                self._finish(trial, REUSED, prior.values, {"reused_from": prior.number,
                             **{k: v for k, v in prior.attrs.items() if _is_figure(k) or k in _FAILURE_KEYS}},
                             feasible=prior.feasible)
                self.emit("trial_skip", {"trial": trial.number, "spec": eff.label(),
                                         "why": f"same as trial {prior.number}"})
                return REUSED
            if try_claim(self.study, trial, key):
                # A worker that finished this config between our look and our claim has left its
                # result in storage before its claim went away: look once more, holding the claim.
                if self._prior_measurement(key, trial.number) is None:
                    break
                trial.set_user_attr("claim", None)
                continue
            self.emit("waiting", {"trial": trial.number, "for": f"another worker measuring {eff.label()}"})
            self._wait_for_claim(self.study, key)
        if not self._budget_allows(trial):
            trial.set_user_attr("launching", False)
            trial.set_user_attr("status", ABANDONED)
            _tell(self.study, trial, state=TrialState.FAIL)
            return ABANDONED
        self.emit("trial_start", {"trial": trial.number, "spec": eff.label(), "requested": requested.label()})
        try:
            m = self._measure(eff, f"trials/{trial.number}", trial, baseline=baseline)
        except BaseException:
            # Ctrl-C or a crash of the tuner itself: the server is stopped by the backend; the trial
            # goes back to the queue with the same parameters.
            if self.study.get_trials(deepcopy=False)[trial.number].state == TrialState.RUNNING:
                _tell(self.study, trial, state=TrialState.FAIL)
                self.study.enqueue_trial(trial.params, user_attrs={"retry_of": trial.number})
            raise
        self.durations.append(m.duration_s)
        return FAILED if m.failure_class else MEASURED

    def _budget_allows(self, trial) -> bool:
        """Whether this trial may launch within the study's total budget, with other workers about.

        Mark, then count: the trial announces it is launching before it counts finished launches
        and the other announced ones. Of two racing workers at least one sees the other, so the
        budget is never exceeded (at worst both step back and ask again).
        """
        from optuna.trial import TrialState

        budget = self.config.budget.n_trials
        if budget is None:
            return True
        trial.set_user_attr("launching", True)
        running = self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        in_flight = sum(1 for t in running if t.number != trial.number and t.user_attrs.get("launching"))
        return self._launched_in_study() + in_flight < budget

    def _prior_measurement(self, key: str, number: int):
        for r in load_records(self.study):
            if r.number != number and r.attrs.get("effective_key") == key and r.status in (MEASURED, FAILED):
                return r
        return None

    def _measure(self, spec: SpecConfig | None, label: str, trial, baseline: Baseline | None = None,
                 study=None):
        """Measure through the backend; the result is written to storage before the server stops."""
        study = study or self.study

        def record(m) -> None:
            # The server log (a snapshot, before the server stops) and the suite's JSON, as Optuna
            # artifacts of the still-running trial, so optuna-dashboard shows them.
            from .artifacts import store_trial_artifacts

            files = [p for p in (m.log_path, m.result_path) if p]
            if files:
                store_trial_artifacts(study, trial, files, self.config.workdir)
            attrs = _measurement_attrs(m, spec)
            if baseline is None:  # the baseline trial
                for k, v in attrs.items():
                    trial.set_user_attr(k, v)
                if not m.failure_class:
                    trial.set_user_attr("status", MEASURED)
                return
            values, status = None, FAILED
            if not m.failure_class:
                try:
                    values = objective_values(self.config.objectives, m.figures, baseline.figures)
                    status = MEASURED
                except ValueError as exc:
                    attrs.update(failure_class="incomplete", failure_message=str(exc))
            if status == MEASURED and attrs.get("args_mismatch"):
                status = FAILED
                attrs.update(failure_class="args_mismatch", failure_message=(
                    f"the server ran {attrs.get('resolved_spec')} instead of {spec.label()}: "
                    "SGLang rewrote the setting in a way tuner.rules does not know"))
            if status == MEASURED:
                attrs.update(_speedups(m.figures, baseline.figures))
            self._finish(trial, status, values, attrs, feasible=status == MEASURED)
            self.emit("trial_done", {"trial": trial.number, "spec": spec.label(), "status": status,
                                     "values": values, "failure_class": attrs.get("failure_class")})

        return self.backend.measure(spec, label, record, on_event=self.emit)

    def _finish(self, trial, status: str, values, attrs: dict, feasible: bool = False) -> None:
        """Attributes, constraint, then tell: all before anything else happens to the trial."""
        for k, v in attrs.items():
            trial.set_user_attr(k, v)
        trial.set_user_attr("status", status)
        trial.set_user_attr("finished_at", _now())
        trial.set_constraint(CONSTRAINT, -1.0 if feasible else 1.0)
        _tell(self.study, trial, values if values is not None else worst_values(self.config.objectives))


class BaselineError(RuntimeError):
    """The baseline could not be measured: nothing else can be compared, so the run stops."""

    def __init__(self, m):
        self.measurement = m
        super().__init__(f"the autoregressive baseline failed ({m.failure_class}): {m.failure_message}"
                         + (f"; log: {m.log_path}" if m.log_path else ""))


_FAILURE_KEYS = ("failure_class", "failure_message", "log_tail")


def _is_figure(key: str) -> bool:
    return "tok_per_s" in key or "latency" in key or "ttft" in key or key.startswith(("accept_length", "speedup@",
                                                                                       "single_speedup", "errors@"))


def _speedups(figures, base: StoredFigures) -> dict:
    out = {}
    if figures.single_tok_per_s and base.single_tok_per_s:
        out["single_speedup"] = figures.single_tok_per_s / base.single_tok_per_s
    for c, b in base.tok_per_s.items():
        v = figures.tok_per_s_at(c)
        if v is not None and b:
            out[f"speedup@{c}"] = v / b
    return out


def _measurement_attrs(m, spec: SpecConfig | None) -> dict:
    attrs: dict[str, Any] = {"duration_s": round(m.duration_s, 3), "log_path": m.log_path}
    if m.failure_class:
        attrs.update(failure_class=m.failure_class, failure_message=m.failure_message,
                     log_tail=m.log_tail)
    if m.figures is not None:
        attrs.update(figure_attrs(m.figures))
        resolved = getattr(m.figures, "resolved_spec", None)
        if resolved is not None and spec is not None:
            attrs["resolved_spec"] = resolved.label()
            attrs["args_mismatch"] = resolved != spec
        info = getattr(m.figures, "server_info", None)
        if info:
            attrs["server_args"] = {k: v for k, v in info.items() if isinstance(v, (int, float, str, bool))}
        version = getattr(m.figures, "server_version", None)
        if version:
            attrs["sglang_version"] = version
        if getattr(m, "result_path", None):
            attrs["suite_json"] = m.result_path
    return json.loads(json.dumps(attrs, default=str))
