"""The ``tuner`` command line. Each command group lives in its own module and does four things:
collect options, build one validated config object, call one library function, print.

Bad input (:class:`tuner.config.yamlfile.ConfigError`) prints one line naming file and key, exits 2.

The top layer: may import every other layer; nothing imports it.
"""

from __future__ import annotations

import errno
import os
import sys

import click

from .. import __version__
from ..bench.open_files import raise_soft_limit
from ..config.names import shown
from ..config.yamlfile import ConfigError
from .lazy import LazyGroup
from .streams import devnull_at, escape_unencodable

#: Every top-level command group: name -> "module:attribute", imported on first use.
COMMANDS = {
    "space": "tuner.cli.space:space",
    "sim": "tuner.cli.sim:sim",
    "bench": "tuner.cli.bench:bench",
    "launch": "tuner.cli.launch:launch",
    "study": "tuner.cli.study:study",
    "doctor": "tuner.cli.doctor:doctor",
}


#: The commands that only read and print: a reader that stops early (``| head``) has had what it
#: wanted, so a broken stdout pipe ends them quietly with exit 0, as ``git log | head`` does. The
#: others (run, create, copy, delete, confirm, report, init, bench, launch, sim serve) exit 1: a
#: broken pipe may have cut their work short.
READ_ONLY = {("study", "status"), ("study", "pareto"), ("study", "export"), ("study", "list"),
             ("study", "compare"), ("space", "list"), ("space", "check"), ("sim", "landscape")}

#: The commands that only read when given a flag, so count as :data:`READ_ONLY` then: the last
#: confirmation shown, a run's plan, a launch's command line; none measures or writes anything (QA,
#: qa172: `tuner study confirm S.yaml --show | head -5` exited 1).
READ_ONLY_WITH = {("study", "confirm"): "--show", ("study", "run"): "--dry-run", ("launch",): "--print"}


def _only_reads(argv: list[str]) -> bool:
    """Whether the command line ``argv`` (up to a ``--``) only reads and prints: help, version, a
    :data:`READ_ONLY` command, or a :data:`READ_ONLY_WITH` command given its flag."""
    if {"-h", "--help", "--version"} & set(argv) or tuple(argv[:2]) in READ_ONLY:
        return True
    return any(tuple(argv[:len(words)]) == words and flag in argv for words, flag in READ_ONLY_WITH.items())


#: A disk that cannot take what a command writes: full, over quota, the file too large.
_DISK_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def _what_filled(exc: OSError) -> str:
    """``" FILE"``, the file a disk-full ``exc`` was writing (:func:`tuner.config.files.write_atomic`
    names its target), else ``" standard output"`` when that is what cannot take its text (QA:
    `tuner study pareto -f json > /dev/full` ended in OSError's traceback; stdout is then pointed at
    /dev/null, so the interpreter's last flush of it adds no second error), else ``""``."""
    if exc.filename is not None:
        return f" {exc.filename}"
    if not _writing_stdout(exc):
        return ""
    devnull_at(1)
    return " standard output"


def _stdout_failed(exc: OSError) -> str:
    """``" standard output: WHY"`` for stdout failing other than on a full disk or a closed pipe, its
    descriptor pointed at /dev/null (later writes and the interpreter's last flush add no second
    error). Why: a run detached from its terminal (``tuner study run S.yaml & disown``, ``setsid``)
    that the terminal outlives no longer: every write to it is EIO (QA, qa172: `tuner study status`
    there ended in OSError's traceback); a stdout another program made non-blocking is EAGAIN."""
    devnull_at(1)
    why = f" standard output: {exc.strerror or exc}"
    if exc.errno == errno.EIO:
        why += " (its terminal is gone?); to detach a command, send its output to a file: > FILE 2>&1"
    return why


def _writing_stdout(exc: BaseException) -> bool:
    """Whether ``exc`` was raised writing file descriptor 1: a frame on its way holds the stream
    it wrote to (click's ``echo(file=...)``, rich's ``Console.file``)."""
    tb = exc.__traceback__
    while tb is not None:
        local = tb.tb_frame.f_locals
        for stream in (local.get("file"), getattr(local.get("self"), "file", None)):
            try:
                if stream is not None and stream.fileno() == 1:
                    return True
            except (AttributeError, OSError, ValueError):
                pass
        tb = tb.tb_next
    return False


class _TunerGroup(LazyGroup):
    """The root group: turns :class:`ConfigError` from any command into one stderr line and exit 2,
    and so an option's value click refuses (``click.BadParameter``: no usage block) and a storage
    that fails mid-command (the database stopped after it was opened: a reader ended in
    SQLAlchemy's traceback), its URL redacted and password scrubbed. Every such line has the
    characters that would drive the terminal escaped (:func:`tuner.config.names.shown`)."""

    #: The command line as given (:meth:`make_context`): the passwords of the URLs on it are
    #: scrubbed from every error line, wherever the URL was put.
    argv: list[str] = []

    def scrub(self, text: str) -> str:
        """``text`` without the password of any URL on the command line (QA: a storage URL given
        as a positional argument came back in click's `Got unexpected extra argument (URL)`)."""
        from ..engine.urls import mask, secrets_of

        for arg in self.argv:
            for form in {arg, arg.partition("=")[2]}:
                if "@" in form:
                    for secret in secrets_of(form):
                        text = mask(text, secret)  # not inside a longer word (QA, qa167: "***ql://")
        return text

    def make_context(self, info_name, args, parent=None, **extra):
        self.argv = list(args)
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:  # `tuner URL`: no such command
            exc.message = self.scrub(exc.message)
            raise
        except BrokenPipeError as exc:  # `tuner --help | head -1`
            raise self.pipe_closed(exc) from None
        except OSError as exc:  # `tuner --help > /dev/full`: the root's --help and --version print here
            raise self.write_failed(exc) from None

    def pipe_closed(self, exc: BrokenPipeError, ctx: click.Context | None = None) -> click.exceptions.Exit:
        """The exit for a stdout pipe its reader closed (``| head``): quietly, 0 for a command that
        only reads or help and version (QA: `tuner study status NAME | head -1` exited 1); else 1
        and one line on stderr naming the command, as the pipe may have cut its work short (QA,
        qa172: `tuner study create S.yaml | head -1`, `tuner bench ... | head -1` exited 1 saying
        nothing, so a script's `set -o pipefail` failed with no reason). Click's own main would exit
        1 for every command, silently. Stdout is pointed at /dev/null, so the interpreter's last
        flush adds no second error; so is stderr when it was the same pipe (``2>&1 | head``). A
        broken pipe that is not stdout's (another process's, a socket's) is raised again: click's
        main ends it, exit 1, as before."""
        if not _writing_stdout(exc):
            raise exc
        devnull_at(1)
        argv = self.argv[: self.argv.index("--")] if "--" in self.argv else self.argv
        if _only_reads(argv):
            return click.exceptions.Exit(0)
        try:
            click.echo(f"error: cannot write standard output: its reader went away (a closed pipe) before "
                       f"{self.command_words(ctx)} finished, so its work may be cut short; give it a file "
                       "(> FILE) or a terminal and run it again", err=True)
        except OSError:  # stderr is the same closed pipe, or no better
            devnull_at(2)
        return click.exceptions.Exit(1)

    def command_words(self, ctx: click.Context | None) -> str:
        """``tuner study create``: the command this process runs, from the command line as given."""
        words, group = ["tuner"], self
        for arg in self.argv:
            group_here = ctx is not None and isinstance(group, click.Group)
            command = group.get_command(ctx, arg) if group_here else None
            if command is None:
                break
            words.append(arg)
            group = command
        return shown(" ".join(words))

    def write_failed(self, exc: OSError) -> click.exceptions.Exit:
        """The exit for a write that fails for good: a disk that cannot take what a command writes
        (:data:`_DISK_FULL`), or standard output failing any other way (:func:`_stdout_failed`):
        one line naming what could not be written and why, exit 1. Any other ``OSError`` is
        raised again. QA (qa172): `tuner --help > /dev/full` and `tuner --version > /dev/full`
        ended in OSError's traceback, printed while the root's options are parsed
        (:meth:`make_context`), before any command runs; a command's own --help, and its output,
        was already one line."""
        if exc.errno in _DISK_FULL:
            what = f"{_what_filled(exc)}: {exc.strerror}"
        elif exc.filename is None and _writing_stdout(exc):
            what = _stdout_failed(exc)
        else:
            raise exc
        try:
            click.echo(self.scrub(shown(f"error: cannot write{what}")), err=True)
        except OSError:  # stderr is the same dead terminal, or no better: nobody can read the line
            devnull_at(2)
        return click.exceptions.Exit(1)

    def invoke(self, ctx: click.Context):
        opened = _storages_opened()
        try:
            os.getcwd()
        except FileNotFoundError:  # QA (qa157): export, run, report ended in its traceback (Path.cwd())
            click.echo("error: the current folder no longer exists (it was deleted or moved after this shell "
                       "entered it); cd to an existing folder and run the command again", err=True)
            raise click.exceptions.Exit(2) from None
        try:
            return super().invoke(ctx)
        except ConfigError as exc:
            click.echo(self.scrub(f"error: {exc}"), err=True)  # (escaped: ConfigError)
            raise click.exceptions.Exit(2) from None
        except click.BadParameter as exc:
            # A value given but unusable (a folder where a file goes, a number out of range): one
            # line naming the option and why, as for every other bad input; no usage block.
            click.echo(self.scrub(shown(f"error: {exc.format_message()}")), err=True)
            raise click.exceptions.Exit(exc.exit_code) from None
        except click.UsageError as exc:  # an extra argument, an unknown option: click's own block
            exc.message = self.scrub(exc.message)
            raise
        except BrokenPipeError as exc:
            raise self.pipe_closed(exc, ctx) from None
        except OSError as exc:
            raise self.write_failed(exc) from None
        except (MemoryError, SystemError) as exc:  # the process's own limit (ulimit -v, a job's cap): no traceback
            if isinstance(exc, SystemError) and not _address_space_spent():
                raise
            click.echo(f"error: {self.command_words(ctx)} ran out of memory ({_memory_limit()}); raise the "
                       "limit or free memory and run it again", err=True)
            raise click.exceptions.Exit(1) from None
        except RuntimeError as exc:
            if not _no_thread(exc):
                raise
            # the kernel refused a thread (ulimit -u counts every process and thread of the user)
            click.echo(f"error: {self.command_words(ctx)} could not start a thread ({_thread_limits()}); raise "
                       "the limit or end some of this user's processes and run it again", err=True)
            raise click.exceptions.Exit(1) from None
        except Exception as exc:  # only storage errors are turned into a line; the rest goes on
            if not _database_loaded():  # (a command's --help, click's Exit, comes here too)
                raise
            from ..engine.storage import storage_failure_line

            line = storage_failure_line(exc, since=opened)
            if line is None:
                raise
            click.echo(self.scrub(shown(f"error: {line}")), err=True)
            raise click.exceptions.Exit(2) from None


@click.group(cls=_TunerGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="tuner")
def cli() -> None:
    """Tune SGLang EAGLE-3 speculative decoding flags, unattended, with Optuna.

    Start with a study on the simulated server (no GPU): `tuner study init demo.yaml` writes one,
    `tuner study run demo.yaml` runs it. `tuner space list eagle3` lists the settings of the shipped
    search space.
    """


def _address_space_spent() -> bool:
    """Whether this process stands at its address-space limit (``ulimit -v``), within 32 MiB: an
    allocation that fails inside CPython's import machinery surfaces as ``SystemError`` ("error return
    without exception set"), not ``MemoryError`` (QA: under the limit ``tuner study status`` ended in
    that traceback about one run in several, the failing allocation landing in an import)."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft == resource.RLIM_INFINITY:
        return False
    try:
        import psutil

        return psutil.Process().memory_info().vms + 32 * 1024 * 1024 >= soft
    except (MemoryError, SystemError):  # too little left even to look: spent
        return True


def _memory_limit() -> str:
    """This process's address-space limit as ``ulimit -v`` sets it, in words."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft == resource.RLIM_INFINITY:
        return "no address-space limit (ulimit -v): the machine's or the job's memory is used up"
    return f"its address-space limit, ulimit -v, is {soft // 1024} KiB"


def _no_thread(exc: RuntimeError) -> bool:
    """Whether ``exc`` is CPython's refusal to start a thread (``threading.Thread.start``: the kernel's
    ``EAGAIN``: RLIMIT_NPROC or a cgroup's pids.max reached, or no room for the thread's stack)."""
    return str(exc) == "can't start new thread"


def _thread_limits() -> str:
    """The limits a new thread must fit under, as ``ulimit`` names them: the user's processes and threads
    (``-u``), and its stack (``-s``, glibc's default for a thread) within the address space (``-v``)."""
    import resource

    def shown(limit: int, unit: int = 1, suffix: str = "") -> str:
        soft = resource.getrlimit(limit)[0]
        return "unlimited" if soft == resource.RLIM_INFINITY else f"{soft // unit}{suffix}"

    return (f"the kernel refused it; ulimit -u (this user's processes and threads, servers' included) "
            f"{shown(resource.RLIMIT_NPROC)}, ulimit -s {shown(resource.RLIMIT_STACK, 1024, ' KiB')} "
            f"within ulimit -v {shown(resource.RLIMIT_AS, 1024, ' KiB')}")


def _storages_opened() -> int:
    """How many storage URLs this process opened before the command (``tuner.engine.storage.OPENED``),
    read without importing that module for a command that opens none."""
    storage = sys.modules.get("tuner.engine.storage")
    return len(storage.OPENED) if storage is not None else 0


def _database_loaded() -> bool:
    """Whether SQLAlchemy's or Optuna's errors are loaded: a storage error is an instance of one of
    them (:func:`tuner.engine.patience.database_error`), so without them none was raised, and the
    check, which imports Optuna, is not made (``tuner study status --help`` loaded Optuna for it)."""
    return "sqlalchemy.exc" in sys.modules or "optuna.exceptions" in sys.modules


def _open_closed_streams() -> None:
    """A standard stream the caller closed (``tuner ... <&- >&-``; cron jobs, daemons) is /dev/null
    from here on, as if ``</dev/null`` or ``>/dev/null`` had been given: Python leaves ``sys.stdout``
    None (QA: every command ended in ``AttributeError: 'NoneType' object has no attribute 'isatty'``),
    and the next file opened would take the stream's number, so anything written to it, by a server
    inheriting it too, would land in that file."""
    import os

    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
        except OSError:
            devnull_at(fd)
            if getattr(sys, name) is None:
                setattr(sys, name, open(fd, mode, closefd=False))


def main() -> None:
    """Console-script entry point."""
    import warnings

    _open_closed_streams()
    raise_soft_limit()  # a low soft ulimit -n under a high hard one: the C=32 sweep's sockets fit
    escape_unencodable()  # a terminal not in UTF-8 gets escapes, not a traceback

    # Optuna marks the APIs an unattended study needs (heartbeats, constraints) as experimental;
    # users cannot act on that, so the notice stays out of their terminal.
    warnings.filterwarnings("ignore", message=r".*experimental")
    try:
        code = cli(prog_name="tuner", standalone_mode=False)  # click returns an Exit's code here
    except click.exceptions.Abort:  # Ctrl-C outside a run (which handles its own): the shell's 130
        click.echo("interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
