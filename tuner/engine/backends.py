"""Backends: the one seam between the study engine and the world.

``Backend.measure(spec, label, record)`` measures one server configuration with the study's suite
(``spec=None``: the autoregressive baseline) and returns a :class:`Measurement`.

* :class:`ServerBackend` launches a real process per measurement -- ``python -m sglang.launch_server``
  on a GPU node, or the simulated server ``python -m tuner.sim`` -- through :mod:`tuner.server.launcher`, and
  runs the suite over HTTP with :mod:`tuner.bench`. The code path is the same for both.
* :class:`ModelBackend` evaluates the simulator's performance model, or a landscape table of true
  figures, directly (no process, no HTTP), with measurement noise: ``server.backend: model``, and
  the search-efficiency benchmark runs thousands of trials through it. :func:`make_backend` picks
  the study's backend.

Contract, for every backend: ``measure`` owns every process it starts and leaves none behind, whether
it returns or raises (``KeyboardInterrupt`` included). It calls ``record(measurement)`` exactly once,
*before* the server stops, so the result reaches storage even if stopping hangs. Launch failures and
crashed runs are returned as a :class:`Measurement` with ``failure_class`` set, never raised. Every
backend measures in the study's staged order (:func:`study_plan`, the same for the baseline and every
trial) and offers the partial figures to ``on_stage`` after each stage; when it says stop, the
suite stops there (``Measurement.stopped_after``) and the server stops as after a whole suite.

:class:`ServerBackend`, against a real server, also returns as failed measurements (figures None; the
suite's result saved beside the log as ``suite.partial.json`` or ``suite.rejected.json``, never lost):

* ``hung``: the server stopped answering, or the measurement outlived its deadline
  (:mod:`tuner.bench.watch`, :mod:`tuner.engine.deadline`); its process group is SIGKILLed right
  after the record, without the SIGTERM grace;
* ``args_unverified``, ``args_mismatch``, ``bad_response``: what the server said could not be
  trusted (:mod:`tuner.engine.verify`);
* ``request_errors`` (or the log's class): requests failed; the message quotes the first failed
  request's own error (status and body).

A backend writes no result file itself: the suite's JSON (``to_save``, for ``result_path``) is
written by the recorder after the figures are in storage (:mod:`tuner.engine.finish`), so a full
disk cannot cost the measurement.
"""

from __future__ import annotations

import errno
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from ..config.study import StudyConfig
from ..sglang.rules import SpecConfig
from .deadline import trial_deadline
from .killpoints import kill_point
from .verify import verify_result
# suite_model_seconds: imported from here since issue 17
from .model_suite import ModelFigures, staged_figures, suite_model_seconds  # noqa: F401

Record = Callable[["Measurement"], None]
#: the failure class of a server that stopped answering or outlived its deadline (tuner.bench.watch)
HUNG = "hung"
Event = Callable[[str, dict], None]
#: ``on_stage(index, stage name, partial figures) -> stop``: called after every stage of the study's
#: order (:func:`study_plan`) but the last; true stops the suite there (the trial is pruned)
OnStage = Callable[[int, str, Any], bool]


@dataclass
class Measurement:
    """What one measurement produced: figures, or why there are none."""

    figures: Any | None  #: a SuiteResult, or model figures; None when nothing was measured
    failure_class: str | None = None  #: see tuner.server.launcher (invalid_args, oom, ... crash_after_ready)
    failure_message: str | None = None
    log_tail: str | None = None
    log_path: str | None = None
    result_path: str | None = None  #: where the suite's JSON goes (written by the recorder)
    to_save: Any | None = None  #: what goes there: the SuiteResult (or the partial one of a crashed run)
    duration_s: float = 0.0
    command: list[str] = field(default_factory=list)
    #: modelled GPU seconds the measurement took (load and suite), when the backend models time
    #: (ModelBackend); None for a real measurement (``duration_s`` is its wall time)
    model_duration_s: float | None = None
    #: the stage of the study's order after which ``on_stage`` stopped the suite (the figures are
    #: then partial: a pruned trial); None when the suite ran to its end
    stopped_after: str | None = None


class WorkdirUnwritable(RuntimeError):
    """A launch could not write a file it needs under the workdir (a full or read-only disk): the
    server is stopped, the trial queued again, and the worker stops with one line (nothing was
    measured, so nothing is lost, and no setting is blamed for the disk)."""


class Backend(Protocol):
    def measure(self, spec: SpecConfig | None, label: str, record: Record,
                on_event: Event | None = None, on_stage: OnStage | None = None) -> Measurement: ...


def study_plan(config: StudyConfig, suite):
    """The order every measurement of the study follows (:func:`tuner.bench.plan.stage_plan`): the
    sweep levels the objectives read come in the first stage."""
    from ..bench.plan import stage_plan
    from ..config.study import objective_concurrency

    return stage_plan(suite, [c for c in map(objective_concurrency, config.objectives) if c])


def _noop(kind: str, info: dict) -> None:
    pass


class ServerBackend:
    """Launch the study's server (SGLang or the simulator) per measurement and run the suite."""

    def __init__(self, config: StudyConfig, fixed_args: dict, suite, algorithm: str = "EAGLE3",
                 attention=None):
        """``attention``: the study's attention decision (``SearchSpace.attention``); None pins the
        launcher's default backend (a study created before the decision was stored)."""
        from ..server.command import study_max_concurrency

        self.config = config
        self.attention = attention
        self.fixed_args = dict(fixed_args)
        self.suite = suite
        self.algorithm = algorithm
        self.server = config.server.model_copy(update={"python": config.server.python or sys.executable})
        self.max_concurrency = max(study_max_concurrency(config), max(suite.sweep.concurrencies, default=1))
        self.workdir = Path(config.workdir or Path("studies") / config.name)
        #: how long one measurement (launch and suite) may take, and the rule that set it
        #: (:mod:`tuner.engine.deadline`); the engine sets it once the baseline is known
        self.trial_deadline_s, self.deadline_rule = trial_deadline(config, None)
        self.plan = study_plan(config, suite)  #: the staged order every measurement follows

    def set_trial_deadline(self, seconds: float | None, rule: str) -> None:
        """From now on, every measurement ends as ``hung`` past ``seconds`` (None: no deadline)."""
        self.trial_deadline_s, self.deadline_rule = seconds, rule

    def command(self, spec: SpecConfig | None, port: int | None = None) -> list[str]:
        """The exact argv a measurement of ``spec`` would launch (for dry runs)."""
        from ..server.command import build_argv

        return build_argv(self.server, spec, algorithm=self.algorithm, fixed_args=self.fixed_args,
                          port=self.server.port if port is None else port, max_concurrency=self.max_concurrency,
                          attention=self.attention)

    def cleanup_orphans(self) -> list[int]:
        """Stop servers a dead tuner on this host left running; their pids."""
        from ..server.orphans import cleanup_orphans

        return [rec.pid for rec in cleanup_orphans(self.workdir)]

    def measure(self, spec: SpecConfig | None, label: str, record: Record,
                on_event: Event | None = None, on_stage: OnStage | None = None) -> Measurement:
        from ..server.launcher import LaunchError, ServerProcess, stop_on_signals

        emit = on_event or _noop
        started = time.monotonic()
        trial_dir = self.workdir / label
        proc = ServerProcess(self.server, spec, workdir=self.workdir, trial_dir=trial_dir,
                             fixed_args=self.fixed_args, algorithm=self.algorithm,
                             max_concurrency=self.max_concurrency, attention=self.attention)
        m: Measurement | None = None
        try:
            with stop_on_signals(proc):
                emit("phase", {"phase": "launching", "label": label})
                try:
                    self._start(proc)
                    kill_point("launched" if spec is not None else "baseline.launched")
                    proc.wait_ready()
                except LaunchError as exc:
                    m = self._failed(exc.failure_class, exc.message, exc.log_tail, proc, started)
                else:
                    emit("phase", {"phase": "benchmark", "label": label})
                    m = self._benchmark(proc, spec, trial_dir, started, emit, on_stage)
                emit("phase", {"phase": "recording", "label": label})
                record(m)
                if m.failure_class == HUNG:
                    # Past a graceful stop (a frozen group cannot even act on SIGTERM): its whole
                    # group is killed now, and stop() below reaps it and frees the port.
                    proc.kill()
                emit("phase", {"phase": "stopping", "label": label})
        finally:
            proc.stop()
        return m

    def _benchmark(self, proc, spec: SpecConfig | None, trial_dir: Path, started: float,
                   emit: Event, on_stage: OnStage | None = None) -> Measurement:
        """Run the suite on the ready server within the trial's deadline; verify what it said."""
        from ..bench import (ServerDiedError, ServerHungError, ServerInfoError, ServerUnreachableError,
                             run_suite)

        deadline = self.trial_deadline_s
        left = None if deadline is None else max(1.0, deadline - (time.monotonic() - started))
        bench = self.config.bench
        try:
            result = run_suite(proc.url, self.suite, api=bench.api, stream=bench.stream,
                               on_event=lambda phase, info: emit("phase", {"phase": phase, **info}),
                               deadline_s=left, plan=self.plan, after_stage=on_stage)
        except ServerHungError as exc:
            why = str(exc)
            if exc.reason == "deadline":
                why += f" (trial deadline {deadline:.0f} s: {self.deadline_rule})"
            return self._failed(HUNG, f"{why} (log: {proc.log_path})", proc.log_tail(), proc, started,
                                exc.partial, trial_dir)
        except (ServerDiedError, ServerUnreachableError) as exc:  # unreachable: gone right after ready
            cls, msg, tail = proc.classify_exit()
            return self._failed(cls, msg, tail, proc, started, getattr(exc, "partial", None), trial_dir)
        except ServerInfoError as exc:
            return self._failed("args_unverified", str(exc), proc.log_tail(), proc, started)
        problem = verify_result(result, spec, self.config, self.algorithm)
        if problem is not None:
            # Kept on disk as evidence, never as figures: its numbers are not a result.
            cls, msg = problem
            result.warnings.append(f"rejected by the tuner ({cls}): {msg}")
            return self._failed(cls, msg, proc.log_tail(), proc, started, result, trial_dir,
                                "suite.rejected.json")
        m = self._from_result(result, proc, trial_dir, started)
        m.stopped_after = result.stopped_after
        failed = [r for r in result.records if not r.ok]
        if failed:
            # Errors inside an otherwise complete run: SGLang's speculative runtime failures
            # ("selected index k out of range") answer HTTP 500 and live on. The log may name the
            # cause (spec_runtime, oom, ...); otherwise the failed request's own error does.
            first = failed[0]
            m.failure_class, m.failure_message, m.log_tail = proc.classify_exit(first.error or "")
            if m.failure_class == "other":
                m.failure_class = "request_errors"
                m.failure_message = (f"{len(failed)} of {len(result.records)} requests failed; first: "
                                     f"{first.phase} {first.prompt} at {first.max_tokens} tokens: "
                                     f"{first.error} (log: {proc.log_path})")
        return m

    def _start(self, proc) -> None:
        """``proc.start()``; a disk that refuses the server's log or record (full, read-only) is
        :class:`WorkdirUnwritable`: the disk's fault, not the setting's."""
        try:
            proc.start()
        except OSError as exc:
            in_workdir = exc.filename is not None and Path(exc.filename).is_relative_to(self.workdir.resolve())
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EROFS) and not in_workdir:
                raise
            raise WorkdirUnwritable(
                f"workdir {self.workdir}: cannot write {exc.filename or 'the server log or record'} "
                f"({exc.strerror or exc}); free space or fix its permissions and run again (the trial is "
                "queued again)") from None

    def _from_result(self, result, proc, trial_dir: Path, started: float) -> Measurement:
        return Measurement(result, log_path=str(proc.log_path), result_path=str(trial_dir / "suite.json"),
                           to_save=result, duration_s=time.monotonic() - started, command=list(proc.argv))

    def _failed(self, cls, message, tail, proc, started, result=None, trial_dir: Path | None = None,
                name: str = "suite.partial.json") -> Measurement:
        """A failed measurement; ``result`` (a partial or rejected suite result) is written as ``name``
        by the recorder, for the record, never kept as figures."""
        path = trial_dir / name if result is not None and trial_dir is not None else None
        return Measurement(None, failure_class=cls, failure_message=message, log_tail=tail,
                           log_path=str(proc.log_path), result_path=str(path) if path else None,
                           to_save=result if path else None,
                           duration_s=time.monotonic() - started, command=list(proc.argv))


#: Modelled seconds a launch takes before the suite runs when neither the study (``server.model.
#: load_s``), the landscape table (``load_s``) nor the profile (``runtime.load_s``) says: ten
#: minutes, a large model's load.
DEFAULT_LOAD_S = 600.0
#: The failure class of a setting a landscape table does not list (it fails at launch).
NOT_IN_LANDSCAPE = "not_in_landscape"


class ModelBackend:
    """The performance model, or a landscape table, as a backend: no process, no HTTP, seeded noise.

    ``source`` is a simulator profile (a shipped name or a YAML path: the model's expected figures
    for the suite) or a :class:`tuner.config.landscape.LandscapeTable` (its rows as they are; a
    setting it does not list fails at launch, failure class ``not_in_landscape``, as a tree fails
    on some model/backend pairs). With a profile, a setting whose weights, speculative workspace
    and KV cache do not fit the GPUs fails at launch as ``oom``, exactly as the simulated server
    would (``PerfModel.kv_budget_ok`` with the launcher's pinned ``max_running_requests``).

    ``noise`` is the relative standard deviation applied to every throughput figure, standing in
    for the run-to-run spread of a real measurement (the accept length is left exact: a real
    server averages it over thousands of verify steps). With a ``seed``, each measurement's draw is
    a pure function of the seed and the measurement's label (``trials/12``, ``baseline``), so a
    continued or restarted study does not replay earlier draws and a re-measurement (a new trial)
    draws anew; without one every run draws fresh noise.

    Every measurement follows the study's staged order (``plan``, :func:`study_plan`) request by
    request (:mod:`tuner.engine.model_suite`): the figures after each stage go to ``on_stage``, the
    last stage's are the whole-suite figures drawn above, and a suite stopped after a stage costs
    only what it measured. Every measurement carries ``model_duration_s``: the modelled GPU time it
    took: ``load_s`` (the study's, else the table's or the profile's ``runtime.load_s``, else
    :data:`DEFAULT_LOAD_S`), the warm-up, the flushes and every request at its rate.
    """

    def __init__(self, source, suite, noise: float = 0.02, seed: int | None = 0, load_s: float | None = None,
                 max_running_requests: int | None = None, server_args: dict | None = None, plan=None):
        from ..config.landscape import LandscapeTable

        self.suite = suite
        self.noise = noise
        self.seed = seed
        self.rng = random.Random(seed)
        self.calls = 0
        self._cache: dict = {}
        self.table = source if isinstance(source, LandscapeTable) else None
        self.model = None
        if self.table is None:
            from ..sim.model import PerfModel, load_profile

            self.model = PerfModel(load_profile(source))
        source_load = self.table.load_s if self.table is not None else self.model.profile.runtime.load_s
        self.load_s = load_s if load_s is not None else (source_load if source_load is not None else DEFAULT_LOAD_S)
        from ..bench.plan import stage_plan

        self.plan = list(plan) if plan is not None else stage_plan(suite)
        self._rows: dict = {}
        self.max_running_requests = max_running_requests or max(suite.sweep.concurrencies, default=1)
        self.server_args = dict(server_args or {})

    @property
    def source_label(self) -> str:
        return f"landscape {self.table.source}" if self.table is not None else f"profile {self.model.profile.name}"

    def expected(self, spec: SpecConfig | None):
        """The true (noise-free) figures of ``spec`` (None: the baseline); None when ``spec`` has
        none (not in the landscape table)."""
        if spec not in self._cache:
            self._cache[spec] = self._table_figures(spec) if self.table is not None else self._model_figures(spec)
        return self._cache[spec]

    def row_rates(self, spec: SpecConfig | None) -> dict[tuple[str, int], float]:
        """The true tok/s of each single-request row (prompt name, length): the model's for that
        prompt and length, or a table's one single-request figure for every row."""
        if spec not in self._rows:
            s = self.suite
            rows = [(p, n) for p in s.single_prompts() for n in s.single_lengths(p)]
            if self.table is not None:
                rate = self.expected(spec).single_tok_per_s
                self._rows[spec] = {(p.name, n): rate for p, n in rows}
            else:
                tokens = round(sum(s.sweep_tokens(p) for p in s.prompts) / len(s.prompts))
                self._rows[spec] = {(p.name, n): self.model.expected_figures(
                    spec, prompts=[p.text], single_lengths=[n], concurrencies=[], sweep_tokens=tokens).single_tok_per_s
                    for p, n in rows}
        return self._rows[spec]

    def _table_figures(self, spec):
        row = self.table.baseline if spec is None else self.table.configs.get(spec)
        if row is None:
            return None
        return ModelFigures(row.single_tok_per_s, dict(row.tok_per_s),
                            row.accept_length if spec is not None else 1.0)

    def _model_figures(self, spec):
        s = self.suite
        # A dataset suite sends each request at its own length; the closed-form model takes one
        # set of lengths for every prompt: the requests' distinct lengths and their mean.
        lengths = sorted({n for p in s.single_prompts() for n in s.single_lengths(p)})
        sweep_tokens = round(sum(s.sweep_tokens(p) for p in s.prompts) / len(s.prompts))
        exp = self.model.expected_figures(
            spec, prompts=[p.text for p in s.prompts], single_lengths=lengths,
            concurrencies=list(s.sweep.concurrencies), sweep_tokens=sweep_tokens)
        return ModelFigures(exp.single_tok_per_s, dict(exp.tok_per_s), exp.accept_length)

    def launch_failure(self, spec: SpecConfig | None) -> tuple[str, str] | None:
        """``(failure_class, message)`` when a launch of ``spec`` fails, else None."""
        if self.table is not None:
            if spec is not None and spec not in self.table.configs:
                return NOT_IN_LANDSCAPE, (f"{spec.label()} is not in landscape {self.table.source}: a setting "
                                          "the table does not list fails at launch")
            return None
        # As the simulated server starts up (tuner/sim/server.py, _start_up): --context-length, else
        # the profile's default context; --mem-fraction-static, else the profile's default.
        args = self.server_args
        context = args.get("context_length") or self.model.profile.runtime.default_context_tokens
        ok, message = self.model.kv_budget_ok(spec, self.max_running_requests, int(context),
                                              mem_fraction_static=args.get("mem_fraction_static"))
        return None if ok else ("oom", message)

    def _rng(self, label: str) -> random.Random:
        return self.rng if self.seed is None else random.Random(f"{self.seed}:{label}")

    def measure(self, spec: SpecConfig | None, label: str, record: Record,
                on_event: Event | None = None, on_stage: OnStage | None = None) -> Measurement:
        self.calls += 1
        failure = self.launch_failure(spec)
        if failure is not None:
            m = Measurement(None, failure_class=failure[0], failure_message=failure[1],
                            model_duration_s=self.load_s)
            record(m)
            return m
        figs = self.full_figures(spec, label)
        warmup_s, stages = staged_figures(self.plan, self.suite, self.row_rates(spec), figs, self.noise,
                                          self._rng(label + ":stages"))
        spent = self.load_s + warmup_s
        figs.stages = [(st.name, st.figures) for st in stages]
        figs.request_cv = self.noise
        m = Measurement(figs)
        for i, st in enumerate(stages):
            spent += st.seconds
            if i < len(stages) - 1 and on_stage is not None and on_stage(i, st.name, st.figures):
                m = Measurement(st.figures, stopped_after=st.name)
                st.figures.stages = figs.stages[:i + 1]
                break
        m.model_duration_s = spent
        record(m)
        return m

    def full_figures(self, spec: SpecConfig | None, label: str) -> ModelFigures:
        """The whole-suite figures a measurement labelled ``label`` reads (its noise draw): what the
        full suite gives, whether or not ``on_stage`` stops it earlier (the benchmark's check of
        pruning asks this of pruned trials)."""
        exp = self.expected(spec)
        rng = self._rng(label)
        jitter = lambda v: v * max(0.01, rng.gauss(1.0, self.noise))  # noqa: E731
        return ModelFigures(jitter(exp.single_tok_per_s), {c: jitter(v) for c, v in exp.tok_per_s.items()},
                            exp.accept_length)


def make_backend(config: StudyConfig, space, suite) -> "Backend":
    """The study's backend: :class:`ModelBackend` for ``server.backend: model``, else a
    :class:`ServerBackend` (SGLang or the simulator). Raises :class:`ConfigError` for a model
    source that does not load (a bad profile or landscape file)."""
    if config.server.backend != "model":
        return ServerBackend(config, space.config.fixed, suite, algorithm=space.config.algorithm,
                             attention=space.attention)
    from ..config.study import objective_concurrency

    m = config.server.model
    source = m.profile
    if m.landscape is not None:
        from ..config.landscape import load_landscape

        source = load_landscape(m.landscape)
    # The launcher pins max_running_requests to the study's largest concurrency (server/command.py)
    levels = [*suite.sweep.concurrencies, *(c for c in map(objective_concurrency, config.objectives) if c)]
    concurrency = config.server.args.get("max_running_requests") or max(levels or [1])
    return ModelBackend(source, suite, noise=m.noise, seed=m.seed, load_s=m.load_s,
                        max_running_requests=int(concurrency), server_args=config.server.args,
                        plan=study_plan(config, suite))
