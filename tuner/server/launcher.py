"""Start, watch and stop one server per trial, SGLang or the simulator, without leaking anything.

Ownership contract. A :class:`ServerProcess` owns exactly one server process and the process group it
leads (``start_new_session``: the server's own children, e.g. SGLang's scheduler and TP workers, are in
that group, and neither a Ctrl-C at the terminal nor SGLang's ``killpg`` of its own group on a fatal
error reaches the tuner); children that leave that group (``setsid``, a double fork) are found by the
launch's ``TUNER_SERVER_MARK`` and by descent, and stopped with it (:func:`tuner.server.procs.escapees`).
Its owner is whoever created it, who must call :meth:`ServerProcess.stop`
(the ``with`` block does). While it runs, a record file under ``<workdir>/servers/`` lets a later run
find it if this tuner dies (:func:`cleanup_orphans`). :func:`stop_on_signals`
(:mod:`tuner.server.signals`, re-exported here) makes Ctrl-C and SIGTERM stop it before the tuner
exits (a second Ctrl-C while it stops kills its group at once). An SGLang server also holds the
host-wide lock on its GPUs (:mod:`tuner.server.gpu_lock`) from just before its launch
(:meth:`ServerProcess.start` waits, interruptibly, while another tuner holds any of them) until
:meth:`ServerProcess.stop` is done.

Failures are :class:`LaunchError` with a ``failure_class`` from :data:`FAILURE_CLASSES`, a one-line
message quoting the log's error line, and the log's last lines; :func:`classify_log` is the one place
that maps an exit status and a log (or an HTTP error body) to a class. A port taken by someone else
raises :class:`PortInUseError` before anything starts, or when it takes the port while the server
starts (a port the tuner picked is then picked again); one of SGLang's own ports (its nccl_port, the
DP-attention ports) taken at every launch raises its subclass ``ServerPortClashError`` after
:data:`PORT_RELAUNCHES` relaunches; a bad study raises ``ConfigError``.

Why one module of over 400 lines: it is one class, :class:`ServerProcess`, whose start, readiness,
relaunch and stop share one process handle, one record and one re-entrant lock (a signal handler
may stop the server during any other step); split across modules, that state would have to be
passed around or made public.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..config.study import DEFAULT_LOG_MAX_MB, ServerSettings
from ..config.yamlfile import ConfigError
from ..sglang.rules import SpecConfig
from ..sglang.server_args import server_args_table
from .command import (SIM_MODULE, LaunchPlan, build_argv, flags_in, format_command, plan_launch, refused_flags,
                      server_url, study_max_concurrency)
from .failures import (
    FAILURE_CLASSES,
    LOG_TAIL_LINES,
    PHASE_RUNNING,
    PHASE_STARTUP,
    LaunchError,
    classify_log,
    describe_exit,
    error_line,
    failure_region,
    spec_runtime_error,
    tail_lines,
)
from .gpu_lock import GpuLock, GpuLockError, visible_gpus
from .environ import server_environment
from .gpus import (entry_index, gpu_memory_used_mib, indices_unplaced, server_gpu_indices,
                   wait_gpu_memory_released, wait_gpus_free)
from .health import answer_status
from .interpreter import installed_sglang, interpreter_problem
from .logcap import MIB, LogCap
from .orphans import ServerRecord, cleanup_orphans, records_dir
from .ports import (PortInUseError, ServerPortClashError, bind_refused, listener_owned_by_group, own_port_clash,
                    pick_free_port, port_holders, port_taken, reserve_port, wait_port_free)
from .procs import (MARK_VAR, boot_id, die_with_this_thread, escapees, group_members, new_mark, read_cmdline,
                    read_stat, signal_group, terminate_group)
from .signals import live_servers, stop_on_signals

__all__ = [
    "FAILURE_CLASSES", "PHASE_RUNNING", "PHASE_STARTUP", "LaunchError", "LaunchPlan",
    "PortInUseError", "ServerProcess",
    "build_argv", "classify_log", "cleanup_orphans", "format_command", "plan_launch",
    "server_log_path", "stop_on_signals", "study_max_concurrency",
]

log = logging.getLogger("tuner.server")

#: How often a server whose port (picked by the tuner) was taken while it started is launched again.
PORT_RELAUNCHES = 3
#: How long a server whose socket is gone is given to exit before it is said to be still running.
EXIT_WAIT_S = 5.0

# --------------------------------------------------------------------------------------------------
# The server process


_no_lock = contextlib.nullcontext()


def server_log_path(workdir: str | Path, trial: int | None) -> Path:
    """``<workdir>/trials/<N>/server.log``; the baseline (``trial=None``): ``<workdir>/baseline/``."""
    sub = Path("baseline") if trial is None else Path("trials") / str(trial)
    return Path(workdir) / sub / "server.log"


def runs_from_working_folder() -> bool:
    """Whether this tuner's package is the ``tuner/`` of the working folder (a checkout run as
    ``python -m tuner`` there, installed or not), which a child's ``python -m`` finds by that folder.
    False once the working folder is deleted under a run: no package is found by it any more (QA, qa217:
    the next launch ended the run in ``FileNotFoundError`` from ``Path.cwd()``; a child Python starts in
    a deleted folder all the same)."""
    try:
        here = os.getcwd()
    except FileNotFoundError:
        return False
    return Path(__file__).resolve().parents[2] == Path(here).resolve()


class ServerProcess:
    """One server process and its process group, from start to a clean stop.

    Use as a context manager: ``with ServerProcess(server, spec, ...) as srv:`` starts the server, waits
    until it is ready (stopping it again if it never is) and stops it on leaving the block, whatever
    happens inside. Or call :meth:`start`, :meth:`wait_ready` and :meth:`stop` yourself; then the
    caller owns the process and must call :meth:`stop` in a ``finally``.

    Raises: :class:`PortInUseError` from :meth:`start` when the port is taken (nothing launched);
    ``ConfigError`` when the server command cannot run (missing interpreter); :class:`LaunchError`
    from :meth:`wait_ready` (the process exited: class from its log; no answer in time:
    ``startup_timeout``) and from :meth:`check_alive`; :class:`PortInUseError` from :meth:`wait_ready`
    when another process took the port, or answers on it, while the server started (after
    :data:`PORT_RELAUNCHES` relaunches on ports picked anew, for server.port 0).

    :meth:`stop` is idempotent, never raises for a process that is already gone, and may be called
    from a signal handler while another :meth:`stop` is under way (a re-entrant lock; each step is
    safe to repeat).
    """

    def __init__(self, server: ServerSettings, spec: SpecConfig | None, *, workdir: str | Path,
                 trial: int | None = None, trial_dir: str | Path | None = None,
                 fixed_args: Mapping[str, Any] | None = None, algorithm: str = "EAGLE3",
                 max_concurrency: int = 1, port: int | None = None,
                 log_path: str | Path | None = None, attention=None, study: str | None = None):
        """The server of one measurement, as :func:`plan_launch` builds it (``spec=None``: the
        baseline; ``attention``: the study's attention decision, see :mod:`tuner.server.command`). The log goes to ``log_path``, else ``trial_dir/server.log``, else
        :func:`server_log_path` (``trial``; None: the baseline). ``port`` overrides ``server.port``;
        port 0 picks a free port now, and again at :meth:`start` if that one was taken meanwhile.
        Raises ``ConfigError`` for a study that cannot be launched. Nothing starts before
        :meth:`start`. ``study``: the study's name, for the GPU lock's holder line (default: the
        workdir's name)."""
        port = server.port if port is None else port

        def make(p: int) -> LaunchPlan:
            return plan_launch(server, spec, algorithm=algorithm, fixed_args=fixed_args, port=p,
                               max_concurrency=max_concurrency, attention=attention)

        plan = make(pick_free_port(server.host) if port == 0 else port)
        if log_path is None:
            log_path = (Path(trial_dir) / "server.log" if trial_dir is not None
                        else server_log_path(workdir, trial))
        self._setup(plan.argv, host=plan.host, port=plan.port, log_path=log_path, workdir=workdir,
                    env=server.env, startup_timeout_s=server.startup_timeout_s,
                    stop_grace_s=server.stop_grace_s, backend=server.backend, log_max_mb=server.log_max_mb)
        self.plan = plan
        self._replan = make if port == 0 else None
        # SGLang runs its TP ranks on the visible GPUs base_gpu_id (0) up, one apart (gpu_id_step 1;
        # arg_groups/fields/device.py; entrypoints/engine.py: gpu_id = base_gpu_id + tp_rank *
        # gpu_id_step, an index into CUDA_VISIBLE_DEVICES), so the first tp_size are its GPUs unless
        # the study moves or multiplies them (then: every GPU it is shown, or of the node when unset)
        moved = {"base_gpu_id", "gpu_id_step", "pp_size", "dp_size", "nnodes"}
        if not moved & (set(plan.server_args) | flags_in(server.extra_args)):
            self._unset_gpus = [str(i) for i in range(server.tp_size)]
            self._tp_ranks = server.tp_size
        if study:
            self.study = study

    @classmethod
    def from_argv(cls, argv: Sequence[str], *, host: str, port: int, log_path: str | Path,
                  workdir: str | Path, env: Mapping[str, str] | None = None,
                  startup_timeout_s: float = 600.0, stop_grace_s: float = 30.0,
                  backend: str = "sim", log_max_mb: float = DEFAULT_LOG_MAX_MB) -> "ServerProcess":
        """A server from a ready-made command that listens on ``host:port`` (no pins, no plan)."""
        self = cls.__new__(cls)
        self._setup(argv, host=host, port=port, log_path=log_path, workdir=workdir, env=env,
                    startup_timeout_s=startup_timeout_s, stop_grace_s=stop_grace_s, backend=backend,
                    log_max_mb=log_max_mb)
        return self

    def _setup(self, argv, *, host, port, log_path, workdir, env, startup_timeout_s, stop_grace_s,
               backend, log_max_mb) -> None:
        self.argv = list(argv)
        self.host, self.port = host, port
        self.log_path = Path(log_path)
        self.workdir = Path(workdir)
        self.env = dict(env or {})
        self.startup_timeout_s, self.stop_grace_s = startup_timeout_s, stop_grace_s
        self.backend = backend
        self.plan: LaunchPlan | None = None
        self._replan = None
        self.nvidia_smi = "nvidia-smi"
        #: SGLang: the nvidia-smi indices of its GPUs (the first tp_size of its CUDA_VISIBLE_DEVICES), whose
        #: memory its stop waits on (None: every GPU of the node; tuner.server.gpus.server_gpu_indices)
        self.gpu_indices: list[str] | None = None
        self.proc: subprocess.Popen | None = None
        self.record: ServerRecord | None = None
        self.ready = False
        self.started_monotonic: float | None = None
        self._log_offset = 0
        self.log_max_mb = log_max_mb  #: server.log_max_mb: the cap of this launch's part of the log
        self._log_cap: LogCap | None = None  #: its watcher while the server runs (tuner.server.logcap)
        self._stopped = False
        self._stranger_on_port = False  #: the server never bound its port: another process holds it
        self.mark = ""  #: this launch's TUNER_SERVER_MARK, which its descendants inherit (procs.escapees)
        self._lock = threading.RLock()
        self.study = self.workdir.name  #: named in the GPU lock file while this server holds it
        #: SGLang only: the host-wide lock on its GPUs (tuner.server.gpu_lock), held from just before the
        #: launch until stop() is done; how long start() waited for another tuner to let them go
        self.gpu_lock: GpuLock | None = None
        self.gpu_wait_s = 0.0
        self._keep_gpus = False  #: a relaunch on another port keeps the GPUs between its stop and start
        #: the socket holding the server's port from its launch to its stop (ports.reserve_port)
        self._reservation = None
        #: the server's GPUs (nvidia-smi indices) when CUDA_VISIBLE_DEVICES is unset; None: every GPU
        self._unset_gpus: list[str] | None = None
        #: how many of the GPUs it is shown the server runs on (the first ones); None: all of them
        self._tp_ranks: int | None = None
        #: whether CUDA's order may number this server's GPUs otherwise than nvidia-smi (asked once)
        self._order_unknown: bool | None = None

    # -- state --------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return server_url(self.host, self.port)

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    @property
    def pgid(self) -> int | None:
        return self.pid  # the leader of a new session: group id == pid

    @property
    def returncode(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    @property
    def command_line(self) -> str:
        return format_command(self.argv)

    def log_text(self, max_bytes: int = 256_000) -> str:
        """This launch's part of the log (the file may hold earlier launches above it); never a
        half-done trim of the log cap (:mod:`tuner.server.logcap`), whose lock it holds."""
        cap = self._log_cap
        try:
            with cap.lock if cap is not None else _no_lock, open(self.log_path, "rb") as f:
                size = f.seek(0, os.SEEK_END)
                f.seek(max(self._log_offset, size - max_bytes))
                return f.read().decode(errors="replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, n: int = LOG_TAIL_LINES) -> str:
        return tail_lines(self.log_text(), n)

    # -- start --------------------------------------------------------------------------------

    def start(self) -> "ServerProcess":
        """Check that the command's program can run (else ``ConfigError``, nothing taken or written:
        :mod:`tuner.server.interpreter`), take the GPUs (SGLang: :mod:`tuner.server.gpu_lock`, waiting
        while another tuner holds them), check the port, start the server in a new session, write its
        record. Returns self."""
        if self.proc is not None:
            raise RuntimeError("this ServerProcess was already started; make a new one")
        # Before anything is written (the GPU lock, the log): a program that cannot run is one line
        problem = interpreter_problem(self.argv[0], server_environment(self.env, self.host).get("PATH"))
        if problem is not None:
            raise ConfigError("study", "server.python", problem)
        self._take_gpus()
        try:
            return self._start()
        except BaseException:
            if self.proc is None:  # nothing launched: nothing to stop, the port and GPUs go back now
                self._free_reservation()
                self._release_gpus()
            raise

    def _take_gpus(self) -> None:
        """SGLang: take the lock on the server's GPUs, waiting (interruptibly) while another tuner
        holds any of them; the wait is kept in :attr:`gpu_wait_s`, apart from the startup timeout."""
        self.gpu_wait_s = 0.0
        if self.backend != "sglang" or (self.gpu_lock is not None and self.gpu_lock.held):
            return
        visible = visible_gpus(self.env)
        lock = GpuLock(visible, study=self.study, nvidia_smi=self.nvidia_smi,
                       numbered=visible is None or not self._indices_unplaced(visible))
        try:
            self.gpu_wait_s = lock.acquire()
        except GpuLockError as exc:
            raise ConfigError("study", "server.backend", str(exc.strerror or exc)) from None
        self.gpu_lock = lock

    def _free_reservation(self) -> None:
        sock, self._reservation = self._reservation, None
        if sock is not None:
            sock.close()

    def _release_gpus(self) -> None:
        if self.gpu_lock is not None and not self._keep_gpus:
            self.gpu_lock.release()

    def _wait_gpus_free(self) -> list[int] | None:
        """SGLang: wait (interruptibly, up to ``startup_timeout_s``) until the server's GPUs hold no
        other process's memory (at most :data:`tuner.server.gpus.GPU_FREE_MIB` each); returns their
        memory used then (None: nvidia-smi absent), the snapshot the stop compares with. The wait
        is added to :attr:`gpu_wait_s`. The GPU lock keeps other tuners off them; what is left is a server of this
        tuner's still tearing down past its stop's wait (SGLang notes over 30 s on GB300,
        ``wait_port_available`` in ``srt/utils/network.py``) or another user's job: a launch beside it
        would run out of memory, a failure charged to the setting, or run with less memory and
        compute than the baseline had, figures that are not the setting's. Still busy at the deadline:
        ``ConfigError`` naming the GPUs (the run stops; the trial is queued again), nothing launched.
        With a MIG instance among its GPUs nothing is waited for (only the snapshot is taken), nor
        where CUDA's device order makes its GPUs unknown (:func:`tuner.server.gpus.indices_unplaced`:
        the snapshot is every GPU's, which the stop waits back to)."""
        visible = visible_gpus(self.env)
        # Set, only the first tp_size of them (QA: with CUDA_VISIBLE_DEVICES=0,1 and tp_size 1, another
        # user's job on GPU 1 held every launch for startup_timeout_s, then stopped the run)
        self.gpu_indices = (self._unset_gpus if visible is None
                            else server_gpu_indices(visible[:self._tp_ranks], self.nvidia_smi))
        shown = None if visible is None else visible[:self._tp_ranks]
        if self.gpu_indices is not None and self._indices_unplaced(shown):
            # CUDA's default order puts the fastest GPU first: on an A100 (nvidia-smi 0) + H100 (1) node,
            # CUDA_VISIBLE_DEVICES=0 is the H100. Read as nvidia-smi's GPU 0, another user's job on the
            # A100 held every launch for startup_timeout_s, then stopped the run, though the server's
            # GPU was free; and the stop waited on the A100 while the H100's memory was still held
            # (QA, qa187). Which GPUs are the server's cannot be told: every GPU's use now is what
            # the stop waits back to, as for a MIG instance.
            self.gpu_indices = None
            log.info("GPUs %s named by index on a node of different GPU models, CUDA_DEVICE_ORDER not "
                     "PCI_BUS_ID: which GPUs the server gets cannot be told; not waiting for free memory before "
                     "the launch (set server.env.CUDA_DEVICE_ORDER: PCI_BUS_ID)",
                     "0 up (CUDA_VISIBLE_DEVICES unset)" if shown is None else ",".join(shown))
            return gpu_memory_used_mib(self.nvidia_smi, None)
        if visible and any(gpu.startswith("MIG-") for gpu in visible):
            # A MIG instance is a share of a GPU whose other instances are other jobs' (that is what
            # MIG is for), and nvidia-smi's memory.used is the whole GPU's: no level of it says the
            # instance is free (QA: on a node whose other instances held memory, every launch waited
            # out startup_timeout_s, then stopped the run). What they use now is what the stop waits
            # back to, as for any GPU.
            log.info("GPUs %s: a MIG instance in CUDA_VISIBLE_DEVICES; not waiting for free memory before "
                     "the launch (nvidia-smi shows the whole GPU's)", ",".join(visible))
            return gpu_memory_used_mib(self.nvidia_smi, self.gpu_indices)
        started = time.monotonic()

        waited = []

        def say(used: list[int]) -> None:
            waited.append(True)
            log.warning("waiting for GPUs %s to be free before the launch: %s MiB used by another process",
                        self._gpus_named(), used)

        free, used = wait_gpus_free(self.gpu_indices, self.startup_timeout_s, nvidia_smi=self.nvidia_smi,
                                    on_wait=say)
        if waited:  # a look that found them free is no wait (gpu_wait_s stays 0: nobody waited)
            self.gpu_wait_s += time.monotonic() - started
        if free is False:
            raise ConfigError("study", "server.env.CUDA_VISIBLE_DEVICES", (
                f"GPUs {self._gpus_named()} still hold {used} MiB of another process's memory after "
                f"{self.startup_timeout_s:.0f} s (server.startup_timeout_s), before the launch; a server "
                "launched beside it would be measured on less memory and compute than the setting gets "
                "(`nvidia-smi` names the process): free them, or give server.env.CUDA_VISIBLE_DEVICES "
                "GPUs nothing else uses"))
        return used

    def _indices_unplaced(self, entries: Sequence[str] | None) -> bool:
        """:func:`tuner.server.gpus.indices_unplaced` for this server's environment, nvidia-smi asked
        about the node's GPU models once per launcher (the lock and the memory wait both ask)."""
        if self._order_unknown is None:
            self._order_unknown = indices_unplaced(None, self.env, self.nvidia_smi)
        by_index = entries is None or any(entry_index(gpu, None) is not None for gpu in entries)
        return by_index and self._order_unknown

    def _gpus_named(self) -> str:
        return "all" if self.gpu_indices is None else ",".join(self.gpu_indices)

    def _start(self) -> "ServerProcess":
        with self._lock:
            if self.proc is not None:
                raise RuntimeError("this ServerProcess was already started; make a new one")
            # SGLang: its GPUs free of others' memory first; their use then is what the stop waits back to
            gpu_before = self._wait_gpus_free() if self.backend == "sglang" else None
            taken = port_taken(self.host, self.port)  # one bind: in use, or privileged
            if taken is not None:
                if self._replan is None:
                    raise taken
                self.plan = self._replan(pick_free_port(self.host))
                self.argv, self.port = self.plan.argv, self.plan.port
            # Held from here to the stop: no other tuner's pick, no SGLang nccl_port pick and no
            # outgoing connection gets the port while the server loads (tuner.server.ports.reserve_port)
            self._free_reservation()
            self._reservation = reserve_port(self.host, self.port)
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._rotate_log()
            self.mark = new_mark()
            # server.env over the tuner's own; loopback past any HTTP proxy (SGLang's warmup
            # requests itself through `requests`: tuner.server.environ)
            env = {**server_environment(self.env, self.host), MARK_VAR: self.mark}
            if self.argv[1:3] == ["-m", SIM_MODULE] and not runs_from_working_folder():
                # The simulator imports the tuner the tuner itself runs, not a `tuner.py` or `tuner/`
                # in the working folder, which `python -m` puts first on sys.path (QA, qa179: a user's
                # own tuner.py failed every trial with "No module named tuner.sim"). Python 3.11+
                # reads the variable; on 3.10 `tuner doctor` names the shadowing file. A tuner run
                # from a checkout that is the working folder keeps it: that folder is how it is found.
                env.setdefault("PYTHONSAFEPATH", "1")
            with open(self.log_path, "ab") as logf:
                # UTC, said so: the log's own lines (SGLang's) carry no zone, and a local time is
                # ambiguous in the hour a DST change repeats and to a reader in another zone (QA, qa168)
                logf.write(f"# tuner: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())} launch: "
                           f"{self.command_line}\n".encode())
                logf.flush()
                self._log_offset = logf.tell()
                try:
                    # die_with_this_thread: a kill -9 of the tuner takes its server down at once
                    self.proc = subprocess.Popen(self.argv, start_new_session=True,
                                                 stdin=subprocess.DEVNULL, stdout=logf,
                                                 stderr=subprocess.STDOUT, env=env,
                                                 preexec_fn=die_with_this_thread())
                except OSError as exc:
                    raise ConfigError("study", "server.python",
                                      f"cannot run {self.argv[0]!r}: {exc.strerror}") from None
            self.started_monotonic = time.monotonic()
            # Keeps the log under server.log_max_mb from the tuner's side while the server writes
            # it directly (O_APPEND: "ab"), never blocking the server; stopped by stop().
            self._log_cap = LogCap(self.log_path, self._log_offset, self.log_max_mb).start()
            live_servers.add(self)
            self._write_record(gpu_before)
            log.info("started server pid %d on %s: %s", self.proc.pid, self.url, self.command_line)
            return self

    def _rotate_log(self) -> None:
        """A log that already holds ``log_max_mb`` (earlier launches appended to it: ``tuner launch``'s,
        one invocation after another) is moved to ``NAME.1``, replacing an older one, and this launch
        starts the file anew: the file holds at most the cap before this launch's part (itself capped),
        and one older file as much. No cap (0): the file is left to grow. A rotation the disk refuses
        costs no launch: the launch appends, as before, and a warning says why."""
        if self.log_max_mb <= 0:
            return
        older = self.log_path.with_name(self.log_path.name + ".1")
        try:
            if self.log_path.stat().st_size >= self.log_max_mb * MIB:
                os.replace(self.log_path, older)
        except FileNotFoundError:
            pass
        except OSError as exc:
            log.warning("server log %s not moved to %s: %s", self.log_path, older.name, exc.strerror or exc)

    def _write_record(self, gpu_before: list[int] | None) -> None:
        pid = self.proc.pid
        st, me = read_stat(pid), read_stat(os.getpid())
        if st is None or me is None:  # it exited at once, and was reaped: nothing to find later
            return
        self.record = ServerRecord(
            pid=pid, pgid=st.pgid, start_ticks=st.start_ticks, cmdline=read_cmdline(pid) or self.argv,
            boot_id=boot_id(), host=self.host, port=self.port, backend=self.backend,
            log_path=str(self.log_path), stop_grace_s=self.stop_grace_s, started_at=time.time(),
            owner_pid=me.pid, owner_start_ticks=me.start_ticks, gpu_memory_before_mib=gpu_before,
            gpu_indices=self.gpu_indices, mark=self.mark)
        self.record.save(records_dir(self.workdir))

    @property
    def _born_from(self) -> int | None:
        """The leader's start in clock ticks, as its record holds it (None before the record is
        written): no process of this launch started earlier, so the looks for its escapees pass
        over those that did (:func:`tuner.server.procs.escapees`)."""
        record = self.record
        return record.start_ticks if record is not None and record.pid == self.pid else None

    def _record_members(self) -> None:
        """Add the group's processes (SGLang's scheduler, TP workers) to the record, so a later
        run can stop them even if the leader died first."""
        if self.record is None:
            return
        self.record.members = [[st.pid, st.start_ticks] for st in group_members(self.pgid)]
        try:
            self.record.save(records_dir(self.workdir))
        except OSError as exc:
            # A full or read-only workdir must not cost the measurement: the record written at
            # start already names the process group and the mark every process of the server
            # carries, which is what a later cleanup stops (orphans.cleanup_orphans). Said as what it
            # means for the user (QA, qa222: a bare "record not updated with the group's members").
            log.warning("server pid %d: its record in %s could not be updated with its processes (%s); "
                        "nothing is lost: it is stopped as usual, and if this tuner dies first the next "
                        "run still stops it by the record written at its launch", self.pid,
                        records_dir(self.workdir), exc.strerror or exc)

    # -- ready --------------------------------------------------------------------------------

    def wait_ready(self, timeout_s: float | None = None) -> str:
        """Poll ``/health_generate`` (``/health`` when the server has no such route) until it answers
        200; returns the base URL. Raises :class:`LaunchError` at once when the process exits, and
        ``startup_timeout`` at the deadline (``startup_timeout_s``). Does not stop the process."""
        if self.proc is None:
            raise RuntimeError("start() the server first")
        timeout_s = self.startup_timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + timeout_s
        path, pause = "/health_generate", 0.1
        relaunches = 0
        while True:
            if self.proc.poll() is not None:
                text = self.log_text()  # read once: the port checks and the failure all judge this text
                ours = self._port_taken(text)
                # SGLang's own ports (its nccl_port, picked anew at each launch; the DP-attention
                # ports it derives from --port), taken by another process: not the setting's failure
                # either (server_args.py PortArgs.init_new; the TCPStore on nccl_port).
                clash = None if ours else own_port_clash(failure_region(text))
                if not ours and clash is None:
                    self._check_flags_taken(text)
                    raise self.failure(PHASE_STARTUP, log_text=text)
                # Another process bound the port between the tuner's check and the server's bind
                # (during a model load, minutes on SGLang): not the setting's failure. A port the
                # tuner picked (server.port 0) is picked again; a fixed one stops the run. A clash on
                # one of SGLang's own ports is launched again (on a port picked anew, for port 0).
                if (ours and self._replan is None) or relaunches >= PORT_RELAUNCHES:
                    self._stop_now()
                    if clash is not None:
                        raise ServerPortClashError(self.host, clash[1], clash[0], relaunches + 1,
                                                   str(self.log_path))
                    raise PortInUseError(self.host, self.port, "it took the port while the server started: "
                                         f"address already in use, log: {self.log_path}")
                relaunches += 1
                self._relaunch_on_another_port(clash[0] if clash else None)
                deadline = time.monotonic() + timeout_s
                path, pause = "/health_generate", 0.1
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self.failure(PHASE_STARTUP, f"not ready after {timeout_s:.0f} s "
                                   f"(server.startup_timeout_s)")
            # bounded in all: connect, headers and body (a drip restarts no timeout: health.py)
            # ...and given up once the server exits (a stranger on its port may never answer)
            status = answer_status(self.url + path, max(0.5, min(10.0, remaining)),
                                   gone=lambda: self.proc.poll() is not None)
            if status == 200:
                if listener_owned_by_group(self.port, self.pgid, root=self.pid, mark=self.mark or None,
                                           born_from=self._born_from) is not False:
                    break
                if self._exited_within(EXIT_WAIT_S) and not self._port_taken():
                    # It answered, then exited (its socket went with it): not a stranger on its port.
                    self.ready = True
                    raise self.failure(PHASE_RUNNING)
                # Another process listens on the port and answers while this server still loads (it
                # took the port after the tuner's check: another tuner's or user's SGLang on the same
                # --port): not the setting's failure, as when it takes the port first and this
                # server cannot bind. A port the tuner picked is picked again; a fixed one stops the run.
                if self._replan is None or relaunches >= PORT_RELAUNCHES:
                    self._stop_now()
                    raise PortInUseError(self.host, self.port, "another process answers on it while the server "
                                         f"the tuner started (pid {self.pid}) loaded, log: {self.log_path}")
                relaunches += 1
                self._relaunch_on_another_port(answered=True)
                deadline = time.monotonic() + timeout_s
                path, pause = "/health_generate", 0.1
                continue
            if status == 404 and path == "/health_generate":
                path = "/health"
                continue
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 1.5, 1.0)
        self.ready = True
        self._record_members()
        log.info("server pid %d ready on %s after %.1f s", self.pid, self.url,
                 time.monotonic() - self.started_monotonic)
        return self.url

    def _check_flags_taken(self, log_text: str) -> None:
        """Raise ``ConfigError`` when the SGLang server, exited with argparse's status 2, has no flag the
        command passes (``unrecognized arguments``, ``ambiguous option``: another release's parser, the
        flag renamed, dropped or not there yet): no setting launches on it, whatever its values, and
        the next trial would fail alike. QA (qa187): a node whose SGLang no longer took
        ``--speculative-eagle-topk`` failed every trial as ``invalid_args``, each charged to its
        setting, until the budget was spent; the line named neither the installed release nor a fix."""
        if self.backend != "sglang" or self.returncode != 2:
            return  # the simulator's parser is SGLang 0.5.23's table, which the tuner writes for
        refused = refused_flags(log_text, self.argv, self.plan)
        if refused is None:
            return
        python = self.argv[0]
        version = installed_sglang(python, server_environment(self.env, self.host))
        runs = f"{python} runs {'sglang ' + version if version else 'an SGLang of unknown version'}, which"
        flags = ", ".join(refused.flags)
        if refused.pins and len(refused.pins) == len(refused.flags):
            # as `tuner doctor` says it (tuner.engine.doctor): setting it leaves the pin out
            fix = (f"the tuner pins {', '.join(refused.pins)} for every launch: set it yourself in "
                   "server.extra_args as this release spells it, and the pin is left out")
        elif refused.from_tuner:
            fix = (f"the tuner writes SGLang {server_args_table().sglang_version}'s flags: set server.python to an "
                   "interpreter that has it (`tuner doctor STUDY.yaml` runs that SGLang's parser on every "
                   "command line first)")
        else:
            fix = (f"take {flags} out of {refused.key}, or write it as this SGLang names it "
                   "(python -m sglang.launch_server --help)")
        raise ConfigError("study", refused.key, f"{runs} refuses {flags} at every launch, whatever the setting "
                          f"({refused.line}): {fix}; log: {self.log_path}")

    def _port_taken(self, log_text: str | None = None) -> bool:
        """Whether the server, exited while starting, could not bind its port: another holds it.
        ``log_text``: its log as already read (:meth:`log_text`), else read here."""
        return bind_refused(self.log_text() if log_text is None else log_text, self.host, self.port)

    def _stop_now(self) -> None:
        """Stop a server that never bound its port: no wait for the port, which a stranger holds."""
        self._stranger_on_port = True
        self.stop()

    def _relaunch_on_another_port(self, clash: str | None = None, answered: bool = False) -> None:
        """The server exited because its port was taken: launch it again on a port picked now.
        ``clash``: it was one of SGLang's own ports (named so): the same port again where it is fixed.
        ``answered``: another process answered on the port while the server loaded (said so, not as
        "address already in use": QA qa110)."""
        old = self.port
        self._keep_gpus = True  # the same server, launched again: no other tuner gets its GPUs between
        try:
            self._stop_now()
        finally:
            self._keep_gpus = False
        with self._lock:
            self.proc, self.record, self.ready, self._stopped = None, None, False, False
            self._stranger_on_port = False
            if self._replan is not None:
                self.plan = self._replan(pick_free_port(self.host))
                self.argv, self.port = self.plan.argv, self.plan.port
        if clash is not None:
            log.warning("SGLang's %s was taken by another process while the server started (address already in "
                        "use); launching it again on port %d", clash, self.port)
        else:
            how = "another process answers on it" if answered else "address already in use"
            log.warning("port %d was taken by another process while the server started (%s); "
                        "launching it again on port %d", old, how, self.port)
        self.start()

    # -- failures -----------------------------------------------------------------------------

    def failure(self, phase: str | None = None, detail: str | None = None,
                response_text: str = "", log_text: str | None = None) -> LaunchError:
        """The :class:`LaunchError` for this server's present state, classified from its exit status,
        its log and ``response_text`` (an HTTP error body, if any). The log is read once (or given as
        ``log_text``, read by the caller for the same judgement): its class, its error line and its
        tail are of the same text."""
        phase = phase or (PHASE_RUNNING if self.ready else PHASE_STARTUP)
        code = self.returncode
        text = self.log_text() if log_text is None else log_text
        cls = classify_log(text + "\n" + response_text, code, phase)
        when = "before it was ready" if phase == PHASE_STARTUP else "after it was ready"
        if detail:
            what = detail
        elif code is not None:
            what = f"server {describe_exit(code)} {when}"
        elif phase == PHASE_STARTUP:
            what = "server still starting"
        elif cls == "other":
            what = "server still running, no known failure in its log"
        else:
            what = "server running but failing requests"
        quoted = error_line(response_text if spec_runtime_error(response_text) else text)
        return LaunchError(cls, f"{what}: {quoted} (log: {self.log_path})", tail_lines(text), code)

    def check_alive(self) -> None:
        """Raise :class:`LaunchError` (``crash_after_ready``, or a more specific class from the log)
        when the server process has exited; return None while it runs."""
        if self.proc is None:
            raise RuntimeError("start() the server first")
        if self.proc.poll() is not None:
            raise self.failure()

    def _exited_within(self, seconds: float) -> bool:
        """Whether the server process has exited, waiting up to ``seconds`` for it."""
        try:
            self.proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    def classify_exit(self, response_text: str = "", exit_wait_s: float = 0.0) -> tuple[str, str, str]:
        """``(failure_class, message, log_tail)`` for a failed benchmark, for the study engine.
        ``exit_wait_s``: the server is gone (its port refuses connections): wait up to that long
        for its process to exit, so its exit status is read (SGLang's winds down for seconds after
        its socket closed), rather than calling it "still running".

        Reads the exit status (``crash_after_ready`` once it was ready), the log, and
        ``response_text`` (an HTTP 500 body: ``spec_runtime`` for SGLang's "selected index k out of
        range"). A server still running with no sign of a known failure gives ``other``; use
        :meth:`failure` for the :class:`LaunchError` itself.
        """
        if self.proc is None:
            raise RuntimeError("start() the server first")
        if exit_wait_s > 0:
            self._exited_within(exit_wait_s)
        err = self.failure(response_text=response_text)
        return err.failure_class, err.message, err.log_tail

    # -- stop ---------------------------------------------------------------------------------

    def stop(self) -> None:
        """SIGTERM the whole group, wait ``stop_grace_s``, SIGKILL, reap; wait until the port is
        free; on SGLang wait until nvidia-smi shows the GPU memory released; remove the record.
        Children that left the group (``setsid``, a double fork) are stopped with it: those carrying
        this launch's mark or descended from the server (:func:`tuner.server.procs.escapees`).

        Idempotent and safe from a signal handler. The record is kept only if the group would not
        die, so a later :func:`cleanup_orphans` can retry.
        """
        with self._lock:
            if self.proc is None or self._stopped:
                return
            clean = terminate_group(self.proc.pid, self.stop_grace_s, leader=self.proc, mark=self.mark,
                                    born_from=self._born_from)
            if self._stopped:  # a signal handler finished the stop while we waited
                return
            code = self.proc.poll()
            cap = self._log_cap
            if cap is not None:
                cap.stop()  # no trim under way while the last line is appended
            try:
                with open(self.log_path, "ab") as f:
                    f.write(f"# tuner: stopped, {describe_exit(code)}\n".encode())
            except OSError:
                pass
            if cap is not None:
                cap.check()  # the file the artifact store copies holds at most the cap
            if self._stranger_on_port:
                pass  # the port was never ours: nothing of ours to wait for
            elif not wait_port_free(self.host, self.port, max(5.0, self.stop_grace_s)):
                # Its group and every escapee found are gone (clean), yet the port is held: a process that left
                # both the group and the launch's environment (procs.escapees cannot find it), or a
                # stranger that took the port since. Named, so the user can stop it: the tuner stops
                # nothing it cannot tell is the server's (QA qa151: the line named nobody, and the
                # server's helper that scrubbed its environment kept the port after the run).
                holders = port_holders(self.port) if clean else ""  # else: its own unkillable process
                if holders:
                    log.warning("port %d still busy after the server stopped: %s listens on it, outside the "
                                "server's process group and without its %s, so the tuner leaves it running; "
                                "stop it yourself if it is the server's (a helper that left its session and "
                                "environment)", self.port, holders, MARK_VAR)
                else:
                    log.warning("port %d still busy after the server stopped", self.port)
            if self.backend == "sglang":
                before = self.record.gpu_memory_before_mib if self.record else None
                wait_gpu_memory_released(before, max(30.0, self.stop_grace_s),
                                         nvidia_smi=self.nvidia_smi, only=self.gpu_indices)
            if clean and self.record is not None:
                self.record.remove()
            self._stopped = True
            self._release_gpus()  # its group is gone (one that would not die keeps its record, above)
            self._free_reservation()
            live_servers.discard(self)
            log.info("stopped server pid %d (%s)", self.proc.pid, describe_exit(code))

    def kill(self) -> None:
        """SIGKILL the whole group and its escapees (this launch's mark, the server's descendants)
        now, without waiting or taking the lock (safe from a signal handler while :meth:`stop` is
        under way, which then finds them gone)."""
        if self.proc is not None and not self._stopped:
            fled = escapees(self.proc.pid, root=self.proc.pid if self.proc.returncode is None else None,
                            mark=self.mark or None, born_from=self._born_from)
            signal_group(self.proc.pid, signal.SIGKILL)
            for st in fled:
                try:
                    os.kill(st.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def __enter__(self) -> "ServerProcess":
        self.start()
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
