"""Creating and opening studies: the study's config, space and suite live in its storage.

Contracts:

* Trial state lives in Optuna storage only (study config, space and suite in the study's user
  attributes), so any worker given the storage URL and study name can continue the study.
* :func:`create_study` is safe to call from several workers at once: creating a study that exists
  with the same config is a no-op; a different config is a :class:`ConfigError`, except a larger
  ``budget.n_trials`` (or a changed ``budget.timeout``), which extends the study: the budget is
  how long to go on, not what a trial measures. A study is ready once its creator has written
  :data:`READY_ATTR`, last.
* Metric names (optuna-dashboard's axis and column labels) are set on the study (its objectives)
  and on the baseline study (the absolute figures behind them, which its trial is told);
  :func:`ensure_metric_names` adds them to studies created before they existed.
* The stored config has no storage URL (it may hold a password) and no local paths that matter.
* A creation cut short (Ctrl-C, a storage outage after Optuna committed the study's row) is
  finished by the next create when nothing stored differs from the study file.

Why one module of over 400 lines: creating, comparing, extending and opening a study all read and
write the same stored attributes (:data:`CONFIG_ATTR`, :data:`READY_ATTR` ...); split, each part
would import the others' private helpers.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any, Callable

from .. import __version__
from ..config.dataset import without_drop_counts
from ..config.space import SearchSpace
from ..config.study import BASELINE_SUFFIX, StudyConfig, check_added_budget, companion_of, study_from_dict
from ..config.yamlfile import ConfigError
from ..sglang.rules import SpecConfig
from .asktell import utc_now
from .orphan_rows import drop_orphan_rows
from .patience import patient_backend
from .storage import holds_tables, open_storage, redact
from .stored_forms import (changed_shipped_suite, current_config, current_space, current_suite,
                           newer_tuner_key, newer_tuner_line)

CONFIG_ATTR, SPACE_ATTR, SUITE_ATTR = "tuner_config", "tuner_space", "tuner_suite"
WORKLOAD_ATTR = "tuner_workload"  #: the suite's request statistics (tuner.bench.workload)
READY_ATTR = "created_at"
#: A random id given to a study when it is created: a journal entry carries its study's, so an
#: entry left by a study deleted since is never stored into a new study of the same name
#: (:func:`tuner.engine.finish.replay_journal`). A copy gets an id of its own.
UID_ATTR = "tuner_uid"
VERSION_ATTR, OBJECTIVES_ATTR = "tuner_version", "objectives"
#: The simulator profile the study's measurements come from (``server.model.profile`` or
#: ``server.sim.profile``), by content: the study file stores only its name or path, and a profile
#: file edited between runs would give the trials after it another performance model.
PROFILE_ATTR = "tuner_profile"


def stored_config(config: StudyConfig) -> dict:
    """The study config as stored: no storage URL (it may hold a password), portable paths."""
    data = config.model_dump(mode="json")
    data["storage"] = None
    data["workdir"] = None
    return data


def _space_and_suite(config: StudyConfig) -> tuple[dict, dict]:
    from ..config.space import load_space
    from ..config.suite import load_suite

    space = load_space(config.search_space).model_dump(mode="json")
    suite = load_suite(config.bench.suite).model_dump(mode="json")
    return space, suite


def profile_of(config: StudyConfig) -> dict | None:
    """The content of the simulator profile ``config``'s measurements come from (backend ``model``
    with a profile, or ``sim``), as loaded; None for SGLang or a landscape table (pinned by its
    SHA-256 in the config itself). :class:`ConfigError` for a profile that does not load."""
    from ..sim.profile import load_profile

    server = config.server
    name = (server.model.profile if server.backend == "model" else
            server.sim.profile if server.backend == "sim" else None)
    return None if name is None else load_profile(name).model_dump(mode="json")


def same_profile(study, config: StudyConfig, attrs: dict) -> None:
    """:class:`ConfigError` when the profile ``config`` names now holds another model than the one
    study ``study`` stored (:data:`PROFILE_ATTR`, ``attrs`` its attributes) at its creation: the
    trials measured so far and those to come would sit on one front from two performance models
    (QA: a profile file edited between runs was measured on, against the old baseline). A study
    stored none (an older tuner's) is not compared."""
    from ..sim.profile import Profile

    have = attrs.get(PROFILE_ATTR)
    if not isinstance(have, dict):
        return
    try:
        wanted = profile_of(config)
    except ConfigError:
        return  # a profile that does not load here is refused where it is loaded, as before
    try:  # read as this tuner reads it: a key added to the profile's schema since counts as its default
        have = Profile.model_validate(have).model_dump(mode="json")
    except ValueError:
        pass
    if wanted is not None and have != wanted:
        key = "server.model.profile" if config.server.backend == "model" else "server.sim.profile"
        named = getattr(config.server.model if config.server.backend == "model" else config.server.sim, "profile")
        raise ConfigError(named, key, f"changed since study {study.study_name} was created "
                          f"({_first_difference(have, wanted)} differs); its trials were measured on the "
                          f"profile as it was: put that back, or create a new study for this one")


def seed_trials(config: StudyConfig, space: SearchSpace) -> list[SpecConfig]:
    """The default seed trials (tuner.engine.seeds), then the study file's seeds; in-range only. On
    a landscape table (``server.model.landscape``), the default seeds it does not list are left out:
    the table holds a grid measured on a node, and the default search keeps to it (QA, qa131: on a
    coarse grid three of the four seeds were settings it never measured, three failed launches)."""
    from .seeds import DEFAULT_SEED_TRIALS

    seeds = list(DEFAULT_SEED_TRIALS) if config.default_seed_trials else []
    model = config.server.model if config.server.backend == "model" else None
    if seeds and model is not None and model.landscape is not None:
        from ..config.landscape import load_landscape

        listed = load_landscape(model.landscape).listed
        seeds = [spec for spec in seeds if (res := space.resolve(spec)).ok and res.effective in listed]
    for i, s in enumerate(config.seed_trials):
        spec = SpecConfig(s.speculative_num_steps, s.speculative_eagle_topk, s.speculative_num_draft_tokens)
        if not space.contains(spec):
            chains = space.attention is not None and space.attention.trees is False and (spec.eagle_topk or 1) > 1
            why = (f"is a tree, and {space.attention.named} runs topk 1 only for this "
                   f"model; use a topk-1 seed or another attention_backend") if chains else (
                f"lies outside the search space {space.source}; widen the space or change the seed")
            raise ConfigError("study file", f"seed_trials[{i}]", f"{spec.label()} {why}")
        seeds.append(spec)
    # Each once, in order, by hashing: a lookup in the list kept so far was quadratic (45,840 seeds,
    # what a 4 MiB study file holds, took 296 s, and create and run call this three times).
    return list(dict.fromkeys(spec for spec in seeds if space.contains(spec)))


def left_out_default_seeds(config: StudyConfig, space: SearchSpace) -> list[SpecConfig]:
    """The default seed trials :func:`seed_trials` leaves out (outside the space, or not in the
    landscape table's grid), for ``study run --dry-run`` to say."""
    from .seeds import DEFAULT_SEED_TRIALS

    kept = set(seed_trials(config, space)) if config.default_seed_trials else set(DEFAULT_SEED_TRIALS)
    return [spec for spec in DEFAULT_SEED_TRIALS if spec not in kept]


def create_study(config: StudyConfig, storage_url: str, note: Callable[[str], None] | None = None, *,
                 patient: bool = False, on_outage: Callable[[str, dict], None] | None = None,
                 add_trials: int | None = None):
    """Create the Optuna study (and its baseline study) for ``config``; a no-op when it exists with
    the same config, :class:`ConfigError` when it exists with a different one. A larger budget is
    the one change accepted: it is stored, and ``note`` hears about it. ``patient``: wait out a
    storage outage (``tuner study run``), telling ``on_outage`` (:func:`open_storage`).
    ``add_trials``: the ``--add-trials`` that :func:`extend_budget` applies next; one it would refuse
    is refused here, before the file's budget changes are stored."""
    import optuna

    from .facts import ATTENTION_ATTR, prepare, space_for

    if config.server.backend == "model" and config.server.model.profile is not None:
        from ..sim.profile import load_profile

        load_profile(config.server.model.profile)  # a bad profile fails here, before anything is written
    space_dict, suite_dict = _space_and_suite(config)
    wanted = stored_config(config)
    loaded = SearchSpace(SearchSpace.load(config.search_space).config, config.search_space)
    _, choice, attention = prepare(config, loaded)
    space, restricted = space_for(loaded, config, attention)
    # A seed outside the space fails here, before anything is written; for a study an older tuner
    # made (read, not written), in the space of the backend its launches run, its trees kept.
    # (the storage this creates the study in, not the file's: `--storage` may name another)
    older = made_without_decision(config, "study file", storage_url)
    seeds = seed_trials(config, space_for(loaded, config, None)[0] if older else space)
    storage = open_storage(storage_url, patient=patient, on_outage=on_outage)
    directions = ["maximize"] * len(config.objectives)
    # a deleted study's rows a worker wrote as it was deleted: the new study would get their ids
    if patient_backend(storage) is not None:
        storage.drop_orphan_rows()  # waited out like any call of a running worker
    else:
        drop_orphan_rows(storage)
    try:
        study = optuna.create_study(study_name=config.name, storage=storage, directions=directions)
    except optuna.exceptions.DuplicatedStudyError:
        study = optuna.load_study(study_name=config.name, storage=storage)
        if add_trials:
            change = _budget_change(wait_until_ready(study).get(CONFIG_ATTR) or {}, wanted)
            if change is not None:  # else the config differs, refused just below
                _check_extension(study.study_name, change[0]["budget"].get("n_trials"), add_trials)
        try:
            stored = _same_or_error(study, wanted, space_dict, suite_dict, storage_url, note, file=config)
        except ConfigError as exc:
            if exc.key != READY_ATTR or not _unfinished_creation(study, wanted, space_dict, suite_dict,
                                                                 directions, seeds):
                raise
            # Our own creation, or another worker's, cut short (Ctrl-C, a storage outage whose retry
            # found the row the first attempt committed): every write below is idempotent.
            if note is not None:
                note(f"study {config.name}: its creation was interrupted; finishing it")
        else:
            decided = _same_attention(study, attention, storage_url, stored)
            # this node's decision's line; an older tuner's study (none stored) keeps the backend it
            # ran and its trees (tuner.engine.facts.older_study_record): not said of it
            if restricted and note is not None and decided:
                note(restricted)
            return study
    study.set_metric_names(list(config.objectives))
    study.set_user_attr(CONFIG_ATTR, wanted)
    study.set_user_attr(SPACE_ATTR, space_dict)
    study.set_user_attr(SUITE_ATTR, suite_dict)
    study.set_user_attr(WORKLOAD_ATTR, workload_of(suite_dict))
    study.set_user_attr(ATTENTION_ATTR, attention)
    profile = profile_of(config)
    if profile is not None:
        study.set_user_attr(PROFILE_ATTR, profile)
    if note is not None:
        note(choice.line())
        if restricted:
            note(restricted)
    study.set_user_attr(VERSION_ATTR, __version__)
    study.set_user_attr(OBJECTIVES_ATTR, list(config.objectives))
    # Optuna's skip_if_exists reads every trial at each enqueue, quadratic (45,840 seeds: 7 a second
    # after 600, some 58 hours in all); the seeds are distinct, so the ones a creation cut short
    # already queued are read once here and skipped.
    queued = {tuple(sorted(t.system_attrs.get("fixed_params", t.params).items()))
              for t in study.get_trials(deepcopy=False)}
    for spec in seeds:
        # the trial parameters are SGLang's underscore names, as the sampler's distributions
        if tuple(sorted((params := spec.server_args()).items())) not in queued:
            study.enqueue_trial(params, user_attrs={"seed": True})
    create_baseline_study(study)
    study.set_user_attr(UID_ATTR, uuid.uuid4().hex)
    # Written last: a study is ready (config, space, suite, seeds, baseline study) once it has this.
    study.set_user_attr(READY_ATTR, utc_now())
    return study


def _unfinished_creation(study, config: dict, space: dict, suite: dict, directions: list[str],
                         seeds: list[SpecConfig]) -> bool:
    """Whether ``study`` (never marked ready) is a tuner creation of this very study cut short:
    the same directions, no study attribute but those :func:`create_study` writes, no trial but
    our queued seeds (as it enqueues them), and whatever of the config, space and suite it stored
    equal to ours. A study another tool made (an attribute or a trial of its own: QA saw a foreign
    ``{'lr': 0.1}`` trial adopted and measured), or one of another config, is not. (A study with
    nothing in it at all cannot tell who made it; finishing it takes nothing of anyone's.)"""
    from optuna.trial import TrialState

    if [d.name.lower() for d in study.directions] != directions:
        return False
    ours = [spec.server_args() for spec in seeds]
    for t in study.get_trials(deepcopy=False):
        # (a queued trial's parameters are Optuna's fixed_params until it is asked)
        queued = t.system_attrs.get("fixed_params")
        if t.state != TrialState.WAITING or t.user_attrs != {"seed": True} or queued not in ours:
            return False
    stored = study._storage.get_study_user_attrs(study._study_id)
    if not set(stored) <= _creation_attrs():
        return False
    if stored.get(CONFIG_ATTR) is not None and _comparable(stored[CONFIG_ATTR]) != _comparable(config):
        return False
    return all(stored.get(attr) in (None, want) for attr, want in ((SPACE_ATTR, space), (SUITE_ATTR, suite)))


def workload_of(suite_dict: dict) -> dict:
    """The statistics of a (stored) suite's requests."""
    from ..bench.workload import workload_stats
    from ..config.suite import load_suite

    return workload_stats(load_suite(suite_dict))


def incomplete_note(study) -> str | None:
    """Why a study tuner made cannot be trusted whole yet, or None: no ready mark (:data:`READY_ATTR`,
    written last by a creation or a copy), so one of them was cut short and what it holds may be
    partial (QA: a copy killed with SIGKILL listed 3 of 8 trials as a normal study). A study
    another tool made (no tuner config) is none of tuner's business: None."""
    attrs = study.user_attrs
    if READY_ATTR in attrs or CONFIG_ATTR not in attrs:
        return None
    return (f"incomplete: its creation or copy was cut short, so it may hold part of what it should; "
            f"a creation is finished by the next tuner study create or run, a copy is not: tuner study "
            f"delete {study.study_name}")


def stored_attrs_problem(study, attrs: dict | None = None) -> str | None:
    """What makes a tuner study's stored attributes unreadable, or None: ``"stored KEY ..."``. The
    readers (status, pareto, export, report, compare, confirm, list) trust what this passes: the
    config a mapping whose ``server``, ``bench`` and ``budget`` are mappings and whose backend is
    text, its ``server.sim``/``server.model`` and ``slo`` as :func:`_server_problem` and
    :func:`_slo_problem` say; a ready study's space and suite mappings; their parts and the
    attention decision as :func:`_parts_problem` says; the workload as :func:`_workload_problem` says;
    the objectives as many names as the study has directions, the config's own when it names them
    (QA: an edited config ended status, report and list in AttributeError, a deleted suite export in
    KeyError, objectives edited to ``["bogus", ...]`` labelled the figures "bogus"). A study another
    tool made: None. ``attrs``: the study's attributes, when the caller has just read them."""
    if attrs is None:
        attrs = study._storage.get_study_user_attrs(study._study_id)
    if CONFIG_ATTR not in attrs:
        return None
    config = attrs[CONFIG_ATTR]
    if not isinstance(config, dict):
        return f"stored {CONFIG_ATTR} {str(config)[:60]!r} is not a mapping"
    for part in ("server", "bench", "budget"):
        if part in config and not isinstance(config[part], dict):
            return f"stored {CONFIG_ATTR} {part} {str(config[part])[:60]!r} is not a mapping"
    backend = (config.get("server") or {}).get("backend")
    if backend is not None and not isinstance(backend, str):
        return f"stored {CONFIG_ATTR} server.backend {backend!r} is not text"
    problem = _server_problem(config.get("server") or {}) or _slo_problem(config.get("slo"))
    if problem is not None:
        return f"stored {CONFIG_ATTR} {problem}"
    for key in (SPACE_ATTR, SUITE_ATTR):
        if (key in attrs or READY_ATTR in attrs) and not isinstance(attrs.get(key), dict):
            return f"stored {key} is " + ("missing" if key not in attrs else f"{str(attrs[key])[:60]!r}, not a mapping")
    problem = _parts_problem(attrs)
    if problem is not None:
        return f"stored {problem}"
    if WORKLOAD_ATTR in attrs:
        problem = _workload_problem(attrs[WORKLOAD_ATTR])
        if problem is not None:
            return f"stored {WORKLOAD_ATTR} {problem}"
    objectives = attrs.get(OBJECTIVES_ATTR)
    if objectives is not None:
        named = config.get("objectives")
        if (not isinstance(objectives, list) or len(objectives) != len(study.directions)
                or not all(isinstance(o, str) and o for o in objectives)
                or (isinstance(named, list) and objectives != named)):
            return f"stored {OBJECTIVES_ATTR} {str(objectives)[:80]!r} are not the study's objectives"
    return None


def _server_problem(server: dict) -> str | None:
    """What of the stored ``server.sim`` and ``server.model`` (:class:`tuner.config.study.ModelSettings`)
    the report and compare cannot read, or None: each a mapping, the model's ``noise`` a share below 1
    (QA, qa182: ``server.model: "x"`` ended the report in AttributeError, a noise of null in TypeError)."""
    from .records import finite_number

    for part in ("sim", "model"):
        if server.get(part) is not None and not isinstance(server[part], dict):
            return f"server.{part} {repr(server[part])[:60]} is not a mapping"
    model = server.get("model") or {}
    if "noise" in model and not (finite_number(model["noise"]) and 0 <= model["noise"] < 1):
        return f"server.model.noise {repr(model['noise'])[:60]} is not a share from 0 to below 1"
    return None


def _slo_problem(slo) -> str | None:
    """What of a stored ``slo`` the readers cannot format, or None: a list of ``{concurrency, limits}``
    as :class:`tuner.config.slo.SLO` stores them, valid by its own rules (QA, qa182: ``slo: "x"``
    ended status and the report in TypeError, an entry without ``limits`` in KeyError)."""
    from pydantic import ValidationError

    from ..config.slo import SLO

    if slo is None:
        return None
    if not isinstance(slo, list):
        return f"slo {repr(slo)[:60]} is not a list"
    for i, entry in enumerate(slo):
        try:
            ok = isinstance(entry, dict) and isinstance(entry.get("limits"), dict) and bool(SLO.model_validate(entry))
        except (ValidationError, ValueError, TypeError, OverflowError):
            ok = False
        if not ok:
            return f"slo[{i}] {repr(entry)[:60]} is not {{concurrency, limits: {{METRIC_pQ_ms: ms}}}}"
    return None


def _parts_problem(attrs: dict) -> str | None:
    """What of the parts of a stored config, space, suite and attention decision the readers take
    apart (compare sets each beside another study's; export checks the sweep and rebuilds the space
    with the decision) is not of the shape the tuner writes, or None: ``"KEY PART ..."``. The config's
    ``server.args`` and ``server.env`` and the space's ``params`` and ``fixed`` mappings,
    ``server.extra_args`` a list; the suite's ``prompts`` a list of mappings, its ``single`` and
    ``sweep`` mappings, the sweep's ``concurrencies`` whole numbers; the decision
    (tuner.engine.facts.attention_record) a mapping whose ``backend`` is text and ``pinned`` and
    ``trees`` true or false (QA, qa182: ``server.args: "x"``, ``params: "x"``, ``prompts: [5]`` or
    ``single: 5`` ended compare in AttributeError or TypeError; ``sweep: "x"`` and
    ``tuner_attention: "x"`` export in AttributeError, its ``trees: "x"`` in KeyError)."""
    from .facts import ATTENTION_ATTR
    from .records import whole_number

    server = (attrs[CONFIG_ATTR].get("server") or {})
    space, suite = attrs.get(SPACE_ATTR) or {}, attrs.get(SUITE_ATTR) or {}
    shapes = [(CONFIG_ATTR, "server.args", server.get("args"), dict),
              (CONFIG_ATTR, "server.env", server.get("env"), dict),
              (CONFIG_ATTR, "server.extra_args", server.get("extra_args"), list),
              (SPACE_ATTR, "params", space.get("params"), dict), (SPACE_ATTR, "fixed", space.get("fixed"), dict),
              (SUITE_ATTR, "prompts", suite.get("prompts"), list), (SUITE_ATTR, "single", suite.get("single"), dict),
              (SUITE_ATTR, "sweep", suite.get("sweep"), dict)]
    for key, part, value, kind in shapes:
        if value is not None and not isinstance(value, kind):
            return f"{key} {part} {repr(value)[:60]} is not a {'mapping' if kind is dict else 'list'}"
    for i, prompt in enumerate(suite.get("prompts") or []):
        if not isinstance(prompt, dict):
            return f"{SUITE_ATTR} prompts[{i}] {repr(prompt)[:60]} is not a mapping"
    swept = (suite.get("sweep") or {}).get("concurrencies")
    if swept is not None and not (isinstance(swept, list) and all(whole_number(c) for c in swept)):
        return f"{SUITE_ATTR} sweep.concurrencies {repr(swept)[:60]} is not a list of whole numbers"
    record = attrs.get(ATTENTION_ATTR)
    if record is None:  # (an older tuner's study stored no decision)
        return None
    if not isinstance(record, dict):
        return f"{ATTENTION_ATTR} {repr(record)[:60]} is not a mapping"
    if record.get("backend") is not None and not isinstance(record["backend"], str):
        return f"{ATTENTION_ATTR} backend {repr(record['backend'])[:60]} is not text"
    for part in ("pinned", "trees"):
        if record.get(part) is not None and not isinstance(record[part], bool):
            return f"{ATTENTION_ATTR} {part} {repr(record[part])[:60]} is not true or false"
    return None


#: The stored workload's percentile figures (tuner.bench.workload.workload_stats: ``{p50, p90, p99,
#: max}``), of which status and export index the first two, and its counts.
_WORKLOAD_PCTS = ("prompt_chars", "output_tokens", "prompt_tokens_est", "single_output_tokens")
_WORKLOAD_COUNTS = ("requests", "sent", "largest_batch", "single_prompts_sent", "chat_turns", "single_requests")


def _workload_problem(w) -> str | None:
    """What of a stored workload (:data:`WORKLOAD_ATTR`, as tuner.bench.workload.workload_stats writes
    it) status, export and the report cannot format, or None (QA, qa182: ``"x"`` ended all three in
    AttributeError, a ``prompt_chars`` of ``{"p50": "x"}`` in ValueError, ``categories: [1, 2]`` in
    AttributeError, a ``temperature`` of "x" in ValueError). An empty one reads as not recorded."""
    from .records import FIGURE_MAX, finite_number, whole_number

    if not isinstance(w, dict):
        return f"{repr(w)[:60]} is not a mapping"
    if not w:
        return None
    for i, key in enumerate(_WORKLOAD_PCTS):
        pcts = w.get(key)
        if pcts is None and i >= 2:  # (one a reader only shows when there)
            continue
        if not isinstance(pcts, dict) or not all(
                pcts.get(q) is None or (finite_number(pcts[q]) and 0 <= pcts[q] <= FIGURE_MAX)
                for q in ("p50", "p90", "p99", "max")):
            return f"{key} {repr(pcts)[:60]} is not {{p50, p90, p99, max}} of numbers"
    for key in _WORKLOAD_COUNTS:
        if w.get(key) is not None and not whole_number(w[key]):
            return f"{key} {repr(w[key])[:60]} is not a whole number"
    if not (finite_number(w.get("temperature")) and w["temperature"] >= 0):
        return f"temperature {repr(w.get('temperature'))[:60]} is not a number of at least 0"
    cats = w.get("categories")
    if cats is not None and not (isinstance(cats, dict) and all(whole_number(n) for n in cats.values())):
        return f"categories {repr(cats)[:60]} is not a mapping of names to counts"
    if w.get("source") is not None and not isinstance(w["source"], dict):
        return f"source {repr(w['source'])[:60]} is not a mapping"
    return None


#: How long a study without its ready mark is waited for (its creator may still be writing).
READY_WAIT_S = 30.0


def wait_until_ready(study, timeout_s: float | None = None) -> dict:
    """The study's user attributes once its creator has written them all.

    Another worker may have created the study an instant ago and still be writing; a study that
    never becomes ready was not created by tuner (or its creator died): :class:`ConfigError`, after
    :data:`READY_WAIT_S` -- or at once when no creation can be under way: a trial that is not a
    queued one, or an attribute tuner's creation never writes (QA: `run --study` on a plain Optuna
    study with three finished trials waited 34 s to say so).
    """
    deadline = time.monotonic() + (READY_WAIT_S if timeout_s is None else timeout_s)
    while True:
        stored = study._storage.get_study_user_attrs(study._study_id)
        if READY_ATTR in stored:
            return stored
        if time.monotonic() > deadline or not _may_be_in_creation(study, stored):
            raise ConfigError(study.study_name, READY_ATTR, "the study exists but is not a complete tuner "
                              "study (another tool made it, or its creation was interrupted); pick another "
                              f"name, or remove it: tuner study delete {study.study_name}")
        time.sleep(0.2)


def _creation_attrs() -> set[str]:
    """The study attributes :func:`create_study` writes before its ready mark."""
    from .facts import ATTENTION_ATTR

    return {CONFIG_ATTR, SPACE_ATTR, SUITE_ATTR, WORKLOAD_ATTR, ATTENTION_ATTR, VERSION_ATTR, OBJECTIVES_ATTR,
            UID_ATTR, PROFILE_ATTR}


def _may_be_in_creation(study, stored: dict) -> bool:
    """Whether a study without its ready mark may still be being written by :func:`create_study`,
    which writes only its own attributes and queued seeds, and no worker runs a trial before the
    mark: anything else (a finished or running trial, a foreign attribute) says another tool, or a
    creation long dead, made it."""
    from optuna.trial import TrialState

    if not set(stored) <= _creation_attrs():
        return False
    return all(t.state == TrialState.WAITING for t in study._storage.get_all_trials(study._study_id,
                                                                                     deepcopy=False))


def create_baseline_study(study):
    """The companion study ``NAME.baseline`` (created when missing), with its metric names: the
    absolute figures behind the study's objectives, which its trials are told."""
    import optuna

    from .objectives import figure_names

    names = figure_names(study_objectives(study))
    bstudy = optuna.create_study(study_name=study.study_name + BASELINE_SUFFIX, storage=study._storage,
                                 directions=["maximize"] * len(names), load_if_exists=True)
    _set_metric_names(bstudy, names)
    return bstudy


def study_objectives(study) -> list[str]:
    """The study's objectives as stored (its config), falling back to its metric names."""
    attrs = study._storage.get_study_user_attrs(study._study_id)
    return list(attrs.get("objectives") or (attrs.get(CONFIG_ATTR) or {}).get("objectives")
                or study.metric_names or [])


def _set_metric_names(study, names: list[str]) -> None:
    # A study created before metric names existed may have fewer directions (the baseline study had
    # one): name what it has.
    names = list(names)[:len(study.directions)]
    if len(names) == len(study.directions) and study.metric_names != names:
        study.set_metric_names(names)


def study_exists(name: str, storage) -> bool:
    """Whether ``storage`` (an Optuna storage object) holds study ``name`` now."""
    import optuna

    try:
        optuna.load_study(study_name=name, storage=storage)
        return True
    except KeyError:
        return False


class StudyReplaced(RuntimeError):
    """The study a worker opened is no longer in its storage: deleted (``tuner study delete --force``
    while the worker ran), perhaps made anew under the same name. Nothing more may be written
    through the worker's handle: SQLite gives a new study the freed ids (QA: a worker went on
    measuring into the new study, against the deleted one's baseline, and wrote its figures onto a
    queued trial of the new one)."""

    def __init__(self, name: str):
        self.name = name
        super().__init__(f"study {name} was deleted while this worker ran (tuner study delete); the server is "
                         "stopped, and a measurement it journaled is never stored into another study of that name")


def study_replaced(study, uid: str | None) -> bool:
    """Whether ``study`` (an open handle) is gone from its storage, or its id now names another
    study (its :data:`UID_ATTR` is not ``uid``). ``uid`` None (no journal, a study in memory): never."""
    if uid is None:
        return False
    try:
        attrs = study._storage.get_study_user_attrs(study._study_id)
    except KeyError:
        return True
    return attrs.get(UID_ATTR) != uid


def study_uid(study) -> str:
    """The study's :data:`UID_ATTR`, given to it now if it was created before ids existed."""
    uid = study.user_attrs.get(UID_ATTR)
    if not uid:
        uid = uuid.uuid4().hex
        study.set_user_attr(UID_ATTR, uid)
    return uid


def ensure_metric_names(study) -> None:
    """Give a study made before metric names existed its names, and its baseline study theirs."""
    if study.metric_names is None:
        _set_metric_names(study, study_objectives(study))
    create_baseline_study(study)


def stored_budget(study, default: int | None = None) -> int | None:
    """``budget.n_trials`` as stored now (a larger one may have been stored since a worker
    started); ``default`` for a study with no stored config."""
    attrs = study._storage.get_study_user_attrs(study._study_id)
    if CONFIG_ATTR not in attrs:
        return default
    return ((attrs[CONFIG_ATTR] or {}).get("budget") or {}).get("n_trials")


def extend_budget(study, add: int) -> tuple[int, int]:
    """Raise the stored ``budget.n_trials`` by ``add``; returns (old, new). A study without a budget
    (unlimited) cannot be extended, nor one past :data:`~tuner.config.study.MAX_TRIALS`
    (:func:`~tuner.config.study.check_added_budget`): :class:`ConfigError`, nothing written.

    Two extensions at once both count: the new config is stored only over the one it was computed
    from (:func:`~tuner.engine.asktell.replace_study_attr`), else read and raised again. Read, then
    ``set_user_attr``, two ``run --add-trials 5`` on two nodes both read 20 and both stored 25 (QA,
    qa93: one extension lost, on SQLite and PostgreSQL; tests/engine/test_budget_extended_at_once.py)."""
    import json

    from optuna.storages import RDBStorage

    from .asktell import replace_study_attr, study_attr_text

    stored = wait_until_ready(study)
    rdb = isinstance(getattr(study._storage, "_backend", study._storage), RDBStorage)
    while True:
        was = study_attr_text(study._storage, study._study_id, CONFIG_ATTR) if rdb else None
        config = dict(json.loads(was) if was is not None else stored[CONFIG_ATTR])
        budget = dict(config.get("budget") or {})
        old = budget.get("n_trials")
        _check_extension(study.study_name, old, add)
        budget["n_trials"] = old + add
        wanted = {**config, "budget": budget}
        if was is None:  # in memory (benchmarks): one process
            study.set_user_attr(CONFIG_ATTR, wanted)
            return old, old + add
        if replace_study_attr(study._storage, study._study_id, CONFIG_ATTR, was, wanted):
            return old, old + add  # else another process changed the config since: read again


def _check_extension(name: str, old: int | None, add: int) -> None:
    """Refuse (:class:`ConfigError`) adding ``add`` launches to study ``name``'s budget of ``old``:
    none (unlimited), or past :data:`~tuner.config.study.MAX_TRIALS`."""
    if old is None:
        # no launch budget: its timeout, if any, bounds each run (QA, qa139: "it runs until stopped"
        # was said of a study with a timeout too)
        raise ConfigError(name, "budget.n_trials", "the study has no launch budget (its timeout bounds a run, "
                          "or it runs until stopped); --add-trials has nothing to add to: use --n-trials N to "
                          "bound this run")
    check_added_budget(name, old, add)


def _budget_change(have: dict, wanted: dict) -> tuple[dict, str] | None:
    """``(config to store, what changed)`` when a stored study config ``have`` and a file's
    ``wanted`` differ in their budget only; None when anything else differs.

    The budget only grows: a larger (or no) ``n_trials`` extends the study, a smaller one keeps the
    stored one (it may have been raised by ``run --add-trials``); ``timeout`` only bounds each run
    and is taken from the file."""
    current = current_config(have)
    if _comparable(current) != _comparable(wanted):
        return None
    # a key an older tuner did not store reads as its default (budget.prune: on)
    old, new = (current.get("budget") or {}), (wanted.get("budget") or {})
    o, n = old.get("n_trials"), new.get("n_trials")
    keep_stored = o is not None and n is not None and n < o
    # Only what changed is written over the budget as stored: an older tuner's study keeps its own
    # form (QA: a budget.prune it never had, stored on extension, made that tuner refuse the study).
    budget = {**(have.get("budget") or {}), **{k: v for k, v in new.items() if old.get(k) != v},
              "n_trials": o if keep_stored else n}
    parts = []
    if keep_stored:
        parts.append(f"kept budget.n_trials {o} (the file says {n}; a study's budget only grows)")
    elif o != n:
        parts.append(f"budget.n_trials {o} -> {'unlimited' if n is None else n}")
    if old.get("timeout") != new.get("timeout"):
        # "none", not Python's None: a timeout taken out of the file leaves each run unbounded in time
        parts.append(f"budget.timeout {old.get('timeout') or 'none'} -> {new.get('timeout') or 'none'}")
    if old.get("prune") != new.get("prune"):
        parts.append(_prune_change(old.get("prune"), new.get("prune")))
    # The file's paths are stored (a run from storage alone finds the files there), in the stored
    # form: a key an older tuner did not store is not added (that tuner would refuse the study).
    return {**_in_form_of(have, wanted), "budget": budget}, ", ".join(parts)


def _in_form_of(have: dict, wanted: dict) -> dict:
    """``wanted``'s values for the keys ``have`` holds (nested mappings alike), ``have``'s own for
    the others: a study config kept in the form its tuner stored it."""
    out = dict(have)
    for k, v in wanted.items():
        if k in have:
            out[k] = _in_form_of(have[k], v) if isinstance(v, dict) and isinstance(have[k], dict) else v
    return out


def _prune_change(old: Any, new: Any) -> str:
    """How a change of ``budget.prune`` is said: the switch (``budget.prune True -> False``), then
    each knob that changed (``budget.prune.z 3.5 -> 2.0``); none stored (an older tuner's study,
    from before pruning) is said so, not as ``None``."""
    if old is None:
        return f"budget.prune {_short(new)} (the study, made by an older tuner, stored none)"
    if isinstance(old, dict) and isinstance(new, dict):
        said = ([f"budget.prune {old.get('enabled')} -> {new.get('enabled')}"]
                if old.get("enabled") != new.get("enabled") else [])
        # a knob changed with the switch is said too (QA: off -> {z: 2.0} said the switch alone)
        knobs = [k for k in new if k != "enabled" and old.get(k) != new.get(k)]
        knobs += [k for k in old if k != "enabled" and k not in new]
        return ", ".join(said + [f"budget.prune.{k} {old.get(k)} -> {new.get(k)}" for k in knobs])
    return f"budget.prune {_short(old)} -> {_short(new)}"


def _short(value: Any) -> str:
    return value.get("enabled", value) if isinstance(value, dict) and "enabled" in value else str(value)


def _comparable(config: dict) -> dict:
    """A stored study config without its budget, its log cap and how it names its search space and
    suite: their contents are compared on their own (``SPACE_ATTR``, ``SUITE_ATTR``), and the same
    file sits at another path on another node (or in a copy beside the study file). A shipped
    suite's name and a file of the same content are the same suite too (QA: after an upgrade changed
    ``quick``, a file holding the suite the study ran was refused, ``bench.suite differs``)."""
    out = {k: v for k, v in config.items() if k not in ("budget", "search_space")}
    out["bench"] = {**(out.get("bench") or {}), "suite": None}
    # server.log_max_mb shapes no measurement (each run takes its file's), and a study stored before
    # the key existed has none: not compared.
    out["server"] = {k: v for k, v in (out.get("server") or {}).items() if k != "log_max_mb"}
    model = out["server"].get("model") or {}
    if model.get("landscape_sha256"):  # a landscape table by its content (server.model.landscape_sha256)
        out["server"] = {**out["server"], "model": {**model, "landscape": None}}
    return out


def _same_or_error(study, config: dict, space: dict, suite: dict, url: str,
                   note: Callable[[str], None] | None = None, *, store: bool = True,
                   file: StudyConfig | None = None) -> dict:
    """:class:`ConfigError` when ``study`` holds another config, space or suite than the file's,
    or (``file``: the study file's config) was made on another profile (:func:`same_profile`);
    a budget-only change is taken (stored, told to ``note``), or with ``store=False`` let pass
    unwritten (a budget shapes no server: :func:`check_file_against_study`). Returns the study's
    attributes as read (once ready), for :func:`_same_attention`: one read for both."""
    stored = wait_until_ready(study)
    _refuse_a_newer_tuner_s(study, stored, url)
    # what no reader trusts no worker adds to (QA, qa182: a decision edited to trees "x" ran two more
    # trials with it, whose results every reader then refused)
    _refuse_unreadable(study, url, "worker", stored)  # (one read of the attributes: test_create_reads_once)
    if file is not None:  # before anything is stored (a budget change below)
        same_profile(study, file, stored)
    have_model = ((stored.get(CONFIG_ATTR) or {}).get("server") or {}).get("model")
    if isinstance(have_model, dict) and "landscape_sha256" not in have_model and (config.get("server") or {}).get("model"):
        # a study stored before tables were pinned by content: compared as it was then, by path; no
        # digest, as current_config reads the stored one (dropping the key read as "server.model differs")
        model = {**config["server"]["model"], "landscape_sha256": None}
        config = {**config, "server": {**config["server"], "model": model}}
    change = _budget_change(stored.get(CONFIG_ATTR) or {}, config)
    # a study an older tuner stored lacks the keys added since: read as this tuner reads it
    stored_space, stored_suite = current_space(stored.get(SPACE_ATTR)), current_suite(stored.get(SUITE_ATTR))
    # a dataset's counts of rows left out follow from its file and spec (compared), and a study
    # stored before they were counted has none: not compared (tuner.config.dataset)
    stored_suite, suite = without_drop_counts(stored_suite), without_drop_counts(suite)
    if change is not None and stored_space == space and stored_suite == suite:
        merged, what = change
        if not store:
            return stored
        if merged != stored.get(CONFIG_ATTR):
            study.set_user_attr(CONFIG_ATTR, merged)
        if what and note is not None:
            note(f"study {study.study_name}: {what}")
        return stored
    for attr, wanted in ((CONFIG_ATTR, config), (SPACE_ATTR, space), (SUITE_ATTR, suite)):
        have = {SPACE_ATTR: stored_space, SUITE_ATTR: stored_suite}.get(attr, stored.get(attr))
        if attr == CONFIG_ATTR and change is not None:
            continue  # differs in its budget only; the space or suite is what differs
        if attr == CONFIG_ATTR:
            have, wanted = _comparable(current_config(have or {})), _comparable(wanted)
        if have != wanted:
            key = _first_difference(have or {}, wanted)
            shipped = changed_shipped_suite((config.get("bench") or {}).get("suite"), have) \
                if attr == SUITE_ATTR else None
            fix = ("use a new study name or the original file (a larger budget.n_trials is the one change a "
                   "study takes), or go on with the study as stored: `tuner study run --study "
                   f"{study.study_name} --storage {redact(url)}`") if shipped is None else (
                f"the shipped suite '{shipped}' is not the one this study stored (a tuner since its creation "
                f"changed it), and its trials ran the stored one: go on with that from storage, `tuner study "
                f"run --study {study.study_name} --storage {redact(url)}`, or start a new study")
            raise ConfigError(redact(url) or "", study.study_name,
                              f"the study exists with a different {attr.split('_')[1]} ({key} differs); {fix}")
    return stored


def _refuse_a_newer_tuner_s(study, stored: dict, url: str) -> None:
    """:class:`ConfigError` when a newer tuner stored the study (a key of its config, space or suite
    this one does not know, :func:`tuner.engine.stored_forms.newer_tuner_key`): compared, it read as
    another config ('use a new study name or the original file'), which no file could fix."""
    key = newer_tuner_key(stored.get(CONFIG_ATTR), stored.get(SPACE_ATTR), stored.get(SUITE_ATTR))
    if key is not None:
        raise ConfigError(redact(url) or "", study.study_name, newer_tuner_line(key))


class StorageUnreadable(Exception):
    """The study's storage could not be read (its variable unset here, the database down, a file
    that is no database): :func:`check_file_against_study` could not compare. Its text names why;
    ``refused``: no outage but a refusal a run exits 2 on at once (a role that may not connect, or
    has no rights on the tables), where a run waits out an outage."""

    def __init__(self, text: str, refused: bool = False):
        super().__init__(text)
        self.refused = refused


def check_file_against_study(config: StudyConfig, source, attention: dict) -> bool | None:
    """Whether study ``config.name`` exists in its storage (the file's ``storage``, else
    ``$TUNER_STORAGE``; ``source`` names the file in errors) as the file ``config`` describes it:
    False when it does not exist (nor its SQLite file, an empty one, or a database, SQLite or a
    server's, without Optuna's tables: reading would make them); None when it does, made by an
    older tuner that stored no attention decision (its launches run :func:`tuner.engine.facts.older_study_record`'s backend, not ``attention``);
    :class:`ConfigError`, the line ``tuner study run`` gives (:func:`create_study`), when it
    exists with another config, space or suite (other than in its budget), or would launch another
    attention backend than ``attention`` (this node's decision, :func:`tuner.engine.facts.prepare`);
    :class:`StorageUnreadable` (``refused`` when a run would exit on it, not wait) when the storage
    cannot be read, also when it fails after it was
    opened (the database going down mid-read: QA saw `tuner launch` refuse with "failed during the
    command" there, where a storage down from the start let it launch). Reads only: nothing is
    created or stored."""
    import optuna
    from optuna.exceptions import StorageInternalError
    from sqlalchemy.exc import SQLAlchemyError

    from .patience import is_transient
    from .urls import describe_error, resolve_url, sqlite_path

    try:
        url = resolve_url(config.storage, str(source))
        path = sqlite_path(url)
        if path is not None and (not path.is_file() or path.stat().st_size == 0):
            return False  # no storage yet: open_storage(create=False) would refuse it as "no such storage"
        if not holds_tables(url):
            # a database no study was made in, a SQLite file too (QA: `tuner launch` on a SQLite file
            # with no tables wrote Optuna's 13 into it): opening it would create Optuna's tables
            return False
        storage = open_storage(url, create=False)
    except (ConfigError, OSError) as exc:
        # (an unset variable's fix names --storage, which no caller of this takes: said without it)
        # refused: what a run's open (tuner.engine.patience.open_patiently) does not wait for; the
        # error open_storage's line was made from is its context (raised "from None")
        cause = exc.__context__
        refused = isinstance(exc, ConfigError) and (cause is None or not is_transient(cause))
        raise StorageUnreadable(str(exc).split("; export it")[0], refused) from None
    except SQLAlchemyError as exc:
        raise StorageUnreadable(f"storage {redact(url)} cannot be read: {describe_error(exc, url)}") from None
    try:
        if not study_exists(config.name, storage):
            return False
        study = optuna.load_study(study_name=config.name, storage=storage)
        space, suite = _space_and_suite(config)
        stored = _same_or_error(study, stored_config(config), space, suite, url, store=False, file=config)
        decided = _same_attention(study, attention, url, stored)
    except (StorageInternalError, SQLAlchemyError) as exc:  # a mismatch (ConfigError) stands
        raise StorageUnreadable(f"storage {redact(url)} failed while it was read: "
                                f"{describe_error(exc, url)}") from None
    return True if decided else None


def made_without_decision(config: StudyConfig, source, url=None) -> bool:
    """Whether study ``config.name`` is in ``url`` (None: the file's ``storage``; an Optuna storage
    object, as :func:`create_study` may be given, is read as it is), ready, made by an
    older tuner that stored no attention decision: its launches run :func:`tuner.engine.facts.older_study_record`'s backend,
    which its file's checks (seeds, ``tuner doctor``) then judge by, not this node's decision for a
    new study. Reads only, and never waits: False when it is not there (a new study, judged by
    this node's decision before anything is written), still being created, or the storage cannot
    be read here (the stricter judgement; ``study run`` then finds the storage as it is)."""
    import optuna
    from optuna.exceptions import StorageInternalError
    from sqlalchemy.exc import SQLAlchemyError

    from .facts import ATTENTION_ATTR
    from .silence import silent
    from .storage_probe import sqlite_locked_now
    from .urls import resolve_url, sqlite_path

    try:
        if url is None or isinstance(url, str):
            url = resolve_url(config.storage if url is None else url, str(source))
            path = sqlite_path(url)
            if path is not None and (not path.is_file() or path.stat().st_size == 0):
                return False
            if path is not None and sqlite_locked_now(path):
                return False  # never waits: each open and read would wait out the busy timeout (QA: 5 x 60 s)
            # a server the run asked once and heard nothing from is not asked again (tuner.engine.silence)
            if path is None and (silent(url) or not holds_tables(url)):
                return False
            storage = open_storage(url, create=False)
        else:
            storage = url
        if not study_exists(config.name, storage):
            return False
        study = optuna.load_study(study_name=config.name, storage=storage)
        attrs = study._storage.get_study_user_attrs(study._study_id)
    except (ConfigError, OSError, StorageInternalError, SQLAlchemyError):
        return False
    return READY_ATTR in attrs and CONFIG_ATTR in attrs and attrs.get(ATTENTION_ATTR) is None


def _same_attention(study, attention: dict, url: str, attrs: dict) -> bool:
    """Every worker launches the study's one attention backend: refuse a node that would pin another.
    ``attrs``: the study's attributes as :func:`_same_or_error` read them. Returns whether the study
    stored its decision (False: made by an older tuner, before decisions were stored; its launches
    run :func:`tuner.engine.facts.older_study_record`'s backend)."""
    from .facts import ATTENTION_ATTR

    stored = attrs.get(ATTENTION_ATTR)
    if stored is None:
        return False
    if stored.get("backend") == attention.get("backend"):
        return True
    raise ConfigError(redact(url) or "", study.study_name,
                      f"this node would run attention backend {attention.get('backend')} ({attention.get('reason')}), "
                      f"but the study runs {stored.get('backend')}: every worker must launch the same backend; "
                      f"run it on a node like the others, or set attention_backend: {stored.get('backend')} in "
                      f"server.args")


def _first_difference(a: Any, b: Any, prefix: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{prefix}.{k}" if prefix else str(k))
    return prefix or "value"


def _refuse_unreadable(study, url: str, who: str, attrs: dict | None = None) -> None:
    """:class:`ConfigError` naming what of ``study``'s stored attributes (``attrs``, when just read)
    :func:`stored_attrs_problem` finds unreadable, for a ``who`` (``reader``, ``worker``) that must
    not go on with it."""
    problem = stored_attrs_problem(study, attrs)
    if problem is not None:
        name = study.study_name
        raise ConfigError(redact(url) or "", name, f"{problem} (edited by hand, or written by another tool): "
                          f"no {who} can trust this study; restore it from a copy, or remove it: tuner study "
                          f"delete {name}")


def open_study(name: str, storage_url: str, sampler=None, *, patient: bool = False,
               on_outage: Callable[[str, dict], None] | None = None, companions: bool = False,
               tuner_only: bool = False):
    """Load a tuner study; :class:`ConfigError` when it (or its storage) does not exist: opening
    creates nothing. ``patient``: the storage rides out outages (a running worker's), telling
    ``on_outage`` (see :func:`tuner.engine.storage.open_storage`). A companion study's name
    (``x.baseline``, ``x.confirm``) is refused naming its study, unless ``companions``.
    ``tuner_only`` (the readers: status, pareto, export, report, compare, confirm): a study with no
    stored tuner config (:data:`CONFIG_ATTR`; plain Optuna or another tool made it) is refused at
    once, naming it (QA: status showed its trials as tuner's, report drew them, compare set them
    beside a tuner study, export waited 30 s for a ready mark that never comes); one whose stored
    attributes are unreadable (:func:`stored_attrs_problem`) likewise."""
    import optuna

    storage = open_storage(storage_url, create=False, patient=patient, on_outage=on_outage)
    companion = companion_of(name)
    if companion is not None and not companions and study_exists(companion[0], storage):
        raise ConfigError(redact(storage_url) or "", name, f"is the {companion[1]} companion of study "
                          f"{companion[0]}, read and written through it: give {companion[0]}")
    try:
        study = optuna.load_study(study_name=name, storage=storage, sampler=sampler)
        if tuner_only and CONFIG_ATTR not in study._storage.get_study_user_attrs(study._study_id):
            raise ConfigError(redact(storage_url) or "", name, f"is not a tuner study (it holds no "
                              f"{CONFIG_ATTR}: plain Optuna or another tool made it, or a tuner study create "
                              f"is writing it this instant); give a study tuner made (`tuner study list` "
                              f"marks the others)")
        if tuner_only:
            _refuse_unreadable(study, storage_url, "reader")
        return study
    except KeyError:
        names = [s.study_name for s in optuna.get_all_study_summaries(storage)
                 if companion_of(s.study_name) is None]
        raise ConfigError(redact(storage_url) or "", name, f"no such study; studies here: "
                          f"{', '.join(names) or 'none'} (create it with `tuner study create`)") from None


def config_from_study(study, workdir: str | None = None, unreadable: Callable[[str], None] | None = None,
                      ) -> tuple[StudyConfig, SearchSpace, dict]:
    """The study's config, search space and suite as stored (nothing needed from local files).
    The space carries the stored attention decision (``space.attention``) and, when that backend
    runs chains only, holds topk at 1 (:func:`tuner.engine.facts.space_for`).

    A study an older tuner made stored no decision: its backend is judged with this node's model
    facts (:func:`tuner.engine.facts.older_study_record`), and a model ``config.json`` here that
    cannot be read is a :class:`ConfigError` naming the study (``study NAME: server.model_path:
    FILE: ...``: a worker or confirm would launch a server that reads it), or, given
    ``unreadable`` (a reader that launches nothing: export), one line to it (``study NAME: ...``)
    and the study's ``server.facts`` are used."""
    from ..config.space import SearchSpaceConfig
    from ..config.yamlfile import parse_model

    from .facts import ATTENTION_ATTR, space_for

    attrs = wait_until_ready(study)
    newer = newer_tuner_key(attrs.get(CONFIG_ATTR), attrs.get(SPACE_ATTR), attrs.get(SUITE_ATTR))
    if newer is not None:  # read by this schema it is 'unknown key', with no word of the version
        raise ConfigError(f"study {study.study_name}", "", newer_tuner_line(newer))
    config = study_from_dict(attrs[CONFIG_ATTR])
    space = SearchSpace(parse_model(SearchSpaceConfig, attrs[SPACE_ATTR], "<stored search space>"),
                        config.search_space)
    # The rules see the study's full launch context, and a chain-only backend's space has no trees.
    named = f"study {study.study_name}"
    try:
        space, _ = space_for(space, config, attrs.get(ATTENTION_ATTR),
                             None if unreadable is None else (lambda line: unreadable(f"{named}: {line}")))
    except ConfigError as exc:  # a lower layer's "study: KEY: ..." (facts.py): this stored study's
        raise (ConfigError(named, exc.key, exc.message) if exc.source == "study" else exc) from None
    wd = workdir or str(Path("studies") / config.name)
    # The stored suite replaces the suite's name or path: another machine may not have the file.
    bench = config.bench.model_copy(update={"suite": attrs[SUITE_ATTR]})
    return (config.model_copy(update={"workdir": str(Path(wd).resolve()), "bench": bench}),
            space, attrs[SUITE_ATTR])
