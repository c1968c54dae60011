"""Loading YAML files into validated, typed objects, with one-line errors that name file and key.

Every file the tuner reads (study, search space, suite, simulator profile) goes through
:func:`load_model`: ``yaml.safe_load``, then a strict pydantic model that forbids unknown keys. Any
problem raises :class:`ConfigError`, whose ``str()`` is the one line the CLI prints before exiting 2.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Iterable, TypeVar, get_args

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

M = TypeVar("M", bound=BaseModel)


class ConfigError(ValueError):
    """Bad input in a file or on the command line: ``FILE: KEY: what is expected``."""

    def __init__(self, source: str | Path, key: str, message: str):
        self.source, self.key, self.message = str(source), key, message
        where = f"{self.source}: {key}" if key else self.source
        super().__init__(f"{where}: {message}")


class StrictModel(BaseModel):
    """Base of every file schema: unknown keys are errors, no silent type coercion, immutable."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``" (did you mean 'quick'?)"`` for the closest of ``choices`` (difflib), else ``""``."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model an annotation holds (itself, or inside Optional/Union/list), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _keys_at(model: type[BaseModel] | None, loc: tuple) -> list[str]:
    """The keys the schema allows where ``loc`` points (the unknown key's siblings)."""
    current = model
    for part in loc:
        if isinstance(part, int) or current is None:
            continue  # a list index: the list's items have the same schema
        field = current.model_fields.get(part)
        current = _model_in(field.annotation) if field is not None else None
    return list(current.model_fields) if current is not None else []


def _key_path(loc: tuple) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif not parts:
            parts.append(str(item))
        else:
            parts.append(f".{item}")
    return "".join(parts)


def _plain(err: dict, allowed: list[str] | None = None) -> str:
    """Pydantic's message, phrased for a YAML author (the input's type, not Python internals);
    an unknown key names the closest allowed one (``allowed``: the keys valid at that place)."""
    kind, msg = err["type"], err["msg"]
    if kind == "extra_forbidden":
        unknown = err["loc"][-1] if err["loc"] else ""
        hint = did_you_mean(unknown, allowed or [])
        if hint:
            return f"unknown key{hint}"
        if allowed:
            return f"unknown key; expected one of: {', '.join(allowed)}"
        return "unknown key; check its spelling against the README"
    if kind == "missing":
        return "required key is missing"
    got = err.get("input")
    if kind.endswith("_type") and got is not None and not isinstance(got, (dict, list)):
        return f"{msg[0].lower()}{msg[1:]}, got {got!r}"
    return msg[0].lower() + msg[1:] if msg else kind


#: Names pydantic puts in an error's location for union members and tags; not keys of the file.
_UNION_TAGS = {"str", "int", "float", "bool", "list[...]", "dict[...]", "range", "choices"}


def validation_error(source: str | Path, exc: ValidationError,
                     model: type[BaseModel] | None = None) -> ConfigError:
    """The first error of a pydantic ``ValidationError`` as a :class:`ConfigError`; with the
    ``model`` that failed, an unknown key gets a "did you mean" from the keys allowed there."""
    err = exc.errors()[0]
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
    # Union members appear in the location (e.g. 'str', 'int'); they mean nothing to a YAML author.
    loc = tuple(p for p in loc if p not in _UNION_TAGS)
    allowed = _keys_at(model, loc[:-1]) if err["type"] == "extra_forbidden" and model is not None else None
    msg = _plain({**err, "loc": loc}, allowed)
    if err["type"] == "value_error":
        msg = str(err.get("ctx", {}).get("error", msg))
    return ConfigError(source, _key_path(loc), msg)


def read_text(path: str | Path) -> str:
    """A file's text; a missing or unreadable file becomes :class:`ConfigError`."""
    path = Path(path)
    try:
        return path.read_text()
    except FileNotFoundError:
        raise ConfigError(path, "", "file not found; check the path") from None
    except OSError as exc:
        raise ConfigError(path, "", f"cannot read: {exc.strerror}") from None


def read_yaml(path: str | Path) -> Any:
    """``yaml.safe_load`` of a file; missing files and bad YAML become :class:`ConfigError`."""
    path = Path(path)
    text = read_text(path)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else ""
        raise ConfigError(path, where, f"not valid YAML ({getattr(exc, 'problem', exc)})") from None


def parse_model(model: type[M], data: Any, source: str | Path, context: dict | None = None) -> M:
    """Validate already-loaded data against ``model``; errors name ``source``."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(source, "", f"expected a mapping at the top level, got {type(data).__name__}")
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        raise validation_error(source, exc, model) from None


def load_model(model: type[M], path: str | Path, context: dict | None = None) -> M:
    """Read and validate one YAML file. ``context`` reaches validators (e.g. the file's folder)."""
    path = Path(path)
    ctx = {"path": path, **(context or {})}
    return parse_model(model, read_yaml(path), path, ctx)
