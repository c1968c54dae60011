"""Progress of ``tuner study run``: a live panel on a terminal, plain log lines anywhere else.

:class:`RunView` receives the study engine's events (``on_event(kind, info)``, see
:mod:`tuner.engine`). On a terminal it keeps a rich live panel -- trial and setting, phase (launching,
warming up, single requests, sweep at C=..., stopping), elapsed time and ETA, best so far -- and
prints the same one-line log entries above it. When stdout is not a terminal (CI, ``nohup``, a log
file) it prints only the log lines, one per trial event, and never a control character.

On Ctrl-C (or SIGTERM) :meth:`RunView.on_signal`, the callback of
:func:`tuner.server.launcher.stop_on_signals`, freezes the panel where it stood and prints what
happens next ("stopping the server ...; Ctrl-C again to kill it"); a second Ctrl-C prints that the
server's group is being killed.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Sequence

import click

from ..engine.finish import SET_ASIDE, UNREADABLE
from ..engine.journal import SET_ASIDE_DIR
from .streams import devnull_at


def _fmt_s(s: float | None) -> str:
    if s is None:
        return "?"
    s = int(s)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


#: what each phase of a measurement means for a person (tuner.engine.backends, then tuner.bench's own phases)
PHASES = {
    "launching": "launching the server", "benchmark": "server ready, starting the suite",
    "server_info": "reading /server_info", "warmup": "warming up",
    "single": "single requests ({prompt}, {max_tokens} tokens)", "sweep": "sweep at C={concurrency}",
    "flush": "flushing the cache", "done": "suite done", "died": "the server died",
    "recording": "recording the results", "stopping": "stopping the server",
    "stage": "stage {stage}", "pruned": "decided after {stage}: stopping (trial {by} dominates it)",
}


def phase_text(info: dict) -> str | None:
    """What a ``phase`` event means for a person (None: not worth showing)."""
    text = PHASES.get(info.get("phase"))
    if text is None:
        return None
    try:
        return text.format(**info)
    except (KeyError, IndexError):
        return text.split(" (")[0].split(" at ")[0]


#: What happens to the trial under way when a signal stops the run: queued again for the next run
#: (:func:`tuner.engine.trial.TrialRunner` fails it as interrupted, or the next worker reaps it); or,
#: when its measurement was being recorded while the storage was away, kept in the local journal,
#: which the next run on this host replays into the storage (:func:`tuner.engine.finish.replay_journal`).
#: Said at the signal, before the cleanup has met the storage: whether it answers decides whether the
#: trial is queued now or left RUNNING for the next run's reaper (tuner.engine.trial, ``unreachable_now``;
#: tuner/cli/study.py's last line says which). A storage frozen under a call has said nothing yet, so
#: "queued" names both ends; "left" is for a storage already said away (QA, qa158: "A running trial is
#: queued again.", then the last line said the trial was left for the next run).
TRIAL_FATE = {"queued": " A running trial is queued again (if the storage does not answer, by the next "
                        "tuner study run).",
              "left": " The storage does not answer: a running trial is left for the next tuner study run, "
                      "which fails it and queues its setting again.",
              "repeat": " The repeat under way is stored as failed; the rounds measured so far are kept.",
              "journaled": " The measurement is kept in the journal: the next tuner study run on this host "
                           "stores it."}


def interrupt_text(kind: str, info: dict, fate: str | None = "queued") -> str:
    """What a person reads the moment a signal arrives (``kind``: ``stopping`` or ``killing``).
    ``fate``: what becomes of the trial under way, a key of :data:`TRIAL_FATE` (None: no trial,
    nothing said)."""
    sig = "Ctrl-C" if info.get("signal") == "SIGINT" else info.get("signal", "signal")
    servers = info.get("servers") or []
    pids = ", ".join(str(s["pid"]) for s in servers)
    if kind == "killing":
        return f"{sig} again: killing the server's process group (pid {pids}) with SIGKILL now"
    if not servers:
        return f"{sig}: stopping (no server is running)"
    grace = max(s["grace_s"] for s in servers)
    again = "Ctrl-C" if sig == "Ctrl-C" else f"{sig} or Ctrl-C"
    return (f"{sig}: stopping the server (pid {pids}: SIGTERM, SIGKILL after {grace:g} s); press {again} "
            f"again to kill it now." + (TRIAL_FATE[fate] if fate else ""))


def storage_line(kind: str, info: dict) -> str:
    """The line for a storage outage event (``storage_down``, ``storage_back``): what
    :class:`tuner.engine.patience.PatientRDBStorage` and ``open_patiently`` report."""
    if kind == "storage_down":
        # a database that answers and refuses writes (PostgreSQL's read-only refusal) is no silence
        state = "refuses writes" if info.get("refuses_writes") else "does not answer"
        return (f"storage {info['storage']} {state} ({info['error']}); retrying for up to "
                f"{_fmt_s(info['patience_s'])} (TUNER_STORAGE_PATIENCE_S)")
    return f"storage {info['storage']} answers again after {info['after_s']:.1f} s"


def say_storage_outage(kind: str, info: dict) -> None:
    """``on_outage`` for the storage opened before the run's progress view exists: a line on stderr."""
    click.echo(storage_line(kind, info), err=True)


def _trial_name(study: str, number: int) -> str:
    """``trial 7``, ``baseline`` or ``confirmation 3``, from an Optuna study's name and a trial number."""
    if study.endswith(".baseline"):
        return "baseline"
    return f"confirmation {number}" if study.endswith(".confirm") else f"trial {number}"


def _to_devnull(stream) -> None:
    """Point ``stream``'s file descriptor at /dev/null (a closed pipe's writes then go nowhere)."""
    try:
        devnull_at(stream.fileno())
    except (OSError, ValueError, AttributeError):  # a stream with no file behind it: nothing to redirect
        pass


def stdout_lost(exc: OSError) -> None:
    """What a run does when its stdout cannot be written: it goes on without printing progress, said
    once on stderr; stdout is pointed at /dev/null from here on (Python would report a closed pipe
    again at exit, and every later line would fail again). Stderr that fails too (the same pipe,
    `2>&1 | head`; the same dead terminal) goes to /dev/null, and the run goes on all the same (QA:
    that error ended the run, exit 1). QA (qa172): only a closed pipe was ridden out; a full disk
    under `> run.log` or a terminal gone under `& disown` (EIO) stopped the night's run at its next
    progress line, and one before the first (`study run | true`) before anything ran."""
    _to_devnull(sys.stdout)
    why = "was closed" if isinstance(exc, BrokenPipeError) else f"cannot be written ({exc.strerror or exc})"
    try:
        click.echo(f"progress: stdout {why}; the run goes on without printing progress (`tuner study status` "
                   "shows it)", err=True)
    except OSError:
        _to_devnull(sys.stderr)


def say_going_on(text: str) -> None:
    """``click.echo(text)`` for a run's lines before its progress view (the study created, its budget
    extended): a stdout that cannot be written does not stop the run (:func:`stdout_lost`)."""
    try:
        click.echo(text)
    except OSError as exc:
        stdout_lost(exc)


def _stdout_is_terminal() -> bool:
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


class RunView:
    """Receives the study engine's events and shows them (see the module docstring).

    ``console``: a rich console (default: stdout); ``live``: force the live panel on or off (default:
    on when the console is a terminal); ``objectives``: names for the best-so-far line; ``fate``: what
    the notice on a signal says of the measurement under way, a key of :data:`TRIAL_FATE` (``queued``
    for a study's trial, ``repeat`` for a confirmation's).
    """

    def __init__(self, console=None, *, live: bool | None = None, objectives: Sequence[str] | None = None,
                 fate: str = "queued"):
        self.started = time.monotonic()
        self.fate = fate
        self.stdout_closed = False  #: a closed pipe: progress is no longer printed (see line)
        self.console = console
        if live is None:
            live = console.is_terminal if console is not None else _stdout_is_terminal()
        self.objectives = list(objectives or [])
        # Re-entrant: on_signal may run in the main thread while it is inside event().
        self._lock = threading.RLock()
        # Held while a line is printed and while the notice thread stops the panel and prints its
        # notice: a line printed through the live console at that moment would redraw the frozen
        # panel under the notice. The signal handler itself never takes it (the notice thread does).
        self._print_lock = threading.RLock()
        self._live = None
        self.frozen_at: float | None = None  #: when a signal froze the panel
        self._notices: list[threading.Thread] = []
        self.trial: str | None = None
        self.phase: str | None = None
        self.storage_down = False  #: between a storage_down and its storage_back event
        self.step: tuple[int, int] | None = None
        self.measured, self.n_trials = 0, None
        self.eta_s, self.eta_at = None, None
        self.best: dict[int, tuple[float, int]] = {}  #: objective index -> (value, trial)
        self.last: str | None = None
        if live:
            from rich.console import Console
            from rich.live import Live

            self.console = console or Console()
            self._live = Live(console=self.console, get_renderable=self.render, refresh_per_second=4,
                              transient=False, redirect_stdout=False, redirect_stderr=False)
            self._live.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def is_live(self) -> bool:
        return self._live is not None

    def close(self) -> None:
        """Stop the live panel (idempotent; its last frame stays on screen); later events print
        plain lines. Waits until an interrupt notice is printed, so it comes first."""
        for t in list(self._notices):
            if t is not threading.current_thread():
                t.join(timeout=5)
        live, self._live = self._live, None
        if live is not None:
            live.stop()

    def on_signal(self, kind: str, info: dict) -> None:
        """:func:`tuner.server.launcher.stop_on_signals`' callback; runs inside the signal handler.

        Freezes the panel at once (its clock and phase stop moving) and prints :func:`interrupt_text`
        from a thread: the handler must not wait for a lock the interrupted code may hold (rich's
        live display, the console)."""
        if kind == "stopping" and self.frozen_at is None:
            self.frozen_at = time.monotonic()
        # Recording while the storage is away: the measurement was journaled before the storage was
        # tried (tuner.engine.finish.record_finish), so it is kept, not measured again.
        fate = self.fate
        if self.storage_down and self.phase == PHASES["recording"]:
            fate = "journaled"
        elif self.storage_down and fate == "queued":  # the cleanup will not wait for it (unreachable_now)
            fate = "left"
        t = threading.Thread(target=self._notice, args=(kind, interrupt_text(kind, info, fate)), daemon=True,
                             name="interrupt-notice")
        self._notices.append(t)
        t.start()

    def _notice(self, kind: str, text: str) -> None:
        with self._print_lock:
            if kind == "stopping":
                live, self._live = self._live, None
                if live is not None:
                    live.stop()  # the frozen frame stays on screen; the notice goes under it
            self.line(text)

    def line(self, text: str) -> None:
        """Print one progress line. A closed stdout (``tuner study run ... | head``) does not stop
        the night's run: progress is no longer printed, said once on stderr, and the run goes on.
        The text is printed as :func:`tuner.config.names.shown` gives it: a trial's failure or warning
        quoting a dataset's request name, or a server's message, cannot drive the terminal."""
        from ..config.names import shown

        text = shown(f"[{_fmt_s(time.monotonic() - self.started)}] {text}")
        with self._print_lock:
            if self.stdout_closed:
                return
            try:
                if self._live is not None:
                    self._live.console.print(text, markup=False, highlight=False, soft_wrap=True)
                elif self.console is not None:
                    self.console.print(text, markup=False, highlight=False, soft_wrap=True)
                else:
                    click.echo(text)
            except OSError as exc:  # a closed pipe, a full disk, a terminal gone (EIO)
                self.stdout_closed = True
                stdout_lost(exc)

    # -- events ------------------------------------------------------------------------------------
    def event(self, kind: str, info: dict) -> None:
        if self.frozen_at is None:  # after a signal the panel shows the moment it arrived
            with self._lock:
                self._update(kind, info)
        self._log(kind, info)

    def _update(self, kind: str, info: dict) -> None:
        if kind == "trial_start":
            self.trial = "baseline (autoregressive)" if info["trial"] == "baseline" else \
                f"trial {info['trial']}: {info['spec']}"
            self.phase, self.step = "launching the server", None
        elif kind == "phase":
            text = phase_text(info)
            if text:
                self.phase = text
            if info.get("total_steps"):
                self.step = (int(info.get("step") or 0), int(info["total_steps"]))
        elif kind == "trial_done":
            self.phase, self.step = None, None
            if info.get("status") == "measured" and info.get("values"):
                for i, v in enumerate(info["values"]):
                    if i not in self.best or v > self.best[i][0]:
                        self.best[i] = (v, info["trial"])
        elif kind == "progress":
            self.measured, self.n_trials = info["measured"], info.get("n_trials")
            self.eta_s, self.eta_at = info.get("eta_s"), time.monotonic()
        elif kind == "finished":
            self.trial, self.phase, self.step = None, "finished", None
        elif kind in ("storage_down", "storage_back"):
            self.storage_down = kind == "storage_down"

    def _log(self, kind: str, info: dict) -> None:
        if kind == "trial_start":
            what = "baseline (autoregressive)" if info["trial"] == "baseline" else f"trial {info['trial']}: {info['spec']}"
            self.line(f"{what}: launching")
        elif kind == "trial_done":
            vals = info.get("values")
            result = ", ".join(f"{v:.3f}" for v in vals) if vals and info["status"] == "measured" else info.get("failure_class")
            if info["status"] == "pruned":
                result = f"after {info.get('pruned_at')}; trial {info.get('pruned_by')} dominates it"
            text = f"trial {info['trial']}: {info['status']} ({result})"
            if self.frozen_at is None:
                self.last = text
            self.line(text)
        elif kind == "trial_skip":
            self.line(f"trial {info['trial']}: {info['spec']} skipped, {info['why']}")
        elif kind == "baseline" and info.get("reused"):
            self.line("baseline: already measured, reused")
        elif kind == "progress":
            modelled = info.get("model_elapsed_s")
            gpu = f", modelled GPU time {_fmt_s(modelled)}" if modelled is not None else ""
            self.line(f"{info['measured']} launched this run; elapsed {_fmt_s(info['elapsed_s'])}{gpu}, "
                      f"ETA {_fmt_s(info.get('eta_s'))}")
        elif kind == "waiting":
            self.line(f"waiting for {info['for']}")
        elif kind == "deadline" and info.get("seconds"):
            self.line(f"each trial may take up to {_fmt_s(info['seconds'])} ({info['why']}); a server "
                      "that stops answering fails its trial as hung")
        elif kind == "reaped":
            self.line(f"trials {info['trials']} were left running by a dead worker: failed and queued again")
        elif kind == "replayed":
            aside = [(s, n) for s, n, how in info["trials"] if how == SET_ASIDE]
            damaged = [(s, n) for s, n, how in info["trials"] if how == UNREADABLE]
            done = ", ".join(f"{_trial_name(s, n)} ({how})" for s, n, how in info["trials"]
                             if how not in (SET_ASIDE, UNREADABLE))
            if damaged:
                self.line(f"warning: journal entries that cannot be read (damaged since they were written) set "
                          f"aside in journal/{SET_ASIDE_DIR}/, their measurements lost: "
                          f"{', '.join(_trial_name(s, n) for s, n in damaged)} (the trial is measured again "
                          "if the budget reaches its setting)")
            if done:
                self.line(f"replayed from the journal into the storage: {done}")
            if aside:
                self.line(f"journal entries of an earlier study of this name (deleted since) set aside in "
                          f"journal/{SET_ASIDE_DIR}/, not stored: {', '.join(_trial_name(s, n) for s, n in aside)}")
        elif kind == "storage_down":
            self.line(storage_line(kind, info) + "; a finished measurement waits in the journal")
        elif kind == "storage_back":
            self.line(storage_line(kind, info))
        elif kind == "warning":
            who = info.get("trial")
            who = f"trial {who}: " if isinstance(who, int) else (f"{who}: " if who else "")
            self.line(f"warning: {who}{info['message']}")
        # phase events: the live panel shows them; plain output stays one line per trial event

    # -- the live panel ----------------------------------------------------------------------------
    def _now(self) -> float:
        return self.frozen_at if self.frozen_at is not None else time.monotonic()

    def eta_now(self) -> float | None:
        if self.eta_s is None or self.eta_at is None:
            return None
        return max(0.0, self.eta_s - (self._now() - self.eta_at))

    def best_text(self) -> str:
        if not self.best:
            return "none measured yet"
        names = self.objectives or [f"objective {i + 1}" for i in range(max(self.best) + 1)]
        return " | ".join(f"{names[i] if i < len(names) else i}: {v:.3f} (trial {t})"
                          for i, (v, t) in sorted(self.best.items()))

    def render(self):
        from rich.table import Table
        from rich.text import Text

        with self._lock:
            grid = Table.grid(padding=(0, 2))
            grid.add_column(style="bold")
            grid.add_column()
            grid.add_row("now", Text(self.trial or "between trials"))
            phase = self.phase or "-"
            if self.step:
                phase += f"  [step {self.step[0]}/{self.step[1]}]"
            grid.add_row("phase", Text(phase))
            done = f"{self.measured}" + (f" of {self.n_trials}" if self.n_trials else "")
            grid.add_row("launched", Text(f"{done} this run"))
            grid.add_row("elapsed", Text(f"{_fmt_s(self._now() - self.started)}   ETA {_fmt_s(self.eta_now())}"))
            grid.add_row("best so far", Text(self.best_text()))
            if self.last:
                grid.add_row("last", Text(self.last))
        from rich.panel import Panel

        title = "tuner study run" + (" (interrupted)" if self.frozen_at is not None else "")
        return Panel(grid, title=title, expand=False)
