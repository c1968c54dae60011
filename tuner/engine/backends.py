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
* ``crash_after_ready`` (or the log's class) when the launched process exited during the suite, even
  though answers kept coming: they came from another process on its port;
* ``request_errors`` (or the log's class): requests failed; the message quotes the first failed
  request's own error (status and body).

A backend writes no result file itself: the suite's JSON (``to_save``, for ``result_path``) is
written by the recorder after the figures are in storage (:mod:`tuner.engine.finish`), so a full
disk cannot cost the measurement.
"""

from __future__ import annotations

import errno
import sys
import time
from pathlib import Path
from typing import Protocol

from ..config.study import StudyConfig
from ..config.wording import counted
from ..sglang.rules import SpecConfig
from .deadline import trial_deadline
from .killpoints import kill_point
# What a measurement is, and the model backend, have their own modules; readers import them from
# here as before (and suite_model_seconds, as since issue 17).
from .measurement import (Event, Measurement, OnStage, Record, ServerOutOfThreads,  # noqa: F401
                          WorkdirUnwritable, server_out_of_threads)
from .model_backend import DEFAULT_LOAD_S, NOT_IN_LANDSCAPE, ModelBackend  # noqa: F401
from .model_suite import suite_model_seconds  # noqa: F401
from .verify import behind_note, verify_result

#: the failure class of a server that stopped answering or outlived its deadline (tuner.bench.watch)
HUNG = "hung"


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

    def launch_warnings(self) -> list[str]:
        """What every launch of this study warns about (a cap below the largest concurrency), once:
        the same for the baseline and each setting, as they depend on the server's arguments alone."""
        from ..server.command import plan_launch

        return plan_launch(self.server, None, algorithm=self.algorithm, fixed_args=self.fixed_args,
                           port=self.server.port or 30000, max_concurrency=self.max_concurrency,
                           attention=self.attention, log_warnings=False).warnings

    def command(self, spec: SpecConfig | None, port: int | None = None) -> list[str]:
        """The exact argv a measurement of ``spec`` would launch (for dry runs; its warnings, the same
        for every launch, are :meth:`launch_warnings`)."""
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
                             max_concurrency=self.max_concurrency, attention=self.attention,
                             study=self.config.name)
        m: Measurement | None = None
        try:
            with stop_on_signals(proc):
                emit("phase", {"phase": "launching", "label": label})
                try:
                    self._start(proc)
                    # Waiting for another tuner to let the GPUs go (SGLang: tuner.server.gpu_lock) is
                    # no part of this measurement: not of its duration, nor of its deadline.
                    started += proc.gpu_wait_s
                    kill_point("launched" if spec is not None else "baseline.launched")
                    proc.wait_ready()
                except LaunchError as exc:
                    m = self._failed(exc.failure_class, exc.message, exc.log_tail, proc, started)
                else:
                    emit("phase", {"phase": "benchmark", "label": label})
                    m = self._benchmark(proc, spec, trial_dir, started, emit, on_stage)
                starved = server_out_of_threads(m)
                if starved is not None:  # the node's thread limit, the same for every setting: none blamed
                    raise starved
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
        from ..bench import (
            ServerDiedError,
            ServerHungError,
            ServerInfoError,
            ServerUnreachableError,
            SuiteOverContext,
            run_suite,
        )
        from ..server.launcher import EXIT_WAIT_S

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
            # its socket is gone; its process may take a moment more to exit (its status says why)
            cls, msg, tail = proc.classify_exit(exit_wait_s=EXIT_WAIT_S)
            return self._failed(cls, msg, tail, proc, started, getattr(exc, "partial", None), trial_dir)
        except ServerInfoError as exc:
            return self._failed("args_unverified", str(exc), proc.log_tail(), proc, started)
        except SuiteOverContext as exc:
            # before any request: every server of the study has this context, so the baseline fails on
            # it with this line (BaselineError), not a setting
            return self._failed("request_errors", str(exc), proc.log_tail(), proc, started)
        if proc.returncode is not None:
            # The process it launched exited while the suite ran, yet the suite went on: whatever
            # answered after it (a copy it started, a supervisor's restart, a stranger on the port) is
            # not the server verified at the start. SGLang's launch_server process serves the HTTP API
            # itself (entrypoints/http_server.py launch_server), so it lives as long as its answers.
            cls, msg, tail = proc.classify_exit()
            msg = (f"{msg}; the suite went on to its end: another process answered on its port, not the "
                   "server this tuner launched and verified")
            result.warnings.append(f"rejected by the tuner ({cls}): {msg}")
            return self._failed(cls, msg, tail, proc, started, result, trial_dir, "suite.rejected.json")
        problem = verify_result(result, spec, self.config, self.algorithm)
        if problem is not None:
            # Kept on disk as evidence, never as figures: its numbers are not a result.
            cls, msg = problem
            result.warnings.append(f"rejected by the tuner ({cls}): {msg}")
            return self._failed(cls, msg, proc.log_tail(), proc, started, result, trial_dir,
                                "suite.rejected.json")
        behind = behind_note(result)
        if behind:
            result.warnings.append(behind)  # kept in the suite JSON
            emit("warning", {"trial": None, "message": f"{'the baseline' if spec is None else spec.label()}: "
                                                       f"{behind}"})
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
                m.failure_message = (f"{len(failed)} of {counted(len(result.records), 'request')} failed; first: "
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
        from ..config.yamlfile import ConfigError

        source = load_landscape(m.landscape)
        if m.landscape_sha256 and source.sha256 != m.landscape_sha256:
            # the stored study measured another table: mixing two landscapes in one study is wrong
            raise ConfigError(m.landscape, "", f"changed since study {config.name} was created (SHA-256 "
                              f"{source.sha256[:12]}..., the study's {m.landscape_sha256[:12]}...); put back the "
                              "table it was created with, or create a new study for this one")
    # The launcher pins max_running_requests to the study's largest concurrency (server/command.py)
    levels = [*suite.sweep.concurrencies, *(c for c in map(objective_concurrency, config.objectives) if c)]
    concurrency = config.server.args.get("max_running_requests") or max(levels or [1])
    return ModelBackend(source, suite, noise=m.noise, seed=m.seed, load_s=m.load_s,
                        max_running_requests=int(concurrency), server_args=config.server.args,
                        plan=study_plan(config, suite), api=config.bench.api)
