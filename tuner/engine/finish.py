"""Finishing a trial in storage: figures before files, exactly once, and never lost.

How a measured trial ends is decided first, as data (:class:`Finish`: user attributes,
constraints, the objective values, PRUNED or FAIL), then :func:`record_finish` writes it in this order:

1. the local journal (:mod:`tuner.engine.journal`), before anything else;
2. the figures and the verdict, as the trial's user attributes;
3. the files: the suite's JSON and the artifacts (server log, suite JSON). A file that cannot be
   written (a full or read-only disk) is a warning stored on the trial (``file_warnings``) and
   shown, never a lost trial;
4. the constraints and the tell;
5. the journal entry is removed.

:func:`apply_finish` (steps 2-4) is idempotent, so a journal entry may be replayed any number of
times (:func:`replay_journal`, by the next worker of the study on the host):

* the trial still RUNNING: written and told, as above;
* already COMPLETE with the same status and values (an earlier attempt got through): nothing to do;
* finished otherwise (another worker failed it as dead during a database outage, its setting
  queued again) or gone (a storage restored from an older copy): a measurement is *re-homed*, added
  as a new COMPLETE (or PRUNED) trial with the same setting, values, attributes, constraints and
  stage estimates as intermediate values
  (``replayed_from``: the original number), which the queued retry then reuses instead of
  measuring again; anything else (a FAIL, e.g. a failed baseline) is dropped. When the setting was
  measured meanwhile (the retry, by the worker that failed the trial) or is being measured, the copy
  is a repeat and says so (``remeasure_of``: that trial), as a sampler's deliberate re-measurement
  does (:func:`tuner.engine.records.merge_repeats` averages them).

Why one module of over 400 lines: the finish a trial journals, the writes that store it and the
replay of a journal entry are one contract (what an entry holds, in which order it is written, and
what a replay may assume of an attempt that stopped between two writes); split, each part would
restate the others.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from ..config.study import DEFAULT_LOG_MAX_MB
from .asktell import tell
from .journal import Journal
from .killpoints import kill_point
from .patience import patient_backend
from .records import TRIAL_SETTING, finite_number
from .workers import Worker

#: What :func:`apply_finish` did.
TOLD, ALREADY, REHOMED, DROPPED = "told", "already", "rehomed", "dropped"
#: The attributes a trial gets before its launch that name its setting (tuner.engine.trial), and
#: a baseline's the hardware it runs on (tuner.engine.facts.HARDWARE_ATTR: a copy without it, the
#: study's baseline, would judge no node; QA qa155); a re-homed measurement carries them, and no mark
#: of the attempt (claim, launching, worker).
SETTING_ATTRS = (*TRIAL_SETTING, "hardware", "remeasured_for")  # baseline.REMEASURED_FOR
#: What :func:`replay_journal` does with an entry of an earlier study of the same name.
SET_ASIDE = "set aside"
#: What :func:`replay_journal` does with an entry that cannot be read (damaged since it was written).
UNREADABLE = "unreadable, set aside"
#: Optuna's system attribute of a named constraint (optuna/trial/_trial.py, ``Trial.set_constraint``).
CONSTRAINT_PREFIX = "constraints:"
#: The system attribute optuna-dashboard reads constraints from (Optuna's pre-5 list form).
LEGACY_CONSTRAINTS = "constraints"

Files = Callable[[], dict]


@dataclass
class Finish:
    """Everything that finishes one trial in storage, decided before anything is written."""

    study: str                 #: the Optuna study's name (``NAME``, ``NAME.baseline``)
    trial_id: int
    number: int
    params: dict
    distributions: dict        #: parameter name -> Optuna's JSON of its distribution
    user_attrs: dict
    system_attrs: dict         #: the constraints, named and in the legacy list form
    values: list[float] | None  #: None: the trial ends FAIL (or PRUNED)
    measured: bool             #: a measurement (re-homed if its trial was failed meanwhile)
    pruned: bool = False       #: the trial ends PRUNED (no values; tuner.engine.pruning)
    #: the trial's setting attributes (:data:`SETTING_ATTRS`), set on it before the launch: written
    #: only on a re-homed copy, which would otherwise have figures but no setting
    setting: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Finish":
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})

    @classmethod
    def readable(cls, d) -> "Finish | None":
        """:meth:`from_dict` of a journal entry's ``finish``; None when it is not what :meth:`to_dict`
        writes (a field missing, ``pruned`` and ``setting`` aside, or of another type): edited by
        hand since, yet JSON, which :meth:`tuner.engine.journal.Journal.unreadable` passes."""
        def whole(v) -> bool:
            return isinstance(v, int) and not isinstance(v, bool)

        def number(v) -> bool:
            return whole(v) or isinstance(v, float)

        ok = (isinstance(d, dict) and isinstance(d.get("study"), str) and whole(d.get("trial_id"))
              and whole(d.get("number")) and isinstance(d.get("measured"), bool)
              and all(isinstance(d.get(k), dict) for k in ("params", "distributions", "user_attrs", "system_attrs"))
              and all(isinstance(v, str) for v in d["distributions"].values()) and "values" in d
              and (d["values"] is None or isinstance(d["values"], list) and all(map(number, d["values"])))
              and isinstance(d.get("pruned", False), bool) and isinstance(d.get("setting", {}), dict))
        return cls.from_dict(d) if ok else None


def finish_of(study, trial, user_attrs: dict, values: list[float] | None, constraints: dict[str, float],
              measured: bool, pruned: bool = False) -> Finish:
    """The :class:`Finish` of a RUNNING ``trial`` (an ``optuna.Trial``) of ``study``; ``pruned``: it
    ends PRUNED (``values`` None)."""
    from optuna.distributions import distribution_to_json

    system = {f"{CONSTRAINT_PREFIX}{k}": float(v) for k, v in constraints.items()}
    if constraints:
        system[LEGACY_CONSTRAINTS] = [float(v) for v in constraints.values()]
    held = trial.user_attrs
    return Finish(study.study_name, trial._trial_id, trial.number, dict(trial.params),
                  {k: distribution_to_json(d) for k, d in trial.distributions.items()}, dict(user_attrs),
                  system, None if values is None or pruned else [float(v) for v in values], measured, pruned,
                  {k: held[k] for k in SETTING_ATTRS if k in held})


@dataclass
class Recorded:
    outcome: str               #: TOLD, ALREADY, REHOMED or DROPPED
    warnings: list[str]        #: files that could not be written, the journal included
    rehomed_as: int | None = None  #: REHOMED: the number of the trial that holds the measurement now


def record_finish(study, finish: Finish, *, journal: Journal | None, files: Files | None = None,
                  suite: dict | None = None, file_paths: dict | None = None, storage: str = "",
                  kind: str = "", uid: str | None = None, held: Path | None = None,
                  before_store: Callable[[], None] | None = None) -> Recorded:
    """Journal ``finish``, then :func:`apply_finish` it, then drop the journal entry (see the module
    docstring). ``suite`` (the suite's JSON) and ``file_paths`` go into the entry so a replay can
    write the files; ``uid``: the study's id (:data:`tuner.engine.study.UID_ATTR`, of ``NAME`` for
    its companions too), so a replay never stores it into another study of the same name; ``kind``
    prefixes the kill points (``"baseline."``); ``held``: the entry :func:`journal_finish` journaled for
    this trial, removed with this one's (its verdict was held back and is decided by ``finish``).
    ``before_store``: called once the entry is written, before the first write to the storage;
    whatever it raises leaves the entry (and ``held``) in the journal and nothing stored (the
    worker's check that its study is still the one it opened)."""
    warnings, entry = journal_finish(finish, journal=journal, suite=suite, file_paths=file_paths,
                                     storage=storage, uid=uid)
    kill_point(f"{kind}journaled")
    if before_store is not None:
        before_store()
    outcome, file_warnings, rehomed_as = _apply(study, finish, files, kind, warnings)
    kill_point(f"{kind}told")
    for done in (entry, held):
        if done is not None and journal is not None:
            journal.remove(done)
    return Recorded(outcome, [*warnings, *file_warnings], rehomed_as)


def journal_finish(finish: Finish, *, journal: Journal | None, suite: dict | None = None,
                   file_paths: dict | None = None, storage: str = "",
                   uid: str | None = None) -> tuple[list[str], Path | None]:
    """Step 1 of :func:`record_finish` alone: ``finish`` journaled (its warnings, its entry, None when
    not journaled). A trial whose verdict waits for something after its server stops (a baseline
    suspected of a hiccup, :mod:`tuner.engine.suspect`) is journaled so before its server stops: a
    worker that dies before the verdict leaves this ``finish`` for the next run to store
    (:func:`replay_journal`), the measurement never lost."""
    warnings: list[str] = []
    entry = None
    if journal is not None:
        try:
            entry = journal.write({"storage": storage, "study_uid": uid, "worker": Worker().as_dict(),
                                   "finish": finish.to_dict(), "files": {**(file_paths or {}), "suite": suite}},
                                  stem=f"{finish.study}-{finish.number}")
        except OSError as exc:
            warnings.append(f"not journaled ({journal.folder}: {exc.strerror or exc}); stored directly")
        else:
            refused = journal.refused  # the workdir's disk refused it: in the fallback folder
            if refused is not None:
                warnings.append(f"not journaled in {journal.folder} ({refused.strerror or refused}); "
                                f"journaled in {entry.parent} instead")
    return warnings, entry


def apply_finish(study, finish: Finish, files: Files | None = None, kind: str = "",
                 warnings: list[str] | None = None) -> tuple[str, list[str]]:
    """Write ``finish`` into ``study`` (idempotent; see the module docstring). Returns what was
    done and the warnings of the files step."""
    outcome, notes, _ = _apply(study, finish, files, kind, warnings)
    return outcome, notes


def _apply(study, finish: Finish, files: Files | None, kind: str,
           warnings: list[str] | None) -> tuple[str, list[str], int | None]:
    """:func:`apply_finish`, and the number of the re-homed copy (None unless REHOMED)."""
    from optuna.exceptions import UpdateFinishedTrialError
    from optuna.trial import TrialState

    storage = study._storage
    trial = _stored_trial(study, finish)
    if trial is not None and trial.state == TrialState.RUNNING:
        try:
            set_attrs(storage, finish.trial_id, finish.user_attrs)
            kill_point(f"{kind}figures")
            extra = files() if files else {}
            notes = [*(warnings or []), *extra.pop("file_warnings", [])]
            set_attrs(storage, finish.trial_id, {**extra, **({"file_warnings": notes} if notes else {})})
            kill_point(f"{kind}files")
            set_attrs(storage, finish.trial_id, {}, finish.system_attrs)
            if finish.pruned:
                tell(study, finish.number, state=TrialState.PRUNED)
            elif finish.values is None:
                tell(study, finish.number, state=TrialState.FAIL)
            else:
                tell(study, finish.number, finish.values)
            return TOLD, notes[len(warnings or []):], None
        except (UpdateFinishedTrialError, ValueError, KeyError):
            # Finished by someone else meanwhile (another worker judged it dead), or gone (Optuna's
            # KeyError 'Record does not exist.': a commit the database acknowledged, then forgot,
            # lost the trial between two of these writes): see below, a gone trial's measurement
            # is re-homed. One still RUNNING goes out as it came.
            trial = _stored_trial(study, finish)
            if trial is not None and trial.state == TrialState.RUNNING:
                raise
    done = TrialState.PRUNED if finish.pruned else TrialState.COMPLETE
    if trial is not None and trial.state == done and _same(trial, finish):
        return ALREADY, [], None
    if not finish.measured or (finish.values is None and not finish.pruned):
        return DROPPED, [], None
    return (REHOMED, *_rehome(study, _with_stored_setting(finish, trial), files, warnings or []))


def _with_stored_setting(finish: Finish, trial) -> Finish:
    """``finish`` with the setting attributes (:data:`SETTING_ATTRS`) its journal entry lacks taken
    from its trial as stored (``trial``: failed meanwhile, it keeps them; None: gone). A tuner before
    2026-12-04 journaled no setting: its entry, replayed by this one after another worker failed the
    trial, was re-homed with figures and no setting, 'unreadable: measured, but its effective setting
    is not recorded', its measurement off the front (QA, qa173: a worker of 2026-12-01 killed after
    its journal entry, the entry replayed by this tuner). The entry's own attributes win."""
    if trial is None:
        return finish
    import dataclasses

    stored = {k: trial.user_attrs[k] for k in SETTING_ATTRS
              if k not in finish.setting and trial.user_attrs.get(k) is not None}
    return dataclasses.replace(finish, setting={**stored, **finish.setting}) if stored else finish


def set_attrs(storage, trial_id: int, user: dict, system: dict | None = None) -> None:
    """Write a trial's attributes, in one transaction on the tuner's own storage
    (:meth:`PatientRDBStorage.set_trial_attrs <tuner.engine.patience.PatientRDBStorage.set_trial_attrs>`),
    one by one on any other Optuna storage. Raises what Optuna's ``set_trial_user_attr`` raises."""
    if not user and not system:
        return  # no transaction for nothing (most trials have no file warnings, some no constraints)
    patient = patient_backend(storage)
    if patient is not None:
        patient.set_trial_attrs(trial_id, user, system)
        return
    for k, v in user.items():
        storage.set_trial_user_attr(trial_id, k, v)
    for k, v in (system or {}).items():
        storage.set_trial_system_attr(trial_id, k, v)


def _stored_trial(study, finish: Finish):
    """The trial ``finish`` is for, as stored now; None when the storage no longer has it."""
    storage = study._storage
    try:
        # The number's id may come from the study's cache (Optuna's _CachedStorage) while the
        # database no longer has the trial (an SQLite file put back from an older copy): the
        # trial is gone too when reading it says so
        trial_id = storage.get_trial_id_from_study_id_trial_number(study._study_id, finish.number)
        return storage.get_trial(trial_id) if trial_id == finish.trial_id else None
    except KeyError:
        return None


def _same(trial, finish: Finish) -> bool:
    return (trial.user_attrs.get("status") == finish.user_attrs.get("status")
            and list(trial.values or []) == list(finish.values or []))


def _rehome(study, finish: Finish, files: Files | None, warnings: list[str]) -> tuple[list[str], int]:
    """Add ``finish``'s measurement as a new trial (see the module docstring); its file warnings
    and its number. As Optuna's ``Study.add_trial`` (optuna/study/study.py), which returns no number."""
    import optuna
    from optuna.distributions import json_to_distribution
    from optuna.trial import TrialState

    from .pruning import STAGES_ATTR, stage_intermediate_values

    extra = files() if files else {}
    notes = [*warnings, *extra.pop("file_warnings", [])]
    attrs = {**finish.setting, **finish.user_attrs, **extra, "replayed_from": finish.number,
             **({"file_warnings": notes} if notes else {})}
    first = None if finish.pruned else _first_reading(study, finish)
    if first is not None:
        attrs["remeasure_of"] = first
    copy = optuna.trial.create_trial(
        state=TrialState.PRUNED if finish.pruned else TrialState.COMPLETE, params=finish.params,
        distributions={k: json_to_distribution(v) for k, v in finish.distributions.items()},
        values=finish.values, user_attrs=attrs, system_attrs=finish.system_attrs,
        # the stage estimates the original trial held as intermediate values (optuna-dashboard's)
        intermediate_values=stage_intermediate_values(attrs.get(STAGES_ATTR)))
    copy._validate()
    if finish.values is not None and len(study.directions) != len(finish.values):
        raise ValueError(f"a measurement of {len(finish.values)} values for a study of "
                         f"{len(study.directions)} objectives")
    trial_id = study._storage.create_new_trial(study._study_id, template_trial=copy)
    return notes[len(warnings):], study._storage.get_trial_number_from_id(trial_id)


def _first_reading(study, finish: Finish) -> int | None:
    """The trial that measured ``finish``'s effective setting first: a measured COMPLETE one (the
    queued retry, measured while this worker stood still; or its own trial, completed by another
    worker with other values), or one measuring it now (its claim, tuner.engine.workers: it finishes
    first in trial order). None: the re-homed copy is the setting's first reading (the retry, still
    queued, will reuse it)."""
    from optuna.trial import TrialState

    from .records import MEASURED

    key = finish.user_attrs.get("effective_key") or finish.setting.get("effective_key")
    if not key:
        return None
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.RUNNING)):
        if t.user_attrs.get("effective_key") != key:  # its own trial counts: completed by another worker
            continue
        if t.state == TrialState.RUNNING and t.user_attrs.get("claim") is not None:
            return t.number
        if t.state == TrialState.COMPLETE and t.user_attrs.get("status") == MEASURED:
            return t.number
    return None


def write_files(study, trial_id: int, suite, suite_path: str | None, log_path: str | None, workdir,
                artifacts: bool = True, log_max_mb: float = DEFAULT_LOG_MAX_MB) -> dict:
    """Write the suite's JSON (a ``SuiteResult`` or its dict) to ``suite_path`` unless it is there,
    and (``artifacts``) attach it and the server log (a copy capped at ``log_max_mb``: the study's
    ``server.log_max_mb``) as Optuna artifacts. Returns the attributes to
    store: the warnings of what failed (``file_warnings``), and ``suite_json: None`` when it was not
    written."""
    from .artifacts import store_trial_artifacts

    out: dict = {}
    warnings: list[str] = []
    if suite is not None and suite_path and not Path(suite_path).exists():
        try:
            if isinstance(suite, dict):
                from ..bench.result import SuiteResult

                suite = SuiteResult.from_dict(suite)
            # The trial's folder may have gone while it ran (someone deleted trials/ to free
            # space): made again, as the journal makes its own, so its suite JSON is kept (QA, qa96)
            Path(suite_path).parent.mkdir(parents=True, exist_ok=True)
            suite.save(suite_path)
        except OSError as exc:
            warnings.append(f"suite JSON not written ({suite_path}: {exc.strerror or exc})")
            out["suite_json"] = None
        except (ValueError, TypeError, KeyError) as exc:  # a journaled suite damaged since: no result
            warnings.append(f"suite JSON not written ({suite_path}: the journaled suite result does not "
                            f"read: {exc})")
            out["suite_json"] = None
    files = [p for p in (log_path, suite_path) if p] if artifacts else []
    if files:
        try:
            store_trial_artifacts(study, trial_id, files, workdir,
                                  caps={str(log_path): log_max_mb} if log_path else None)
        except (OSError, KeyError) as exc:
            reason = getattr(exc, "strerror", None) or exc
            warnings.append(f"artifacts not stored (in {Path(workdir) / 'artifacts'}: {reason})")
    if warnings:
        out["file_warnings"] = warnings
    return out


def replay_journal(study, workdir) -> list[tuple[str, int, str]]:
    """Replay every entry of ``study`` and its companions (``NAME.baseline``, ``NAME.confirm``)
    left in the journal under ``workdir`` by a worker that is no longer alive on this host; returns
    ``(study, trial number, outcome)`` of each.

    An entry of a live worker, of another host, or written against another storage is left alone.
    An entry of an earlier study of the same name (deleted since, its id not this study's) is never
    stored here: it is moved to ``journal/set-aside/`` (:data:`SET_ASIDE`), kept, not replayed.
    An entry another worker replays at the same moment is left to it (:meth:`Journal.taken`).
    An entry that cannot be read (damaged since it was written: :meth:`Journal.unreadable`) is moved
    to ``journal/set-aside/`` too, as :data:`UNREADABLE`: its measurement cannot be stored."""
    import optuna

    from .storage import storage_label
    from .study import UID_ATTR

    journal = Journal(workdir)
    label = storage_label(study._storage)
    if not label:
        return []  # a storage in memory has no journal (and outlives no worker)
    studies = {study.study_name: study}
    uid = study.user_attrs.get(UID_ATTR)
    done = []
    for path, name, number in journal.unreadable(study.study_name):
        # damaged since it was written (entries are written whole): nothing in it can be stored; moved
        # aside, kept for whoever wants to look, and said once
        if journal.set_aside(path) is not None:
            done.append((name, number, UNREADABLE))
    for path, entry in journal.entries(study.study_name):
        finish = Finish.readable(entry["finish"])
        if entry.get("storage") != label or Worker.alive(entry.get("worker")) is not False:
            continue
        if finish is None:
            # JSON, but no finish this tuner wrote (edited by hand since): nothing in it can be
            # stored, as for an entry that does not read at all (QA, qa191: an entry whose finish
            # lacked trial_id ended every later run at its start in TypeError, nothing measured)
            if journal.set_aside(path) is not None:
                done.append(_named_by_file(path, entry["finish"]))
            continue
        if entry.get("study_uid") not in (None, uid):  # None: written before studies had ids
            journal.set_aside(path)
            done.append((finish.study, finish.number, SET_ASIDE))
            continue
        if finish.study not in studies:
            try:
                studies[finish.study] = optuna.load_study(study_name=finish.study, storage=study._storage)
            except KeyError:
                continue  # deleted since: nothing to write into
        target = studies[finish.study]
        paths = entry.get("files")
        paths = paths if isinstance(paths, dict) else {}  # files edited away: the figures are still stored

        def files(finish=finish, target=target, paths=paths) -> dict:
            # a path or a cap edited into something else is none (the figures are stored all the same)
            text = {k: v if isinstance(v, str) else None for k, v in paths.items() if k in ("suite_json", "log")}
            cap = paths.get("log_max_mb", DEFAULT_LOG_MAX_MB)
            cap = cap if finite_number(cap) and cap >= 0 else DEFAULT_LOG_MAX_MB
            return write_files(target, finish.trial_id, paths.get("suite"), text.get("suite_json"),
                               text.get("log"), workdir, log_max_mb=cap)

        with journal.taken(path) as mine:  # one replayer per entry: a measurement re-homed once
            if not mine:
                continue
            outcome, _ = apply_finish(target, finish, files)
            journal.remove(path)
        done.append((finish.study, finish.number, outcome))
    return done


def _named_by_file(path: Path, finish: dict) -> tuple[str, int, str]:
    """``(study, trial number, UNREADABLE)`` of a damaged entry: its number from its file's name
    when the entry's own is damaged too (``<study>-<number>-<random>.json``, Journal.write's)."""
    number = finish.get("number")
    if not isinstance(number, int) or isinstance(number, bool):
        part = path.name.rsplit("-", 2)[-2] if path.name.count("-") >= 2 else ""
        number = int(part) if part.isascii() and part.isdigit() else -1
    return finish["study"], number, UNREADABLE
