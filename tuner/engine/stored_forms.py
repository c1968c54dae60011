"""A study's stored config, space and suite as this tuner reads them, whichever tuner stored them.

An older tuner stored its own schema's keys: a key added since (``bench.lossless``, ``server.facts``,
a prompt's ``messages`` ...) is absent from its stored mapping, where this tuner's study file
yields the key with its default. Compared as stored, the file a study was created from read as
"a different config" after an upgrade (QA: studies made by the tuner of 2026-11-30 and 2026-12-01,
``tuner study run`` on their own file: ``bench.lossless differs``, ``bench differs``). Compared here
after both are read by the current schema, an absent key is its default, as :func:`tuner.engine.
study.config_from_study` has always read it when a stored study runs.

Reads only: nothing here writes a stored attribute back (a study is not quietly rewritten in this
tuner's form, which an older worker on the same storage could no longer read).
"""

from __future__ import annotations

from ..config.space import SearchSpaceConfig
from ..config.study import study_from_dict
from ..config.suite import SHIPPED_SUITES, Suite
from ..config.yamlfile import ConfigError, parse_model


def current_config(stored: dict) -> dict:
    """``stored`` (a study config as stored) with the current schema's defaults for the keys it
    lacks; as it is when this tuner cannot read it (the comparison then names what differs)."""
    try:
        data = study_from_dict(stored).model_dump(mode="json")
    except (ConfigError, TypeError, ValueError):
        return stored
    # the storage URL and workdir are never stored (None): kept as stored
    data["storage"], data["workdir"] = stored.get("storage"), stored.get("workdir")
    return data


def current_space(stored: dict | None) -> dict | None:
    return _current(SearchSpaceConfig, stored, "<stored search space>")


def current_suite(stored: dict | None) -> dict | None:
    return _current(Suite, stored, "<stored suite>")


def _current(model, stored: dict | None, source: str) -> dict | None:
    if not isinstance(stored, dict):
        return stored
    try:
        return parse_model(model, stored, source).model_dump(mode="json")
    except (ConfigError, TypeError, ValueError):
        return stored


def newer_tuner_key(config: object, space: object, suite: object) -> str | None:
    """The first key of a study's stored ``config``, ``space`` or ``suite`` that this tuner's schema
    does not know, as ``"config server.x"``; None when it knows
    them all. Every tuner since 2026-11-30 reads what the earlier ones stored (a key added since
    counts as its default), so a key unknown here was stored by a newer tuner, one a worker of the
    study already runs: this one would misread the study (QA, qa173: ``tuner study run`` on its own
    file said 'the study exists with a different config (server.X differs); use a new study name or
    the original file', and ``--study NAME`` '<stored study config>: server.X: unknown key')."""
    for data, model, what in ((config, None, "config"), (space, SearchSpaceConfig, "search space"),
                              (suite, Suite, "suite")):
        if not isinstance(data, dict):
            continue
        try:
            if model is None:
                study_from_dict(data)
            else:
                parse_model(model, data, f"<stored {what}>")
        except ConfigError as exc:
            if exc.message.startswith("unknown key") and exc.key:
                return f"{what} {exc.key}"
        except (TypeError, ValueError):
            continue
    return None


def newer_tuner_line(key: str) -> str:
    """What a worker says of a study whose stored ``key`` (:func:`newer_tuner_key`) it does not know."""
    return (f"stored by a newer tuner: its {key} is unknown to this one; upgrade this tuner to the "
            "version the study's other workers run (every worker of a study runs that version)")


def changed_shipped_suite(file_suite: object, stored_suite: object) -> str | None:
    """The shipped suite's name when the study file names one (``bench.suite: quick``) and the study
    stored that suite as an earlier tuner shipped it (the same name, other contents): the file
    did not change, the package did (QA: ``quick``'s ``timeout_s`` was 60 until 2026-12-01)."""
    if (isinstance(file_suite, str) and file_suite in SHIPPED_SUITES and isinstance(stored_suite, dict)
            and stored_suite.get("name") == file_suite):
        return file_suite
    return None
