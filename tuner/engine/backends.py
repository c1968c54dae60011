"""Backends: the one seam between the study engine and the world.

``Backend.measure(spec, label, record)`` measures one server configuration with the study's suite
(``spec=None``: the autoregressive baseline) and returns a :class:`Measurement`.

* :class:`ServerBackend` launches a real process per measurement -- ``python -m sglang.launch_server``
  on a GPU node, or the simulated server ``python -m tuner.sim`` -- through :mod:`tuner.server.launcher`, and
  runs the suite over HTTP with :mod:`tuner.bench`. The code path is the same for both.
* :class:`ModelBackend` evaluates the simulator's performance model directly (no process, no HTTP),
  with measurement noise: the search-efficiency benchmark runs thousands of trials through it.

Contract, for every backend: ``measure`` owns every process it starts and leaves none behind, whether
it returns or raises (``KeyboardInterrupt`` included). It calls ``record(measurement)`` exactly once,
*before* the server stops, so the result reaches storage even if stopping hangs. Launch failures and
crashed runs are returned as a :class:`Measurement` with ``failure_class`` set, never raised.

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
from .verify import verify_result
from .killpoints import kill_point

Record = Callable[["Measurement"], None]
#: the failure class of a server that stopped answering or outlived its deadline (tuner.bench.watch)
HUNG = "hung"
Event = Callable[[str, dict], None]


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


class WorkdirUnwritable(RuntimeError):
    """A launch could not write a file it needs under the workdir (a full or read-only disk): the
    server is stopped, the trial queued again, and the worker stops with one line (nothing was
    measured, so nothing is lost, and no setting is blamed for the disk)."""


class Backend(Protocol):
    def measure(self, spec: SpecConfig | None, label: str, record: Record,
                on_event: Event | None = None) -> Measurement: ...


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
                on_event: Event | None = None) -> Measurement:
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
                    m = self._benchmark(proc, spec, trial_dir, started, emit)
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
                   emit: Event) -> Measurement:
        """Run the suite on the ready server within the trial's deadline; verify what it said."""
        from ..bench import (ServerDiedError, ServerHungError, ServerInfoError, ServerUnreachableError,
                             run_suite)

        deadline = self.trial_deadline_s
        left = None if deadline is None else max(1.0, deadline - (time.monotonic() - started))
        bench = self.config.bench
        try:
            result = run_suite(proc.url, self.suite, api=bench.api, stream=bench.stream,
                               on_event=lambda phase, info: emit("phase", {"phase": phase, **info}),
                               deadline_s=left)
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


@dataclass
class ModelFigures:
    """Figures from the performance model, shaped like a SuiteResult for the objectives."""

    single_tok_per_s: float
    tok_per_s: dict[int, float]
    accept_length: float | None = None

    def tok_per_s_at(self, concurrency: int) -> float | None:
        return self.tok_per_s.get(concurrency)


class ModelBackend:
    """The simulator's performance model as a backend: no process, no HTTP, seeded noise.

    ``noise`` is the relative standard deviation applied to every figure, standing in for the
    run-to-run spread of a real measurement.
    """

    def __init__(self, profile: str, suite, noise: float = 0.02, seed: int = 0):
        from ..sim.model import PerfModel, load_profile

        self.model = PerfModel(load_profile(profile))
        self.suite = suite
        self.noise = noise
        self.rng = random.Random(seed)
        self.calls = 0
        self._cache: dict = {}

    def expected(self, spec: SpecConfig | None):
        if spec not in self._cache:
            s = self.suite
            # A dataset suite sends each request at its own length; the closed-form model takes one
            # set of lengths for every prompt: the requests' distinct lengths and their mean.
            lengths = sorted({n for p in s.single_prompts() for n in s.single_lengths(p)})
            sweep_tokens = round(sum(s.sweep_tokens(p) for p in s.prompts) / len(s.prompts))
            self._cache[spec] = self.model.expected_figures(
                spec, prompts=[p.text for p in s.prompts], single_lengths=lengths,
                concurrencies=list(s.sweep.concurrencies), sweep_tokens=sweep_tokens)
        return self._cache[spec]

    def measure(self, spec: SpecConfig | None, label: str, record: Record,
                on_event: Event | None = None) -> Measurement:
        self.calls += 1
        exp = self.expected(spec)
        jitter = lambda v: v * max(0.01, self.rng.gauss(1.0, self.noise))  # noqa: E731
        figs = ModelFigures(jitter(exp.single_tok_per_s), {c: jitter(v) for c, v in exp.tok_per_s.items()},
                            exp.accept_length)
        m = Measurement(figs)
        record(m)
        return m
