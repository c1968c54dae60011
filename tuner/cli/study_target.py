"""Which study a command names, and where it lives: the study file or ``--study NAME``, and the
storage from ``--storage``, the study file, ``$TUNER_STORAGE`` or ``NAME.db`` (here, or in ``studies/``:
where a study file keeps its database by default, beside the file), each named in an error. Shared by
every ``tuner study`` command."""

from __future__ import annotations

from pathlib import Path

import click

from ..config.paths import sqlite_url
from ..config.study import STORAGE_ENV_VAR, StudyConfig, load_study, sqlite_storage_problem
from ..config.yamlfile import ConfigError
from ..engine.storage import resolve_url
from ..engine.urls import EXPECTED_URL, redact, scheme_problem

storage_option = click.option(
    "--storage", default=None, metavar="URL",
    help="Optuna storage URL, or ${VAR}. Default: the study file's, else $TUNER_STORAGE, else "
         "NAME.db here or in studies/.")

#: Where a study's default database is looked for without a study file or a storage: beside a study
#: file in this folder (``tuner study init`` writes one here) or in ``studies/`` (the repository's).
LOCAL_DB_DIRS = (Path("."), Path("studies"))


def in_storage(config: StudyConfig, url: str) -> StudyConfig:
    """``config`` judged in ``url``, the storage the command uses (:func:`resolve_target`'s: ``--storage``
    wins over the file's ``storage``): the checks that read a stored study (is it an older tuner's,
    whose launches keep their backend?) read it there, not in the file's (QA: an older study moved to
    the ``--storage`` database had its tree seed judged as a new study's, and `create` refused it)."""
    return config.model_copy(update={"storage": url})


def resolve_target(target: str | None, storage: str | None, study_name: str | None = None,
                   reads_storage: bool = False) -> tuple[str, str, StudyConfig | None]:
    """(study name, storage URL, study config if a file was given) from the command line. Raises
    :class:`ConfigError` naming ``--storage``, the study file's ``storage`` or the variable that gave
    an SQLite URL that cannot be opened here (:func:`tuner.config.study.sqlite_storage_problem`).

    ``reads_storage``: the command reads the study from its storage alone (status, pareto, export,
    report, compare, copy, delete), which keeps the suite and space the study measured; a file the study file names
    that is gone or changed since (a dataset left on the GPU node, a suite edited) is then a warning
    on stderr, not an error (QA: `status study.yaml` failed once the dataset was moved away, though
    `--study NAME` read the study). A fault in the study file itself is still an error."""
    from ..config.files import unusable_path

    # An empty argument or --study (a script's unset "$STUDY") says so, as `launch ''` does, never
    # read as left out (QA fuzz: `status ''`, `run --study ''` printed click's usage block, four
    # lines, "give a study file, or a study NAME", naming nothing empty).
    if target is not None and not target.strip():
        raise ConfigError("<study file>", "", "empty; give the study's YAML file"
                          + (" or the study's name" if reads_storage else ""))
    if study_name is not None and not study_name.strip():
        raise ConfigError("--study", "", "is empty: give the study's name, or leave --study out and give its file")
    config = None
    problem = unusable_path(target) if target else None
    if problem:  # no file can be read there (pathlib would raise), and no study has such a name
        raise ConfigError(target, "", f"is no usable path ({problem}); give the study file or the study's name")
    if target and (target.endswith((".yaml", ".yml")) or Path(target).is_file()):
        try:
            config = load_study(target)
        except ConfigError as exc:
            if not reads_storage:
                raise _with_stored_way(exc, target, storage) from None
            config = load_study(target, referenced=False)  # raises for a fault in the file itself
            click.echo(f"warning: {exc}; the study is read from its storage, which holds the suite and space it "
                       "measured", err=True)
        name = config.name
        url = storage if storage is not None else config.storage  # an empty --storage is refused, not skipped
        if study_name and study_name != name:
            raise ConfigError("--study", study_name, f"the study file {target} is study {name}: give the file or "
                              "--study NAME (with --storage), not both")
    else:
        name = study_name or target
        if not name:
            raise click.UsageError("give a study file, or a study NAME (--study NAME) with --storage URL")
        url = storage
    if url is None:
        import os

        if not os.environ.get("TUNER_STORAGE"):
            url = sqlite_url(_local_db(target or name, name).resolve())
    # named here, where it is known whether the flag, the file or a variable gave the URL
    if storage is None and config is not None and url not in (None, f"${{{STORAGE_ENV_VAR}}}"):
        where, key = target, "storage"  # the study file's `storage:`, a `${VAR}` in it too (not the default)
    elif url is None or url.startswith("$"):
        where, key = "$" + (url or "TUNER_STORAGE").strip("${}"), ""
    else:
        where, key = "--storage", ""
    return name, storage_url(url, where, key), config


#: The study file's keys whose files the storage keeps the contents of (the suite, with its dataset's
#: drawn requests and its prompt files, and the search space): a study stored in its storage runs by
#: name without them (tuner.engine.study stores them at create). A profile or landscape is read from
#: its path at each launch, so it is not among them.
STORED_KEYS = ("bench.suite", "search_space")


def _with_stored_way(exc: ConfigError, target: str, storage: str | None) -> ConfigError:
    """``exc`` (a study file's suite or space, or a file they name, not found: a dataset left on
    another node) with the way on when the study is in its storage already: it holds the
    suite and space it was created with, so ``--study NAME`` runs it without them (QA, qa207: a
    second node's ``run study.yaml`` said only ``d.jsonl not found``). ``exc`` as it is otherwise: a
    fault in the study file itself, in a file the storage does not keep, no such study, or a storage
    that cannot be read now."""
    study_file = str(_resolved_or(target))
    if exc.source == study_file and not exc.key.startswith(STORED_KEYS):
        return exc  # the study file's own key (or a profile, a landscape): the plain fix is the way on
    if "not found" not in exc.message:
        # a file that is there but wrong (an edit) is fixed in the file: the stored suite would hide it
        # ("not found": the words of every missing file's line, yamlfile.check_regular_file's and dataset.py's)
        return exc
    try:
        config = load_study(target, referenced=False)
        written = storage if storage is not None else config.storage
        url = storage_url(written, "--storage")
        if not _stored(config.name, url):
            return exc
    except Exception:  # noqa: BLE001 - an unreadable storage or file: the plain error is the one to say
        return exc
    shown = f"'{written}'" if written.startswith("$") else redact(url)
    command = click.get_current_context(silent=True)
    verb = "confirm" if command is not None and command.info_name == "confirm" else "run"
    return ConfigError(exc.source, exc.key, f"{exc.message}; study {config.name} is in its storage already, with "
                       f"the suite and space it was created with: to {verb} that one without this file (on another "
                       f"node), give its name: tuner study {verb} --study {config.name} --storage {shown}")


def _resolved_or(target: str) -> Path:
    """``target`` made absolute as :func:`tuner.config.study.load_study` names it in its errors."""
    try:
        return Path(target).resolve()
    except (OSError, RuntimeError):
        return Path(target)


def _stored(name: str, url: str) -> bool:
    """Whether the storage at ``url`` holds study ``name`` (read only: nothing is created)."""
    from ..engine.storage import open_storage
    from ..engine.study import study_exists

    return study_exists(name, open_storage(url, create=False))


def _local_db(target: str, name: str) -> Path:
    """``NAME.db`` here or in ``studies/``: the one that exists; none, or both, is a :class:`ConfigError`
    naming ``target`` (two would be two studies of one name: the user says which)."""
    found = [d / f"{name}.db" for d in LOCAL_DB_DIRS if (d / f"{name}.db").is_file()]
    if not found:
        looked = " nor ".join(str(d / f"{name}.db") for d in LOCAL_DB_DIRS)
        raise ConfigError(target, "", f"no such study file, and no storage to look in: give the study file, or "
                          f"--storage URL, or set $TUNER_STORAGE (neither {looked} exists)")
    if len(found) > 1:
        raise ConfigError(target, "", f"both {found[0]} and {found[1]} exist: give the study file, or --storage "
                          f"sqlite:///{found[0]} (or the other)")
    return found[0]


def storage_url(url: str | None, source: str, key: str = "") -> str:
    """``url`` resolved (:func:`tuner.engine.urls.resolve_url`); a scheme the tuner cannot use
    (:func:`tuner.engine.urls.scheme_problem`), or an SQLite URL that cannot be opened
    here (:func:`tuner.config.study.sqlite_storage_problem`: one no study can live in, or whose folder
    does not exist) is a :class:`ConfigError` naming ``source`` and ``key`` (the flag, or the study
    file and its ``storage``), before anything is opened."""
    # an unset variable the environment gave ($TUNER_STORAGE) is said as the flag that would replace it;
    # anything else as where it came from (QA: the study file's `storage: ""`, and its `storage: ${VAR}`
    # with VAR unset, were said as --storage's)
    resolved = resolve_url(url, "--storage" if source.startswith("$") else source)
    # a scheme the tuner cannot use (mistyped, another database, no driver) is bad input, not an outage
    problem = unreadable_url(resolved) or scheme_problem(resolved) or sqlite_storage_problem(resolved)
    if problem:
        raise ConfigError(source, key, problem)
    return resolved


def unreadable_url(url: str) -> str | None:
    """Why SQLAlchemy cannot read ``url`` as a storage URL, or None: a text its URL parser refuses
    (``pos tgresql://...``), or a port that is no TCP port, not digits (``host:5432x``, a ``[::1``
    left open) or outside 1-65535. QA: the non-digit port was a traceback (SQLAlchemy's ``int()`` of
    it, from ``make_url``) from every command, exit 1; the others "run it again once the storage
    answers", as for an outage. The URL is named without its password (:func:`tuner.engine.urls.redact`)."""
    from ..engine.urls import connect_url

    if url.partition("://")[0].split("+", 1)[0] == "sqlite":
        return None  # a file path: sqlite_storage_problem judges it
    try:
        port = connect_url(url).port
    except Exception:  # noqa: BLE001 - SQLAlchemy's ArgumentError, or int()'s ValueError for the port
        # the line scheme_problem gives for a URL it cannot parse (tuner.engine.urls), one wording
        return scheme_problem(url) or f"{redact(url)!r} is no storage URL: SQLAlchemy cannot read it; {EXPECTED_URL}"
    if port is not None and not 1 <= port <= 65535:
        return f"{redact(url)!r}: port {port} is no TCP port; give one from 1 to 65535 (PostgreSQL's is 5432)"
    return None


def check_storage_writable(url: str, target: str | None, storage: str | None) -> None:
    """An SQLite storage that ``create`` or ``run`` would make must be makeable: a missing database
    file's folder writable, else :class:`ConfigError` naming ``--storage`` or the study file's
    ``storage`` and the fix, before anything is written (QA: create said only "cannot open:
    OperationalError: unable to open database file"; run "fail storage: ... ConfigError: ...",
    exit 1). An existing file must be writable by this user, and its folder too (SQLite writes its
    journal there). Other storages are the storage's own business."""
    from ..config.files import sqlite_file_refused
    from ..engine.urls import sqlite_path

    path = sqlite_path(url)
    if path is None:
        return
    source, key = ("--storage", "") if storage is not None else (target or "$TUNER_STORAGE",
                                                                  "storage" if target else "")
    refused = sqlite_file_refused(path)
    if refused is not None:
        raise ConfigError(source, key, f"{redact(url)}: {refused}")


def say_fact_conflicts(config: StudyConfig, source) -> None:
    """One warning on stderr per fact the study's ``server.facts`` states otherwise than this node
    reads it (a simulator profile, a ``config.json``, ``nvidia-smi``): the read fact decides the
    attention backend, as :mod:`tuner.engine.facts` says, and the stated one is left unused (QA:
    ``gpu_compute_capability: "10.0"`` on a sim study of a 9.0 profile was dropped without a word;
    only ``tuner doctor`` said so). A ``config.json`` that cannot be read is the preflight's."""
    from ..config.names import shown
    from ..engine.facts import gather_facts

    for conflict in gather_facts(config.server, unreadable=lambda line: None).conflicts:
        click.echo(shown(f"warning: {source}: server.facts: {conflict}; the latter is used (the attention "
                         f"backend is decided by it): correct server.facts or remove the key"), err=True)
