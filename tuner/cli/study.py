"""``tuner study create|run|status`` (and, in their own modules, init, pareto, export, report, list,
delete, copy, compare, confirm).

A study is named either by its file (``studies/NAME.yaml``: the storage comes from the file) or by
``NAME`` with ``--storage URL`` (or ``$TUNER_STORAGE``; with neither, ``NAME.db`` here or in
``studies/`` when one exists). Running from storage alone needs nothing else: the study's config,
space and suite are stored in it.

Why one module: ``run``'s options are judged together (the file, ``--study``, ``--add-trials`` against
the file's budget, ``--dry-run``) before anything is written, and ``create`` and ``status`` share them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..config.study import MAX_TRIALS, StudyConfig, check_added_budget, parse_duration
from ..config.wording import counted
from ..engine.storage import redact
from .lazy import LazyGroup
from .output import (AsciiInt, chosen_format, console, fail, format_option, heading, not_empty, print_csv,
                     print_json, print_table, say)
from .journal_note import journal_note
from .study_target import (check_storage_writable, in_storage, resolve_target, say_fact_conflicts,
                           storage_option)

#: Exit status of a worker whose storage stayed unreachable past the patience (EX_TEMPFAIL: try again).
STORAGE_EXIT = 75


@click.group(cls=LazyGroup, lazy={
    "pareto": "tuner.cli.study_results:pareto",
    "export": "tuner.cli.study_results:export",
    "report": "tuner.cli.study_report:report",
    "list": "tuner.cli.study_manage:list_",
    "delete": "tuner.cli.study_manage:delete",
    "copy": "tuner.cli.study_manage:copy",
    "compare": "tuner.cli.study_compare:compare",
    "confirm": "tuner.cli.study_confirm:confirm",
    "init": "tuner.cli.study_init:init",
})
def study() -> None:
    """Create, run and inspect Optuna studies of EAGLE-3 settings.

    No study file yet? `tuner study init demo.yaml` writes one that runs as it is.
    """
    _check_local_zone()


def _check_local_zone() -> None:
    """Refuse, in one line and before anything is written, a ``TZ`` whose offset from UTC is a day
    or more (``TZ=UTC+24``, ``<+25>-25``: the C library takes offsets up to 24:59:59). Optuna hands
    every trial's times back in the local zone (``datetime.astimezone()``,
    optuna/storages/_rdb/models.py, ``datetime_start``), and Python's ``datetime`` holds offsets of
    less than a day only: every command that read trials ended in a traceback (``offset must be a
    timedelta strictly between -timedelta(hours=24) and timedelta(hours=24)``), and ``run`` did so
    after it had created the study and queued its seed trials (QA, qa168).

    The offsets are the zone's over the coming year, hour by hour (a rule repeats every year, so a
    trial read later, or one recorded a year back, stands at one of them): Python's own
    ``time.timezone``/``time.altzone`` are read in January and July only, and missed a summer time
    a day from UTC that January and July are outside of (QA, qa174:
    ``TZ='STD0DST-24:30,M12.1.0/0,M12.5.6/23'`` in December ran into the traceback)."""
    import os
    import time

    now = time.time()
    offsets = {time.timezone} | ({time.altzone} if time.daylight else set())
    offsets |= {-time.localtime(now + hour * 3600).tm_gmtoff for hour in range(366 * 24 + 1)}
    if any(abs(offset) >= 24 * 3600 for offset in offsets):
        fail(f"TZ={os.environ.get('TZ', '')!r} is a day or more from UTC, which Python's datetime (and so "
             "Optuna's trial times) cannot hold; set TZ to a zone such as UTC or Europe/Berlin, or unset it",
             2)


@study.command("create")
@click.argument("study_file", type=click.Path(dir_okay=False))
@storage_option
def create(study_file, storage) -> None:
    """Create the study in its storage (a no-op when it exists with the same config)."""
    from ..config.files import check_writable
    from ..engine.preflight import preflight
    from ..engine.study import create_study

    name, url, config = resolve_target(study_file, storage)
    check_storage_writable(url, study_file, storage)
    preflight(in_storage(config, url), None, study_file)  # before anything is written
    say_fact_conflicts(config, study_file)
    # The workdir `run` will need, checked now: a study created here should be runnable here.
    check_writable(config.workdir or str(Path("studies") / name), "workdir", folder=True)
    say_missing_accept_lengths(config, study_file)
    create_study(config, url, note=click.echo)
    click.echo(f"study {name} ready in {redact(url)}")


def say_missing_accept_lengths(config, source) -> None:
    """One warning on stderr when the default search (``sampler: auto``) replays a landscape table
    some of whose rows lack ``accept_length``: it then models the speedups without it, and finds
    the optima less often (:func:`tuner.config.landscape.missing_accept_note`). Other samplers
    never read accept lengths."""
    model = config.server.model if config.server.backend == "model" else None
    if model is None or model.landscape is None or config.sampler.name != "auto":
        return
    from ..config.landscape import load_landscape, missing_accept_note

    line = missing_accept_note(load_landscape(model.landscape), f"{source}: server.model.landscape {model.landscape}")
    if line:
        click.echo(line, err=True)


@study.command("run")
@click.argument("study_file", required=False, type=click.Path(dir_okay=False))
@click.option("--study", "study_name", default=None, help="Run a stored study by name (with --storage).")
@storage_option
@click.option("--n-trials", type=AsciiInt(min=1, max=MAX_TRIALS), default=None,
              help="Measure at most N new settings in this run (the study's budget still applies).")
@click.option("--add-trials", type=AsciiInt(min=1, max=MAX_TRIALS), default=None, metavar="N",
              help="Extend the study first: raise its stored budget.n_trials by N (once, for every worker).")
@click.option("--timeout", default=None, help="Start no trial that would not finish within this time (8h, 45m, 1h30m; "
              "modelled GPU time on backend model).")
@click.option("--dry-run", is_flag=True, help="Print the baseline and seed-trial server commands; launch nothing.")
@click.option("--rebaseline", is_flag=True, help="Measure the autoregressive baseline again first.")
@click.option("--workdir", default=None, type=click.Path(file_okay=False),
              callback=not_empty("give a folder, or leave --workdir out for the study's workdir"),
              help="Where per-trial logs go (default: the study file's workdir, NAME/ beside it unless set; "
                   "studies/NAME here for --study).")
def run(study_file, study_name, storage, n_trials, add_trials, timeout, dry_run, rebaseline, workdir) -> None:
    """Run trials: baseline first, then Optuna's proposals, until the budget or time is spent.

    Resumable: run it again to continue; several workers (nodes) may run the same study. Ctrl-C
    stops the server (Ctrl-C again kills it at once) and queues the running trial again.
    """
    # The stopping signals are handled from the command's first moment, not from the run's: as PID 1
    # (a container's entry point, `unshare --pid`) the kernel drops a signal that has no handler, and
    # a SIGTERM during the checks and the study's creation (seconds) was lost, the run going on to its
    # end (QA, qa185). Outside PID 1 it killed the tuner on the spot, silently.
    from ..server.signals import raised_by_signal, stop_on_signals

    try:
        with stop_on_signals():
            _run_command(study_file, study_name, storage, n_trials, add_trials, timeout, dry_run, rebaseline,
                         workdir)
    except (KeyboardInterrupt, SystemExit) as exc:
        if not raised_by_signal(exc):
            raise  # the run's own exit, which said how it stopped
        click.echo("interrupted: nothing was running (no trial, no server); tuner study run continues the study",
                   err=True)
        sys.exit(130 if isinstance(exc, KeyboardInterrupt) else exc.code)


def _run_command(study_file, study_name, storage, n_trials, add_trials, timeout, dry_run, rebaseline,
                 workdir) -> None:
    """:func:`run`'s body, under its signal handlers."""
    from ..config.files import check_writable
    from ..engine.patience import StorageUnavailable, storage_stop_line
    from ..engine.preflight import preflight
    from ..engine.runner import BUDGET_SPENT
    from ..server.launcher import PortInUseError

    timeout_s = parse_duration(timeout, "--timeout", "") if timeout is not None else None
    name, url, file_config = resolve_target(study_file, storage, study_name)
    if add_trials and file_config is not None:  # before anything is written: the stored budget is at
        if file_config.budget.n_trials is None:  # least the file's; a file without one makes it unbounded
            fail(f"{study_file}: budget.n_trials: not set, so study {name} has no launch budget (its timeout "
                 "bounds it, or it runs until stopped); --add-trials has nothing to add to: set budget.n_trials "
                 "in the file, or use --n-trials N to bound this run", 2)  # (QA, qa139: created, then refused)
        check_added_budget(name, file_config.budget.n_trials, add_trials)
    target_dir = workdir or (file_config.workdir if file_config else str(Path("studies") / name))
    if file_config is not None:
        check_storage_writable(url, study_file, storage)
        file_config = in_storage(file_config, url)  # every check below reads the storage run uses
    if dry_run:
        if file_config is not None:  # the checks a run makes first: a dry run says no where a run would
            from ..config.space import SearchSpace
            from ..engine.study import seed_trials

            preflight(file_config, None, study_file)
            say_fact_conflicts(file_config, study_file)
            check_writable(target_dir, "--workdir" if workdir else "workdir", folder=True)
            seed_trials(file_config, SearchSpace.load(file_config.search_space))
        _dry_run(file_config, name, url, workdir, study_file)
        return
    # Everything checked before anything is written: this machine's server, the port, the workdir,
    # tuner doctor's cheap checks. A stored study is checked once it is read (in _run_worker).
    try:
        if file_config is not None:
            preflight(file_config, None, study_file, launching=True)
            say_fact_conflicts(file_config, study_file)
            check_writable(target_dir, "--workdir" if workdir else "workdir", folder=True)
            _preflight(file_config.model_copy(update={"workdir": target_dir}))  # the run's workdir (QA: the file's)
        try:
            summary, backend = _run_worker(file_config, name, url, workdir, target_dir, add_trials, n_trials,
                                           timeout_s, rebaseline)
        except Exception as exc:  # noqa: BLE001 - the storage gave up (75: retry) or refused the worker (2)
            line = storage_stop_line(exc, url)  # raises anything else again
            folder = getattr(exc, "journal_dir", None) or Path(target_dir) / "journal"
            click.echo(f"error: {line}; no server is left running; {journal_note(name, folder)}", err=True)
            sys.exit(STORAGE_EXIT if isinstance(exc, StorageUnavailable) else 2)
    except PortInUseError as exc:  # a fixed port in use, before anything is written
        fail(str(exc), 1)
    click.echo(f"done: {summary.measured} measured, {summary.pruned} pruned, {summary.failed} failed, "
               f"{summary.reused} reused, {summary.invalid} invalid ({summary.stopped_because})")
    if summary.failed and not summary.measured + summary.pruned:
        if backend == "model":  # no process, no log: the failure message is all there is
            click.echo(f"warning: every launch this run failed (backend model: no server ran); `tuner study "
                       f"status {study_file or name}` shows why", err=True)
        else:
            click.echo(f"warning: every server this run launched failed; `tuner study status {study_file or name}` "
                       "shows why, and each trial's server log is in the workdir", err=True)
    if summary.launches == 0 and summary.stopped_because.startswith(BUDGET_SPENT):
        where = f"budget.n_trials in {study_file}" if file_config is not None else "the budget"
        click.echo(f"nothing left to measure: to measure more, raise {where} or run again with --add-trials N",
                   err=True)


def _run_worker(file_config, name, url, workdir, target_dir, add_trials, n_trials, timeout_s, rebaseline):
    """Create (from a file) or open the study, then run this worker; its storage rides out outages.
    Returns the run's summary and the study's backend (``sim``, ``sglang``, ``model``)."""
    from ..config.files import check_writable
    from ..bench.open_files import TunerOutOfFiles
    from ..engine.backends import ServerOutOfThreads, WorkdirUnwritable
    from ..engine.stall import TunerKeepsStalling
    from ..engine.baseline import BaselineError
    from ..engine.patience import StorageUnavailable
    from ..engine.preflight import preflight
    from ..engine.runner import run_study
    from ..engine.study import (StudyReplaced, config_from_study, create_study, extend_budget, open_study,
                                same_profile, study_exists)
    from ..server.launcher import PortInUseError, stop_on_signals
    from .library_warnings import LibraryWarnings
    from .progress import RunView, say_going_on, say_storage_outage

    if file_config is not None:
        create_study(file_config, url, note=say_going_on, patient=True, on_outage=say_storage_outage,
                     add_trials=add_trials)
    stored = open_study(name, url, patient=True, on_outage=say_storage_outage)
    config, space, suite_dict = config_from_study(
        stored, workdir or (file_config.workdir if file_config else None))
    same_profile(stored, config, stored.user_attrs)  # `--study NAME`: the stored profile's path, as it is now
    if file_config is None:
        check_writable(target_dir, "--workdir" if workdir else "workdir", folder=True)
        preflight(config, space, name, launching=True)
    if timeout_s is None:
        timeout_s = config.budget.timeout_s
    backend = _backend(config, space, suite_dict)  # a source that does not load refuses the run here
    if add_trials:  # last: a run refused above extends nothing
        old, new = extend_budget(stored, add_trials)
        say_going_on(f"study {name} extended: budget.n_trials {old} -> {new}")

    with RunView(objectives=config.objectives) as view, LibraryWarnings(view), \
            stop_on_signals(on_signal=view.on_signal):
        try:
            return run_study(config, url, backend, n_trials=n_trials, timeout_s=timeout_s,
                             rebaseline=rebaseline, on_event=view.event), config.server.backend
        except (BaselineError, PortInUseError, WorkdirUnwritable, TunerOutOfFiles,
                ServerOutOfThreads, TunerKeepsStalling) as exc:  # not the setting's fault
            view.close()
            fail(str(exc))  # escaped: a failed baseline quotes its server's log line
        except StorageUnavailable as exc:
            view.close()
            exc.journal_dir = Path(config.workdir) / "journal"
            raise
        except (KeyboardInterrupt, SystemExit) as exc:  # SystemExit: SIGTERM, SIGHUP, SIGUSR1/2 (stop_on_signals)
            view.close()
            click.echo(f"interrupted: the server is stopped; "
                       f"{_fate_after_interrupt(name, config.workdir, exc, stored)}", err=True)
            sys.exit(130 if isinstance(exc, KeyboardInterrupt) else exc.code)
        except StudyReplaced as exc:  # deleted, perhaps made anew under its name (tuner.engine.study)
            view.close()
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
        except KeyError:  # Optuna's "Record does not exist": the study may be gone under this worker
            if study_exists(name, stored._storage):
                raise
            view.close()
            click.echo(f"error: {StudyReplaced(name)}", err=True)
            sys.exit(1)


def _fate_after_interrupt(name: str, workdir, exc: BaseException | None = None, stored=None) -> str:
    """What became of the trial a signal stopped: queued again for the next run, or, when this study's
    measurements wait in the journal (the signal came while the storage was away, so nothing could be
    queued), where they wait (:func:`journal_note`; QA: after "The measurement is kept in the journal"
    the last line said "a trial that was running is queued again", and nothing was); or, when the
    trial was left RUNNING with its storage away (``exc`` marked :data:`tuner.engine.trial.LEFT_RUNNING`),
    that the next run's reaper queues it (QA, qa154: the line said this run had)."""
    from ..engine.journal import Journal
    from ..engine.trial import LEFT_RUNNING

    if Journal(workdir).entries(name):
        return journal_note(name, Path(workdir) / "journal")
    left = getattr(exc, LEFT_RUNNING, None)
    if left is not None:
        return (f"trial {left} was running and is left so (the storage did not answer): the next tuner study "
                "run fails it and queues its setting again")
    return (_what_was_running(stored) if stored is not None else None) or "a trial that was running is queued again"


def _what_was_running(stored) -> str | None:
    """What the signal stopped, read back from the storage (``stored``, the run's study): the trial
    this process failed as interrupted (its setting queued again), or the baseline it was measuring
    (measured again by the next run), or nothing at all; or the trial a second signal left RUNNING,
    its cleanup cut short (the next run's reaper fails it and queues its setting). QA (qa185): a signal
    during the run's start, or during the baseline, ended with "a trial that was running is queued
    again" though no trial was and nothing was queued. None when the storage does not answer at once (the line stays general:
    the read does not wait out an outage on the way out)."""
    from optuna.trial import TrialState

    from ..engine.patience import fail_fast, unreachable_now
    from ..engine.records import INTERRUPTED
    from ..engine.study import BASELINE_SUFFIX
    from ..engine.workers import Worker

    storage = stored._storage
    if unreachable_now(storage):
        return None
    me = Worker().as_dict()  # the runner's worker: this process

    def mine(trials, state=TrialState.FAIL) -> list:
        return [t for t in trials if t.state == state and t.user_attrs.get("worker") == me]

    try:
        with fail_fast():
            trials = stored.get_trials(deepcopy=False)
            # a second signal cut the trial's own cleanup short: the next run's reaper fails it
            left = mine(trials, TrialState.RUNNING)
            if left:
                return (f"trial {left[-1].number} was running and is left so (a second signal cut its cleanup "
                        "short): the next tuner study run fails it and queues its setting again")
            # by the signal: a stalled trial earlier in this run is interrupted too, its note another
            failed = [t for t in mine(trials) if t.user_attrs.get("status") == INTERRUPTED
                      and str(t.user_attrs.get("note", "")).startswith("the tuner was stopped")]
            if failed:
                return f"trial {failed[-1].number} was running and is queued again"
            import optuna

            try:
                btrials = optuna.load_study(study_name=stored.study_name + BASELINE_SUFFIX,
                                            storage=storage).get_trials(deepcopy=False)
                baseline = mine(btrials[-1:])  # the last: one failed before (a stall) was measured again
                baseline += mine(btrials[-1:], TrialState.RUNNING)  # its cleanup cut short by a second signal
            except KeyError:
                baseline = []
    except Exception:  # noqa: BLE001 - the storage went away since: the general line
        return None
    if baseline:
        return "the baseline was being measured: the next tuner study run measures it again"
    return "no trial was running"


def _preflight(config: StudyConfig) -> None:
    """`tuner doctor`'s cheap checks, before anything is written; a failure stops the run (exit 1)."""
    from ..engine.doctor import FAIL, run_checks

    failed = [c for c in run_checks(config, cheap_only=True) if c.status == FAIL]
    if failed:
        for check in failed:
            click.echo(f"error: {check.line()}", err=True)
        click.echo("(tuner doctor STUDY.yaml runs every check)", err=True)
        sys.exit(1)


def _backend(config: StudyConfig, space, suite_dict):
    from ..config.suite import load_suite
    from ..engine.backends import make_backend

    return make_backend(config, space, load_suite(suite_dict))


def _dry_run(file_config: StudyConfig | None, name: str, url: str, workdir: str | None, study_file=None) -> None:
    """Print what a run would launch, writing nothing (not even the study)."""
    from ..config.space import SearchSpace
    from ..config.suite import load_suite
    from ..engine.backends import ServerBackend
    from ..engine.study import (StorageUnreadable, check_file_against_study, config_from_study, left_out_default_seeds,
                                open_study, seed_trials)
    from ..server.command import format_command

    restricted = None
    if file_config is not None:
        from ..engine.facts import prepare, space_for

        config = file_config
        space = SearchSpace.load(config.search_space)
        suite = load_suite(config.bench.suite)
        record = prepare(config, space)[2]
        try:  # an older tuner's study (no stored decision): the backend its trials ran
            record = None if check_file_against_study(config, study_file, record) is None else record
        except StorageUnreadable as exc:
            if exc.refused:  # QA (qa159): a role refused the database or its tables, which a run exits 2 on
                fail(str(exc), 2)
            # an outage a run waits out: a dry run shows the file's commands
        # (a ConfigError, the file against another stored study, is the run's own line, exit 2: QA
        # (qa164) saw the dry run print the plan, exit 0, for a file the run refused)
        space, restricted = space_for(space, config, record)
    else:
        config, space, suite_dict = config_from_study(open_study(name, url), workdir)
        suite = load_suite(suite_dict)

    if config.server.backend == "model":
        from ..engine.backends import make_backend

        click.echo(f"# study {config.name}, storage {redact(url)}")
        click.echo(f"# backend model: no server is launched; every measurement is the "
                   f"{make_backend(config, space, suite).source_label} with {config.server.model.noise:.0%} noise")
        for spec in seed_trials(config, space):
            click.echo(f"# seed trial {spec.label()}")
        for spec in left_out_default_seeds(config, space):
            click.echo(f"# default seed trial {spec.label()}: left out, " + ("the landscape table does not list it"
                       if config.server.model.landscape else "it lies outside the search space"))
        return
    backend = ServerBackend(config, space.config.fixed, suite, algorithm=space.config.algorithm,
                            attention=space.attention)
    click.echo(f"# study {config.name}, storage {redact(url)}")
    if space.attention is not None:
        click.echo(f"# {space.attention.line()}")
    if restricted:
        click.echo(f"# {restricted}")
    for line in backend.launch_warnings():  # the same at every launch: said once, not before each command
        click.echo(f"# warning, every launch: {line}")
    click.echo("# baseline (no speculative decoding):")
    click.echo(format_command(backend.command(None)))
    for spec in seed_trials(config, space):
        res = space.resolve(spec)
        if not res.ok:  # a run stores it invalid, never launched (an older study's tree on a chain backend)
            click.echo(f"# seed trial {spec.label()}: not launched, the rules refuse it "
                       f"({res.violation.rule})")
            continue
        note = f" (SGLang runs it as {res.effective.label()})" if res.rewritten else ""
        click.echo(f"# seed trial {spec.label()}{note}:")
        click.echo(format_command(backend.command(spec)))
    for spec in left_out_default_seeds(config, space):  # QA (qa134): with a backend of no trees, 3 of 4 unsaid
        click.echo(f"# default seed trial {spec.label()}: left out, it lies outside the search space"
                   + (" as restricted above" if restricted else ""))


@study.command("status")
@click.argument("target", required=False)
@click.option("--study", "study_name", default=None)
@storage_option
@format_option
def status(target, study_name, storage, fmt, as_json) -> None:
    """The baseline, every trial (state, setting, values, failure) and the Pareto front."""
    from ..engine.study import open_study
    from ..results.confirmed import confirmation_summary
    from ..results.status import study_status

    name, url, _ = resolve_target(target, storage, study_name, reads_storage=True)
    study_ = open_study(name, url, tuner_only=True)
    data = study_status(study_)
    data["confirmation"] = confirmation_summary(study_)
    fmt = chosen_format(fmt, as_json)
    if fmt == "json":
        print_json(data)
    elif fmt == "csv":
        print_csv(*status_rows(data))
    else:
        print_status(data)


def _real_values(t: dict) -> bool:
    """Whether a status row's values are measured (feasible, or measured but breaking a limit)."""
    return bool(t["values"]) and (t["feasible"] or bool(t.get("limits")))


def status_rows(data: dict) -> tuple[list[str], list[list]]:
    """Every trial as a flat row (``-f csv``): numbers unformatted, one column per objective."""
    objectives = data["objectives"]
    front = set(data["front"])
    columns = ["trial", "state", "status", "requested_steps", "requested_topk", "requested_draft", "steps", "topk",
               "draft", *objectives, "feasible", "front", "failure_class", "reused_from", "duration_s",
               "limits", "lossless_share", "pruned_at", "pruned_by", "pruned_from", "model_duration_s"]
    rows = []
    for t in data["trials"]:
        req, eff = t["requested"] or {}, t["effective"] or {}
        values = t["values"] if _real_values(t) else [None] * len(objectives)
        rows.append([t["number"], t["state"], t["status"], req.get("num_steps"), req.get("eagle_topk"),
                     req.get("num_draft_tokens"), eff.get("num_steps"), eff.get("eagle_topk"),
                     eff.get("num_draft_tokens"), *values, t["feasible"], t["number"] in front,
                     t["failure_class"], t["reused_from"], t["duration_s"], t.get("limits"),
                     t.get("lossless_share"), t.get("pruned_at"), t.get("pruned_by"), t.get("pruned_from"),
                     t.get("model_duration_s")])
    return columns, rows


def print_status(data: dict) -> None:
    from ..bench.workload import workload_line
    from ..results.status import pruned_note, spread_lines
    from ..results.traffic import baseline_slo_lines

    heading(f"study {data['study']}", f"  objectives: {', '.join(data['objectives'])}")
    if data.get("incomplete"):
        say(f"warning: study {data['study']} is {data['incomplete']}")
    bench = data.get("bench") or {}
    if data.get("workload"):
        say(f"workload: {workload_line(data['workload'])}; api {bench.get('api') or 'generate'}"
            + (", streamed" if bench.get("stream") else ""))
    for slo in data.get("slo") or []:
        limits = ", ".join(f"{k} {v:g}" for k, v in slo["limits"].items())
        say(f"slo at C={slo['concurrency']}: {limits}")
    b = data["baseline"]
    if b is None and data.get("baseline_problem"):
        # its failure message quotes the server's log or an HTTP error body (QA: ESC and U+202E raw)
        say(f"baseline: {data['baseline_problem']}; the next tuner study run measures it again")
    elif b is None:
        console.print("baseline: not measured yet")
    else:
        tps = ", ".join(f"C={k.split('@')[1]}: {v:.1f}" for k, v in sorted(
            ((k, v) for k, v in b.items() if k.startswith("tok_per_s@")), key=lambda kv: int(kv[0].split("@")[1])))
        single = b.get("single_tok_per_s")  # None: the suite sends no single request (or no sweep below)
        single = "not measured (the suite sends none)" if single is None else f"{single:.1f} tok/s"
        console.print(f"baseline: single request {single}; aggregate tok/s "
                      f"{tps or 'not measured (the suite sweeps no concurrency)'}")
        if b.get("remeasured_for"):  # tuner.engine.suspect: why this baseline replaced the one before
            say(f"baseline measured again: {b['remeasured_for']}")
        for line in baseline_slo_lines(b):
            say(line)
    console.print("trials: " + ", ".join(f"{n} {k}" for k, n in sorted(data["counts"].items())))
    for line in spread_lines(data.get("spread"), data["objectives"]):
        say(line)
    front = set(data["front"])
    rows = []
    for t in data["trials"]:
        e = t["effective"] or t["requested"] or {}
        # An infeasible trial's values are the sampler's placeholders, not results: not shown;
        # unless it measured and only breaks the study's limits (SLOs, lossless): then they are real.
        vals = " ".join(f"{v:.3f}" for v in t["values"]) if _real_values(t) else ""
        note = t["failure_class"] or t.get("note") or (
            f"= trial {t['reused_from']}" if t["reused_from"] is not None else "")
        if t["status"] == "pruned":
            note = pruned_note(t)
        if t.get("remeasure_of") is not None:
            note = note or f"again (first: trial {t['remeasure_of']})"
        if t.get("limits"):
            note = "; ".join(filter(None, [note, t["limits"]]))
        if t.get("file_warnings"):  # its figures are stored; a log or result file is not
            note = "; ".join(filter(None, [note, "warning: " + "; ".join(t["file_warnings"])]))
        # a trial failed after its figures were written (its tell never came) holds no result: no
        # lossless share beside FAIL either (QA, qa136: "100%" beside a failed trial)
        lossless = "" if t.get("lossless_share") is None or t["state"] == "FAIL" else (
            f"{t['lossless_share']:.0%}" + (" !" if t.get("lossless_flag") else ""))
        rows.append((t["number"], t["status"] or t["state"], e.get("num_steps"), e.get("eagle_topk"),
                     e.get("num_draft_tokens"), vals, "*" if t["number"] in front else "", lossless, note))
    print_table(["trial", "status", "steps", "topk", "draft", " / ".join(data["objectives"]), "front",
                 "lossless", "note"], rows)
    if any(t.get("lossless_flag") for t in data["trials"]):
        say("lossless: ! marks a trial whose greedy outputs match the baseline's less often than "
            f"bench.lossless.min_share ({(bench.get('lossless') or {}).get('min_share', 0.9):.0%})")
    conf = data.get("confirmation")
    if conf:
        # none: no setting was measured in two rounds with the baseline (QA, qa192: "picks  (" printed empty)
        picks = ", ".join(f"{k} -> trial {v}" for k, v in conf["picks"].items()) or \
            "none (no setting measured in two rounds with the baseline)"
        say(f"confirmed: run {conf['run']}, {counted(conf['rounds'], 'round')}; picks {picks} "
            "(`tuner study confirm` shows the intervals)")
