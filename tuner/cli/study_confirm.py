"""``tuner study confirm``: re-measure the picks and the baseline, interleaved, and show what holds.

Collects options, picks the candidates from the study's front (:func:`tuner.results.confirmed.confirm_candidates`),
runs :func:`tuner.engine.confirm.run_confirmation` through the study's own backend, then prints the
confirmed means with 95% intervals and the picks they support. ``--show`` measures nothing and
prints the last confirmation. Exit 1 with "no safe improvement" when ``--min-speedup-c32`` rules out
every candidate beyond noise (the repeats are stored all the same).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..config.suite import MAX_REPEATS
from ..config.wording import counted
from .numbers import AsciiInt
from .output import FiniteFloat, console, fail, heading, not_empty, print_json, print_table
from .study_target import resolve_target, storage_option


#: ``--picks`` when not given; a pick the study's objectives cannot mean is left out of it
#: (tuner.results.pareto.absent_pick), while one named on the command line is refused
DEFAULT_PICKS = "single,throughput,knee"


@click.command("confirm")
@click.argument("target", required=False, metavar="NAME|STUDY.yaml")
@click.option("--study", "study_name", default=None, help="The study's name (with --storage).")
@storage_option
@click.option("--picks", default=DEFAULT_PICKS, show_default=True, metavar="LIST",
              help="Which settings to re-measure: pick names and/or trial numbers, comma-separated "
                   "(the default: those the study's objectives mean).")
@click.option("--repeats", type=AsciiInt(min=2, max=MAX_REPEATS), default=3, show_default=True,
              help="Rounds; each measures the baseline and every candidate once (at most 1000, as a suite's "
                   "repeats: 10**9 was taken, a run of years).")
@click.option("--near", type=FiniteFloat(min=0, max=0.5), default=0.03, show_default=True,
              help="Also confirm front points within this share of the single/throughput pick's value.")
@click.option("--max-candidates", type=AsciiInt(min=1), default=6, show_default=True,
              help="At most this many settings (the named picks first).")
@click.option("--min-speedup-c32", type=FiniteFloat(min=0), default=None, metavar="X",
              help="Protect C=32: a candidate whose speedup@32 lies below X beyond noise is not picked.")
@click.option("--show", is_flag=True, help="Measure nothing: print the last confirmation.")
@click.option("--workdir", default=None, type=click.Path(file_okay=False),
              callback=not_empty("give a folder, or leave --workdir out for the study's workdir"),
              help="Where the servers' logs go (default: the study file's workdir, NAME/ beside it unless set; "
                   "studies/NAME here for --study).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def confirm(target, study_name, storage, picks, repeats, near, max_candidates, min_speedup_c32, show, workdir,
            as_json) -> None:
    """Re-measure the candidate picks and the baseline, interleaved (baseline, A, B, baseline, ...);
    the picks then use the confirmed means with 95% intervals."""
    from ..config.yamlfile import ConfigError
    from ..engine.confirm import run_confirmation
    from ..engine.study import SUITE_ATTR, config_from_study, open_study, same_profile
    from ..results.confirmed import confirm_candidates, confirmation_data, load_confirmation
    from ..results.pareto import PICKS, PickError, absent_pick, check_c32_swept, refused_now, trial_number
    from ..engine.patience import StorageUnavailable
    from ..engine.study import StudyReplaced
    from .progress import say_storage_outage
    from .journal_note import journal_note
    from .study import STORAGE_EXIT, _backend

    names = [p.strip() for p in picks.split(",") if p.strip()]
    if not names:  # else the engine's "nothing to confirm" came as a traceback
        raise ConfigError("--picks", "", f"{picks!r} names no setting; give pick names and/or trial numbers, "
                          f"comma-separated ({','.join(PICKS)} by default)")
    for name in names:
        if name not in PICKS and trial_number(name) is None:
            raise ConfigError("--picks", name, f"expected {', '.join(PICKS)} or a trial number in digits 0-9")
    name, url, file_config = resolve_target(target, storage, study_name)
    # measuring: ride out storage outages, and say so at once (a silent wait looks like a hang)
    study = open_study(name, url, patient=not show, on_outage=None if show else say_storage_outage,
                       tuner_only=True)
    if study.user_attrs.get(SUITE_ATTR):  # before any launch
        sweep = study.user_attrs[SUITE_ATTR].get("sweep") or {}
        check_c32_swept(name, sweep.get("concurrencies") or [], min_speedup_c32)
    if not show:
        target_dir = workdir or (file_config.workdir if file_config else None)
        if target_dir is not None:  # as run's, before anything is measured (QA: a symlink loop, a
            from ..config.files import check_writable  # traceback; a link to nothing, its target made)

            check_writable(target_dir, "--workdir" if workdir else "workdir", folder=True)
        if file_config is not None:
            _same_as_stored(file_config, target, name, url)
        config, space, suite_dict = config_from_study(study, workdir or (file_config.workdir if file_config else None))
        # `--study NAME`: the stored profile's path as it reads now, as `run` checks it (QA, qa127:
        # confirm by name measured the candidates on an edited profile, against the old front)
        same_profile(study, config, study.user_attrs)
        if picks == DEFAULT_PICKS:
            names = [n for n in names if absent_pick(config.objectives, n) is None]
        try:
            candidates = confirm_candidates(study, names, near, max_candidates)
        except PickError as exc:
            fail(str(exc))
        # A setting measured by an older tuner that this one's rules refuse on the study's servers
        # (a rule added since) would fail every round, each after a server's load: said, not launched.
        refused = {c.trial: why for c in candidates if (why := refused_now(space, c.spec)) is not None}
        for c in candidates:
            if c.trial in refused:
                click.echo(f"warning: trial {c.trial} ({c.spec.label()}) is not re-measured: {refused[c.trial]}",
                           err=True)
        candidates = [c for c in candidates if c.trial not in refused]
        if not candidates:
            fail(f"--picks {picks}: no setting of study {name} to confirm; give other picks or trial numbers")
        backend = _backend(config, space, suite_dict)
        from ..bench.open_files import TunerOutOfFiles
        from ..engine.measurement import ServerOutOfThreads
        from ..server.launcher import stop_on_signals
        from .progress import RunView

        n, trials = len(candidates), ", ".join(f"trial {c.trial}" for c in candidates)
        click.echo(f"confirming {counted(n, 'setting')} ({trials}) and the baseline, {repeats} rounds: "
                   f"{repeats * (n + 1)} launches", err=True)
        # SIGTERM and SIGHUP as Ctrl-C: the notice at once, the server stopped, one line (QA: SIGTERM
        # exited 143 with nothing said; between two measurements it ended the command mid-write)
        # --json: stdout is the JSON alone, the progress goes to stderr (QA, qa192: `confirm --json | jq`
        # read the progress lines first, and failed)
        from rich.console import Console

        progress = Console(stderr=True) if as_json else None
        with RunView(progress, objectives=config.objectives, fate="repeat") as view, \
                stop_on_signals(on_signal=view.on_signal):
            def event(kind: str, info: dict) -> None:
                view.event(kind, info)
                if kind == "confirm_done":
                    who = "baseline" if info["candidate"] == "baseline" else f"trial {info['candidate']}"
                    view.line(f"round {info['round'] + 1}: {who}: {info['status']}"
                              + (f" ({info['failure_class']})" if info.get("failure_class") else ""))
            try:
                summary = run_confirmation(study, config, backend, candidates, repeats, on_event=event)
            except (KeyboardInterrupt, SystemExit) as exc:  # SystemExit: SIGTERM, SIGHUP (stop_on_signals)
                view.close()
                click.echo("interrupted: server stopped; the rounds measured so far are stored", err=True)
                sys.exit(130 if isinstance(exc, KeyboardInterrupt) else exc.code)
            except StorageUnavailable as exc:
                view.close()
                click.echo(f"error: {exc}; no server is left running; "
                           f"{journal_note(name, Path(config.workdir) / 'journal')}", err=True)
                sys.exit(STORAGE_EXIT)
            except StudyReplaced as exc:  # deleted under this command, perhaps made anew (as a run says it)
                view.close()
                click.echo(f"error: {exc}", err=True)
                sys.exit(1)
            except (TunerOutOfFiles, ServerOutOfThreads) as exc:  # ulimit -n, -u: the repeat is no setting's failure
                view.close()
                click.echo(f"error: {exc}; the rounds measured so far are stored", err=True)
                sys.exit(1)
        for line in summary.failed:
            click.echo(f"warning: failed: {line}", err=True)
    try:
        # after measuring, this run's confirmation (an earlier one decides the picks only when this
        # one completed fewer than two rounds, and this command says so by its exit)
        conf = load_confirmation(study, min_speedup_c32, run=None if show else summary.run)
    except PickError as exc:
        fail(str(exc))
    if conf is None:
        fail(f"study {study.study_name} has not been confirmed yet; run `tuner study confirm` without --show")
    # no interval without two rounds whose baseline and setting were both measured: the table, then exit 1
    if not show and (conf.rounds < 2 or not any(c.rounds >= 2 for c in conf.candidates)):
        if as_json:
            print_json(confirmation_data(conf))
        else:
            print_confirmation(conf)
        what = (f"completed {counted(conf.rounds, 'round')} of {repeats}" if conf.rounds < 2 else
                "measured no setting in two rounds with the baseline")  # (QA, qa192: a round hung, exit 0)
        fail(f"confirmation {conf.run} {what}: no interval to decide picks by (see the failures above); export "
             "picks by the study's own measurements")
    if as_json:
        print_json(confirmation_data(conf))
        return
    print_confirmation(conf)


def _same_as_stored(file_config, target: str, name: str, url: str) -> None:
    """Refuse, as `tuner study run` does, a study file that no longer describes the stored study (its
    dataset changed since `study create`, its suite, space or server args edited): confirm re-measures
    the stored study, so a file that differs would be silently set aside (QA: a dataset with a row added
    was confirmed against the 6 requests stored, exit 0, where `run` refused the same file). The
    fix names the file's way back and the storage's way on. A storage that cannot be read here is left
    to the measurement, which says so."""
    from ..config.space import SearchSpace
    from ..config.yamlfile import ConfigError
    from ..engine.facts import prepare
    from ..engine.study import StorageUnreadable, check_file_against_study
    from ..engine.urls import redact

    attention = prepare(file_config, SearchSpace.load(file_config.search_space))[2]
    try:
        check_file_against_study(file_config, target, attention)
    except StorageUnreadable:
        return
    except ConfigError as exc:
        what = exc.message.split("; ")[0]
        if not what.startswith("the study exists with a different"):
            raise  # another node's attention backend: its own fix stands
        raise ConfigError(target, "", f"study {name} in {redact(url)}: {what}: the file changed since the study "
                                      "was created, and confirm re-measures the study as stored; restore the "
                                      f"file, or confirm from storage alone: tuner study confirm --study {name} "
                                      f"--storage {redact(url)}") from None


def print_confirmation(conf) -> None:
    from ..results.confirmed import Interval

    heading(f"confirmation {conf.run}", f": {counted(conf.rounds, 'round')} interleaved with the baseline"
            + (f", {conf.failed} failed measurements" if conf.failed else "")
            + "; paired speedups over the same round's baseline, mean [95% interval]")
    cs = conf.concurrencies
    rows = []
    for c in sorted(conf.candidates, key=lambda c: c.trial):
        picked = [name for name, p in conf.picks.items() if p is c]
        s = c.spec
        rows.append((c.trial, f"{s.num_steps},{s.eagle_topk},{s.num_draft_tokens}", c.rounds,
                     c.single_speedup.text(3) if c.single_speedup else "",
                     *(_cell(c.speedups.get(k), c.versus_baseline(k)) for k in cs),
                     ", ".join(c.picks), ", ".join(picked)))
    print_table(["trial", "steps,topk,draft", "rounds", "single speedup", *(f"speedup C={k}" for k in cs),
                 "stood for", "confirmed pick"], rows)
    base = conf.baseline_values
    if base:
        parts = [f"{k}: {v.text(1)}" for k, v in base.items() if isinstance(v, Interval)]
        console.print("baseline over the rounds (tok/s): " + "; ".join(parts), markup=False, highlight=False)
    for name, why in conf.why.items():
        console.print(f"{name}: trial {conf.picks[name].trial} ({why})", markup=False, highlight=False)
    console.print("= : the interval includes 1.0 (not distinguishable from the baseline); - : loses to the "
                  "baseline beyond noise; + : gains beyond noise", markup=False, highlight=False)


def _cell(iv, verdict) -> str:
    if iv is None:
        return ""
    mark = {"within noise": " =", "loss": " -", "gain": " +"}.get(verdict or "", "")
    return iv.text(3) + mark
