"""``tuner launch STUDY.yaml``: show or run the exact server command a trial (or the baseline) uses."""

from __future__ import annotations

import os
import time

import click

from .numbers import AsciiInt, speculative_options
from .output import fail


@click.command()
@click.argument("study_file", type=click.Path(dir_okay=False))
@speculative_options
@click.option("--baseline", is_flag=True, help="No speculative decoding (the autoregressive baseline).")
@click.option("--print", "print_only", is_flag=True,
              help="Print the exact command (shell-quoted, one line) and exit without starting it.")
@click.option("--port", type=AsciiInt(0, 65535), default=None, help="Override server.port (0: a free port).")
def launch(study_file, num_steps, topk, draft_tokens, baseline, print_only, port) -> None:
    """Start the server a trial would run, wait until it is ready, print its URL; Ctrl-C stops it.

    With none of the three flags (and no --baseline) SGLang chooses them itself. The command carries
    the study's server args, the search space's fixed args and the launcher's pins, exactly as in a
    study run. The log goes to STUDY_WORKDIR/launch/server.log. A study already in storage is
    launched only from a file that still matches it (else `study run`'s line, exit 2).
    """
    from ..config.yamlfile import ConfigError
    from ..engine.preflight import named_for_file

    try:
        _launch(study_file, num_steps, topk, draft_tokens, baseline, print_only, port)
    except ConfigError as exc:
        # A lower layer's "study: KEY: ..." (tuner/server/command.py, launcher.py, engine/facts.py)
        # names the study file, as `study run` names it (QA fuzz: `launch --print` of a file without
        # server.draft_model_path said `error: study: server.draft_model_path: ...`, no file).
        if exc.source != "study":
            raise
        raise named_for_file(exc, study_file) from None


def _launch(study_file, num_steps, topk, draft_tokens, baseline, print_only, port) -> None:
    """:func:`launch`'s work; a lower layer's :class:`ConfigError` may name the study as ``study``."""
    from ..config.space import SearchSpace
    from ..config.study import load_study
    from ..config.yamlfile import ConfigError
    from ..engine.facts import prepare, space_for
    from ..engine.preflight import check_python
    from ..engine.study import StorageUnreadable, check_file_against_study
    from ..server.launcher import (
        LaunchError,
        PortInUseError,
        ServerProcess,
        cleanup_orphans,
        stop_on_signals,
        study_max_concurrency,
    )
    from ..sglang.rules import SpecConfig, resolve

    if baseline and any(v is not None for v in (num_steps, topk, draft_tokens)):
        fail("--baseline runs without speculative decoding; drop --num-steps/--topk/--draft-tokens", 2)
    study = load_study(study_file)
    if study.server.backend == "model":
        raise ConfigError(study_file, "server.backend", "model has no server to launch (its figures come from the "
                          "performance model or a landscape table); launch from a study file with backend sim "
                          "or sglang")
    if not print_only:  # --print starts nothing: a command may be shown where its interpreter is not
        check_python(study, study_file)  # study run's check, before anything is written (QA: after the log)
    space = SearchSpace.load(study.search_space)
    # The same decision a study run makes: model and GPU facts -> the attention backend and its rules.
    try:
        attention = prepare(study, space)[2]
    except ConfigError as exc:
        # prepare reads a sim study's profile (tuner.engine.facts.gather_facts, the simulator's own
        # loader), whose line names the profile alone: said as `study run` says it, naming the study
        # file and its key (QA fuzz: `profile: nope` said `error: nope: no such simulator profile`)
        if study.server.backend != "sim" or exc.source == "study":
            raise
        raise ConfigError(study_file, "server.sim.profile", str(exc)) from None
    # A study already in storage is launched only as it is stored: a file edited since would start
    # a server that is not the study's, which `tuner study run` refuses with this same line. A storage
    # that cannot be read here is no reason to refuse a launch by hand: said, and the file is used.
    record = attention
    try:
        if check_file_against_study(study, study_file, attention) is None:
            # an older tuner's study, with no stored decision: the backend its trials ran (QA: the
            # command said fa3 where every trial of the study ran flashinfer)
            record = None
    except StorageUnreadable as exc:
        click.echo(f"warning: cannot read the study's storage to compare this file with it ({exc}); "
                   "launching from the file as it is", err=True)
    space, _ = space_for(space, study, record)
    algorithm = space.config.algorithm
    spec = None if baseline else SpecConfig(num_steps, topk, draft_tokens)
    srv = ServerProcess(
        study.server, spec, workdir=study.workdir, trial=None, fixed_args=space.config.fixed,
        algorithm=algorithm, max_concurrency=study_max_concurrency(study), port=port,
        log_path=f"{study.workdir}/launch/server.log", attention=space.attention, study=study.name)
    click.echo(f"note: {space.attention.line()}", err=True)
    if spec is not None:
        res = resolve(spec, space.context)
        if res.violation is not None:
            v = res.violation
            when = "at launch" if v.at_launch else v.when()
            verb = "SGLang does not refuse this, but" if v.stage == "unsupported" else f"SGLang will fail {when}"
            click.echo(f"warning: {verb} ({v.rule}): {v.message}", err=True)
        for line in res.warnings:
            click.echo(f"note: SGLang rewrites this setting: {line}", err=True)
    if print_only:
        click.echo(srv.command_line)
        if study.server.env:  # not on the line: their values may be secrets (README: server.env)
            click.echo(f"note: the server also gets server.env's {', '.join(sorted(study.server.env))} and "
                       "PYTHONUNBUFFERED=1 in its environment; set them before running this command", err=True)
        if (study.server.port if port is None else port) == 0:
            click.echo(f"note: server.port is 0: port {srv.port} was free just now, but every launch (this "
                       f"command without --print, and each trial) picks its own free port when it starts; "
                       f"give --port P for a command you can rerun as it is", err=True)
        return
    for rec in cleanup_orphans(study.workdir):
        click.echo(f"stopped orphaned server pid {rec.pid} (port {rec.port}) left by tuner "
                   f"pid {rec.owner_pid}", err=True)
    from .progress import interrupt_text

    def say(kind: str, info: dict) -> None:
        # Inside the signal handler: one unbuffered write, no lock that print() might be holding.
        os.write(2, (interrupt_text(kind, info, fate=None) + "\n").encode())

    try:
        with stop_on_signals(srv, on_signal=say):
            try:
                srv.start()
                click.echo(f"starting: {srv.command_line}\nlog: {srv.log_path}", err=True)
                url = srv.wait_ready()
                click.echo(url)
                click.echo("ready; Ctrl-C stops the server", err=True)
                while True:
                    srv.check_alive()
                    time.sleep(1.0)
            finally:
                srv.stop()
    except PortInUseError as exc:
        fail(str(exc), 1)
    except LaunchError as exc:
        click.echo(f"error: {exc}\n--- last lines of {srv.log_path} ---\n{exc.log_tail}", err=True)
        raise click.exceptions.Exit(1) from None
    except (KeyboardInterrupt, SystemExit) as exc:  # SystemExit: SIGTERM, SIGHUP (stop_on_signals)
        click.echo("interrupted; server stopped", err=True)
        raise click.exceptions.Exit(130 if isinstance(exc, KeyboardInterrupt) else exc.code) from None
