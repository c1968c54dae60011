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
crashed runs are returned as a :class:`Measurement` with ``failure_class`` set, never raised. A
backend writes no result file itself: the suite's JSON (``to_save``, for ``result_path``) is
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
from .killpoints import kill_point

Record = Callable[["Measurement"], None]
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

    def __init__(self, config: StudyConfig, fixed_args: dict, suite, algorithm: str = "EAGLE3"):
        from ..server.command import study_max_concurrency

        self.config = config
        self.fixed_args = dict(fixed_args)
        self.suite = suite
        self.algorithm = algorithm
        self.server = config.server.model_copy(update={"python": config.server.python or sys.executable})
        self.max_concurrency = max(study_max_concurrency(config), max(suite.sweep.concurrencies, default=1))
        self.workdir = Path(config.workdir or Path("studies") / config.name)

    def command(self, spec: SpecConfig | None, port: int | None = None) -> list[str]:
        """The exact argv a measurement of ``spec`` would launch (for dry runs)."""
        from ..server.command import build_argv

        return build_argv(self.server, spec, algorithm=self.algorithm, fixed_args=self.fixed_args,
                          port=self.server.port if port is None else port, max_concurrency=self.max_concurrency)

    def cleanup_orphans(self) -> list[int]:
        """Stop servers a dead tuner on this host left running; their pids."""
        from ..server.orphans import cleanup_orphans

        return [rec.pid for rec in cleanup_orphans(self.workdir)]

    def measure(self, spec: SpecConfig | None, label: str, record: Record,
                on_event: Event | None = None) -> Measurement:
        from ..bench import ServerDiedError, run_suite
        from ..server.launcher import LaunchError, ServerProcess, stop_on_signals

        emit = on_event or _noop
        started = time.monotonic()
        trial_dir = self.workdir / label
        proc = ServerProcess(self.server, spec, workdir=self.workdir, trial_dir=trial_dir,
                             fixed_args=self.fixed_args, algorithm=self.algorithm,
                             max_concurrency=self.max_concurrency)
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
                    try:
                        result = run_suite(proc.url, self.suite, api=self.config.bench.api,
                                           stream=self.config.bench.stream,
                                           on_event=lambda phase, info: emit("phase", {"phase": phase, **info}))
                        m = self._from_result(result, proc, trial_dir, started)
                    except ServerDiedError as exc:
                        cls, msg, tail = proc.classify_exit()
                        m = self._failed(cls, msg, tail, proc, started, exc.partial, trial_dir)
                    if m.failure_class is None and _failed_requests(m.figures):
                        # Errors inside an otherwise complete run: SGLang's speculative runtime
                        # failures ("selected index k out of range") answer HTTP 500 and live on.
                        cls, msg, tail = proc.classify_exit(_first_error(m.figures))
                        m.failure_class = cls if cls != "other" else "request_errors"
                        m.failure_message = msg
                        m.log_tail = tail
                emit("phase", {"phase": "recording", "label": label})
                record(m)
                emit("phase", {"phase": "stopping", "label": label})
        finally:
            proc.stop()
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

    def _failed(self, cls, message, tail, proc, started, partial=None, trial_dir: Path | None = None) -> Measurement:
        path = trial_dir / "suite.partial.json" if partial is not None and trial_dir is not None else None
        return Measurement(None, failure_class=cls, failure_message=message, log_tail=tail,
                           log_path=str(proc.log_path), result_path=str(path) if path else None,
                           to_save=partial if path else None,
                           duration_s=time.monotonic() - started, command=list(proc.argv))


def _failed_requests(result) -> int:
    return int(getattr(result, "n_failed", 0) or 0)


def _first_error(result) -> str:
    for r in getattr(result, "records", []) or []:
        err = getattr(r, "error", None)
        if err:
            return str(err)
    return ""


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
