"""``tuner doctor STUDY.yaml``: preflight checks on this node, one line each; exit 1 if any fails."""

from __future__ import annotations

import click


@click.command()
@click.argument("study_file", type=click.Path(dir_okay=False))
def doctor(study_file) -> None:
    """Check a study before the night: the server interpreter and SGLang's version, SGLang's own
    argument handling of the study's command lines, the model and GPU facts and attention backend,
    the GPUs, the model files, the port, the storage, the workdir and the objectives.

    One line per check: pass, warn, or fail with the fix. Exit 0 when nothing fails, else 1.
    Writes nothing (the storage is checked in a rolled-back transaction).
    """
    from ..config.study import load_study
    from ..config.yamlfile import ConfigError
    from ..engine.doctor import FAIL, run_checks

    try:
        config = load_study(study_file)
    except ConfigError as exc:
        from ..engine.urls import scrub

        line = f"fail  study file: {exc}"
        click.echo(scrub(line, study_file) if "@" in study_file else line)  # a storage URL given by mistake
        raise click.exceptions.Exit(1) from None
    _refuse_unreadable_storage(config)
    checks = run_checks(config, source=study_file)
    for check in checks:
        click.echo(check.line())
    failed = [c for c in checks if c.status == FAIL]
    click.echo(f"{len(checks) - len(failed)} of {len(checks)} checks pass" if not failed
               else f"{len(failed)} of {len(checks)} checks fail")
    if failed:
        raise click.exceptions.Exit(1)


def _refuse_unreadable_storage(config) -> None:
    """A storage URL SQLAlchemy cannot read (:func:`tuner.cli.study_target.unreadable_url`) fails the
    doctor at once, one line, exit 1: the checks that read the storage would each raise on it (QA:
    ``postgresql://u:pw@host:5432x/db`` was a traceback). An unset variable, a scheme the tuner cannot
    use: the storage check's own lines."""
    from ..config.yamlfile import ConfigError
    from ..engine.urls import resolve_url
    from .study_target import unreadable_url

    try:
        url = resolve_url(config.storage, "storage")
    except ConfigError:
        return
    problem = unreadable_url(url)
    if problem:
        click.echo(f"fail  storage: {problem}")
        raise click.exceptions.Exit(1)
