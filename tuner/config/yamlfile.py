"""Loading YAML files into validated, typed objects, with one-line errors that name file and key.

Every file the tuner reads (study, search space, suite, simulator profile) goes through
:func:`load_model`: read bounded (:func:`read_yaml`: a regular file under a size cap, UTF-8, no YAML
aliases), ``yaml`` safe-loaded, then a strict pydantic model that forbids unknown keys. Any
problem raises :class:`ConfigError`, whose ``str()`` is the one line the CLI prints before exiting 2.

Why one module: how a file named on a user's word is read (regular file, size cap, UTF-8, repeated
keys, lone surrogates) and how a refusal reads are one contract; a dataset read in pieces
(:mod:`tuner.config.dataset`) uses the same checks and messages from here, so split modules would
only import each other.
"""

from __future__ import annotations

import difflib
import math
import re
import stat
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, TypeVar, get_args

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

M = TypeVar("M", bound=BaseModel)


class ConfigError(ValueError):
    """Bad input in a file or on the command line: ``FILE: KEY: what is expected``. Its text (``str()``)
    is one line with the characters that would drive a terminal or reorder the line escaped
    (:func:`tuner.config.names.shown`: a key or a file name holding U+202E or ESC); ``source``, ``key``
    and ``message`` stay as given."""

    def __init__(self, source: str | Path, key: str, message: str):
        from .names import shown

        self.source, self.key, self.message = str(source), key, message
        where = f"{self.source}: {key}" if key else self.source
        super().__init__(shown(f"{where}: {message}"))


class StrictModel(BaseModel):
    """Base of every file schema: unknown keys are errors, no silent type coercion, immutable, and
    every float finite (YAML's ``.nan`` and ``.inf`` would pass every ``gt``/``le`` bound they are
    compared with, or turn a timeout into "never"). Protected names: pydantic 2.10's, as pydantic<2.10
    protects ``model_*`` and warns at import on ``model_path``."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False,
                              protected_namespaces=("model_validate", "model_dump"))


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``" (did you mean 'quick'?)"`` for the closest of ``choices`` (difflib), else ``""``."""
    choices = [str(c) for c in choices]
    close = difflib.get_close_matches(str(word), choices, n=1, cutoff=0.6)
    if not close:  # another case or dashes (`SERVER`, `model-path`): compared as the keys are spelt
        spelt = {c.lower().replace("-", "_"): c for c in choices}
        close = [spelt[c] for c in difflib.get_close_matches(str(word).lower().replace("-", "_"), list(spelt),
                                                              n=1, cutoff=0.6)]
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


#: What a key of each pydantic type error takes, for a key left empty.
_EXPECTED = {"model_type": "a mapping", "model_attributes_type": "a mapping", "dict_type": "a mapping",
             "list_type": "a list", "string_type": "a string", "int_type": "an integer"}


def _plain(err: dict, allowed: list[str] | None = None) -> str:
    """Pydantic's message, phrased for a YAML author (the input's type, not Python internals);
    an unknown key names the closest allowed one (``allowed``: the keys valid at that place)."""
    kind, msg = err["type"], err["msg"]
    if kind == "extra_forbidden":
        unknown = err["loc"][-1] if err["loc"] else ""
        if unknown == "":  # `"": x`: the line would name no key at all (QA: "x.yaml: unknown key; ...")
            return ("the empty key ('') is unknown; " + (f"expected one of: {', '.join(allowed)}" if allowed
                                                         else "write the key, or remove the line"))
        hint = did_you_mean(unknown, allowed or [])
        if hint:
            return f"unknown key{hint}"
        if allowed:
            return f"unknown key; expected one of: {', '.join(allowed)}"
        return "unknown key; check its spelling against the README"
    if kind == "missing":
        return "required key is missing"
    if kind == "finite_number":
        return f"must be a finite number, got {err.get('input')!r}"
    got = err.get("input")
    if kind == "bool_type" and isinstance(got, str):  # YAML 1.1's yes/no/on/off/y/n: text in YAML 1.2
        return (f"expected true or false, got {got!r} (these files are read as YAML 1.2, where {got} is "
                "text, not a boolean)")
    # the file's words, not Python's: no "or instance of BudgetSettings" (a class no file names)
    msg = re.sub(r" or instance of \w+", "", msg)
    if kind.endswith("_type") and got is None and "input" in err:  # `budget:` with nothing under it
        return f"is empty (YAML null); give {_EXPECTED.get(kind, 'a value')}, or remove the key"
    if _EXPECTED.get(kind) == "a mapping" and isinstance(got, list):  # QA: "input should be a valid dictionary"
        return (f"expected a mapping (a dictionary: key: value lines under it), got a list of {len(got)}; "
                "write its keys, not '- ' items")
    if kind.endswith("_type") and got is not None and not isinstance(got, (dict, list)):
        return f"{msg[0].lower()}{msg[1:]}, got {got!r}"
    return msg[0].lower() + msg[1:] if msg else kind


#: Names pydantic puts in an error's location for union members and tags; not keys of the file.
_UNION_TAGS = {"str", "int", "float", "bool", "list[...]", "dict[...]", "range", "choices"}


def validation_error(source: str | Path, exc: ValidationError, model: type[BaseModel] | None = None,
                     unquoted: dict[str, str] | None = None) -> ConfigError:
    """The first error of a pydantic ``ValidationError`` as a :class:`ConfigError`; with the
    ``model`` that failed, an unknown key gets a "did you mean" from the keys allowed there; with
    ``unquoted`` (:func:`_check_nodes`'s texts), a number or boolean where text goes says to quote
    it, as written."""
    errors = exc.errors()
    # A NaN given where a union takes a float fails every member; the float's own complaint is the
    # one that says what is wrong (not "input should be a valid boolean").
    err = next((e for e in errors if e["type"] == "finite_number"), errors[0])
    # A required key written another way (`Name:`, `search-space:`) is both missing and unknown; the
    # unknown key is the line to fix, so it is the one reported, with the key it resembles.
    missing = [e["loc"] for e in errors if e["type"] == "missing" and e["loc"] and err["type"] == "missing"]
    err = next((e for e in errors if e["type"] == "extra_forbidden" and e["loc"] and did_you_mean(
        e["loc"][-1], [m[-1] for m in missing if m[:-1] == e["loc"][:-1]])), err)
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
    # Union members appear in the location (e.g. 'str', 'int'); they mean nothing to a YAML author.
    # A member's tag that the next part repeats is a key of the file: a space's `choices` member has
    # the key `choices` (QA: `choices: [1, 2, 4.0]` was named params.speculative_eagle_topk[2]).
    loc = tuple(p for i, p in enumerate(loc) if p not in _UNION_TAGS or (i > 0 and loc[i - 1] == p))
    allowed = _keys_at(model, loc[:-1]) if err["type"] == "extra_forbidden" and model is not None else None
    msg = _plain({**err, "loc": loc}, allowed)
    if err["type"] == "value_error":
        msg = str(err.get("ctx", {}).get("error", msg))
    if err["type"] == "string_type" and isinstance(err.get("input"), (bool, int, float)):
        msg += _quote_hint(err["input"], (unquoted or {}).get(_key_path(loc)))
    if err["type"] in ("int_type", "float_type"):
        msg += _number_hint(err.get("input"), err["type"] == "int_type")
    if err["type"] == "list_type" and isinstance(err.get("input"), (str, int, float)) \
            and not isinstance(err.get("input"), bool) and loc and isinstance(loc[-1], str):
        # `objectives: single_speedup`, `concurrencies: "1, 8, 32"`: the items in brackets are the fix
        # (QA, qa228: "input should be a valid list, got 'single_speedup'", naming no fix)
        msg += f"; write it as a list, in brackets: {loc[-1]}: [{err['input']}]"
    if _EXPECTED.get(err["type"]) == "a mapping" and isinstance(err.get("input"), (str, bool, int, float)):
        # a value where a section goes (`bench: quick`, `sampler: tpe`): the keys it takes are the fix
        # (QA: "bench: input should be a valid dictionary, got 'quick'", naming no key to write)
        keys = _keys_at(model, loc) if model is not None else []
        msg += ("; give a mapping, key: value lines indented under it" +
                (f" (its keys: {', '.join(keys)})" if keys else ""))
    return ConfigError(source, _key_path(loc), msg)


#: A number as YAML writes one plainly, quoted: ASCII digits, a sign, a point, an exponent
_NUMBER_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _number_hint(value: Any, whole: bool) -> str:
    """What to do with a value YAML read where a number goes, but not as one of its type: quoted
    digits (``tp_size: '8'``, read as text) say to remove the quotes, and a float where an integer
    goes (``n_trials: 1e1``, ``10.0``) says the integer to write when it is one. QA (qa228): the line
    said only "input should be a valid integer, got '8'" (or "got 10.0"), naming no fix."""
    text = value.strip() if isinstance(value, str) else ""
    if _NUMBER_TEXT.fullmatch(text) and (not whole or text.lstrip("+-").isdigit()):
        return f"; YAML reads the quoted {value!r} as text: remove the quotes ({text}) to give the number"
    if whole and isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return f"; write it as an integer, {int(value)}, without a decimal point or exponent"
    return ""


def _quote_hint(value: bool | int | float, written: str | None) -> str:
    """What to do with a number or boolean YAML read where text goes (``extra_args: [--random-seed,
    1]``, ``model_path: 0x10``): quote it. QA: the line said only "got 1", and for ``0x10`` "got 16"."""
    kind = "a boolean" if isinstance(value, bool) else "a number"
    text = written if written is not None else str(value).lower() if isinstance(value, bool) else str(value)
    return f"; YAML reads the unquoted {text} as {kind}: quote it ('{text}') to give the text"


# ---- reading files, bounded -------------------------------------------------------------------
#
# Every file the tuner reads on a user's word (study, search space, suite, prompt files, datasets,
# simulator profiles) is read here, so a wrong path or a hostile file fails with one line naming the
# file, before anything is written and before it can eat the machine's memory:
# * not a regular file (``suite: /dev/zero``, a FIFO, a folder): refused before it is opened;
# * larger than its cap: refused from its size, and at most cap + 1 bytes are ever read (a file
#   that grows while it is read is refused too);
# * not UTF-8: refused naming the byte offset;
# * YAML aliases (``*name``) and merge keys (``<<``, with an alias or an inline mapping): refused. An
#   alias is a reference, so a few hundred bytes of nested aliases expand to billions of nodes once
#   the data is walked (the "billion laughs"); no tuner file needs them, so refusing beats any cap on
#   expansions; an inline merge is overridden silently by the mapping's own keys (see _MERGE);
# * YAML nested deeper than Python's recursion limit: refused instead of a ``RecursionError``;
# * a key given twice in one mapping: refused naming the key and both lines. PyYAML keeps the last
#   one silently, so a second ``backend:`` further down a long file would override the first unseen;
# * a lone UTF-16 surrogate (``"\ud800"``, a double-quoted YAML escape): refused naming the key.
#   Python holds it, but it is not text: it cannot be encoded to UTF-8, so every request or
#   argument carrying it would fail far from the file.

#: Largest YAML file (study, search space, suite, profile) or prompt file, in bytes. The shipped
#: files are a few KB; 4 MiB leaves room for long inline prompts and still fails at once on a log or
#: a dataset given by mistake.
MAX_YAML_BYTES = 4 * 1024 * 1024
#: The longest duration a tuner file may give (a budget, a trial's timeout, a model load): a year.
#: Longer is a typo, and a deadline of 10^20 hours overflows the clocks and timers it is added to.
MAX_DURATION_S = 366 * 24 * 3600.0
#: Largest dataset file, in bytes: the full ShareGPT V3 dump (about 640 MB) fits; a dataset is read
#: whole, once, when the study file is loaded.
MAX_DATASET_BYTES = 1024 * 1024 * 1024


def _size_text(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def check_regular_file(path: str | Path, cap: int = MAX_YAML_BYTES) -> None:
    """:class:`ConfigError` naming the file unless it is a regular file of at most ``cap`` bytes."""
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise ConfigError(path, "", "file not found; check the path") from None
    except OSError as exc:
        raise ConfigError(path, "", f"cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ConfigError(path, "", "is a folder; give a file")
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(path, "", "not a regular file (a device, pipe or socket); give a file")
    if st.st_size > cap:
        raise ConfigError(path, "", f"{_size_text(st.st_size)}, over the {_size_text(cap)} limit for "
                                    "this kind of file; check the path")


def grew_past(path: str | Path, cap: int) -> ConfigError:
    """The error for a file that grew past ``cap`` bytes while it was read."""
    return ConfigError(path, "", f"grew past the {_size_text(cap)} limit while being read")


def read_bytes_capped(path: str | Path, cap: int = MAX_YAML_BYTES) -> bytes:
    """A regular file's bytes, at most ``cap`` of them; :class:`ConfigError` naming the file otherwise."""
    path = Path(path)
    check_regular_file(path, cap)
    try:
        with open(path, "rb") as f:
            raw = f.read(cap + 1)
    except OSError as exc:
        raise ConfigError(path, "", f"cannot read: {exc.strerror or exc}") from None
    if len(raw) > cap:
        raise grew_past(path, cap)
    return raw


def decode_utf8(raw: bytes, path: str | Path) -> str:
    """``raw`` as text; :class:`ConfigError` naming the file and the first bad byte otherwise."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8(path, exc.start) from None


def not_utf8(path: str | Path, offset: int, where: str = "") -> ConfigError:
    """The error for a file whose byte ``offset`` (from its start) is the first that is not UTF-8;
    ``where``: the line that holds it, when the reader counted lines (a dataset)."""
    return ConfigError(path, where, f"not UTF-8 text (byte {offset}); save the file as UTF-8")


def text_mode(text: str) -> str:
    """``text`` as Python's text mode reads a file: a leading UTF-8 byte-order mark (which some
    editors write) dropped, and CRLF and lone CR line ends read as LF (universal newlines). A
    prompt file is read so: the request a Windows editor's file sends is the one a Unix editor's
    sends, as a dataset's requests are (its reader drops the mark and the CR of each line)."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def read_text_capped(path: str | Path, cap: int = MAX_YAML_BYTES) -> str:
    """A regular file's UTF-8 text, at most ``cap`` bytes (see :func:`read_bytes_capped`)."""
    return decode_utf8(read_bytes_capped(path, cap), path)


class _AliasRefused(yaml.YAMLError):
    """A YAML alias in a tuner file; ``problem_mark`` says where."""

    def __init__(self, mark):
        super().__init__()
        self.problem_mark = mark
        self.problem = "aliases (*name) are not supported; write the value out"


def lone_surrogate(text: str) -> int | None:
    """The index of the first lone UTF-16 surrogate in ``text`` (JSON's and YAML's ``\\ud800``
    escapes make them), or None when ``text`` is real Unicode text, encodable as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def surrogate_message(text: str, index: int) -> str:
    """The one-line complaint about the lone surrogate at ``text[index]``."""
    return (f"holds a lone UTF-16 surrogate {text[index]!r} (character {index + 1}), which is not "
            "text: no server can encode it; remove it or write the whole character")


class RepeatedKey(ValueError):
    """A key given twice in one JSON object (:func:`no_repeated_keys`); ``str()`` is the key,
    :attr:`FIX` what every reader says of it."""

    FIX = "given twice in one object (JSON would silently keep the last); keep one"


def no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict:
    """``json.loads``'s ``object_pairs_hook`` for every JSON file the tuner reads (landscape tables,
    JSONL datasets): the object, or :class:`RepeatedKey` for a key given twice (plain ``json`` keeps the
    last; catch it before ``ValueError``). Linear: a count per key took 11 s for 34,000 keys (340 kB)."""
    if len(obj := dict(pairs)) != len(pairs):
        counts = Counter(k for k, _ in pairs)
        raise RepeatedKey(next(k for k, _ in pairs if counts[k] > 1))  # the first repeated, in order
    return obj


class _NodeRefused(yaml.YAMLError):
    """A node a tuner file may not hold (see above); ``key`` is its dotted path."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key, self.message = key, message


#: The tag of YAML 1.1's merge key (``<<``). Refused wherever it stands, as aliases are: with no alias
#: to name, a merge only brings in an inline mapping whose keys the mapping's own keys override
#: silently (``server: {<<: {tp_size: 4}, tp_size: 8}`` ran TP 8, and two ``<<`` keys in one mapping
#: kept one of them), which the refusal of a key given twice exists to prevent; YAML 1.2, whose
#: other rules these files follow, has no merge key.
_MERGE = "tag:yaml.org,2002:merge"
_BOOL, _INT, _FLOAT = "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
_NULL, _STR = "tag:yaml.org,2002:null", "tag:yaml.org,2002:str"
#: The tags of the plain scalars YAML reads as something other than text.
_NOT_TEXT = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool")


def _check_nodes(root: yaml.Node, unquoted: dict[str, str] | None = None) -> None:
    """Refuse a key given twice in one mapping and a scalar holding a lone surrogate (see above).
    ``unquoted`` hears the text as written of every plain scalar YAML reads as a number or a boolean
    (``0x10``, ``007``, ``1.50``, ``true``), by dotted path (``server.args.served_model_name``,
    ``server.extra_args[1]``): where a key wants text, what was written, not ``str()`` of the number,
    is what the user meant (:func:`written_numbers`)."""
    # Iterative, children pushed in reverse: the first problem in the file is the one reported.
    stack: list[tuple[yaml.Node, str]] = [(root, "")]
    while stack:
        node, where = stack.pop()
        children: list[tuple[yaml.Node, str]] = []
        if isinstance(node, yaml.ScalarNode):
            bad = lone_surrogate(node.value)
            if bad is not None:
                line = f"line {node.start_mark.line + 1}"
                raise _NodeRefused(where or line, f"{line}: {surrogate_message(node.value, bad)}")
            if unquoted is not None and node.style is None and node.tag in _NOT_TEXT:
                unquoted[where] = node.value
        elif isinstance(node, yaml.SequenceNode):
            children = [(item, f"{where}[{i}]") for i, item in enumerate(node.value)]
        elif isinstance(node, yaml.MappingNode):
            seen: dict[tuple[str, str], int] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):  # a complex key: no dotted name
                    children += [(key_node, where), (value_node, where)]
                    continue
                path = f"{where}.{key_node.value}" if where else str(key_node.value)
                line = key_node.start_mark.line + 1
                if key_node.tag in _NOT_TEXT or key_node.tag == _NULL:
                    raise _NodeRefused(where, f"line {line}: {_key_not_text(key_node)}")
                if key_node.tag == _MERGE:
                    raise _NodeRefused(where, f"line {line}: merge keys (<<) are not "
                                       "supported; write the keys out in this mapping")
                if key_node.tag != _STR:  # an explicit tag (`!!binary`, `!!timestamp`): no key is that
                    raise _NodeRefused(where, f"line {line}: the key {key_node.value} is tagged "
                                       f"{_short_tag(key_node.tag)}, and every key is text: remove the tag")
                ident = (key_node.tag, key_node.value)
                if ident in seen:
                    raise _NodeRefused(path, f"given twice (lines {seen[ident]} and {line}); keep one "
                                             "(YAML would silently use the last)")
                seen[ident] = line
                children += [(key_node, path), (value_node, path)]
        stack.extend(reversed(children))


def _short_tag(tag: str) -> str:
    """A tag as a file writes it: ``tag:yaml.org,2002:binary`` is ``!!binary``."""
    return "!!" + tag.removeprefix("tag:yaml.org,2002:") if tag.startswith("tag:yaml.org,2002:") else tag


def _key_not_text(node: yaml.ScalarNode) -> str:
    """What to say of a mapping key YAML reads as a number, a boolean or null (``1:``, ``true:``,
    ``~:``): every key of a tuner file is text. QA: pydantic's "keys should be strings" named the
    key ``[1]`` (as a list index), ``true:`` too, and said nothing of quoting."""
    kind = {_BOOL: "a boolean", _NULL: "null"}.get(node.tag, "a number")
    if not node.value:
        return "a key is missing before the ':' (YAML reads it as null); write the key, or remove the line"
    return (f"the key {node.value} is read by YAML as {kind}, and every key is text: quote it "
            f"('{node.value}'), or check the spelling")


class _NoAliasLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses an alias where it meets one, before anything is expanded,
    and, before the document is built, a duplicate key or a lone surrogate (:func:`_check_nodes`)."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise _AliasRefused(self.peek_event().start_mark)
        return super().compose_node(parent, index)

    #: :func:`_check_nodes`'s ``unquoted``, filled as the document is read
    unquoted: dict[str, str] | None = None

    def get_single_data(self):
        node = self.get_single_node()
        if node is None:
            return None
        _check_nodes(node, self.unquoted)
        return self.construct_document(node)


# YAML 1.2's core schema, not PyYAML's YAML 1.1: `1:30` was 90 (a base-60 number: `timeout: 1:30`
# read as 90 seconds), `yes`/`on` were true, `012` was 10 (octal), `1_000` was 1000, and `2e3` or
# `1.5e3` were strings. Here booleans are true/false, integers decimal, 0o octal or 0x hex, floats
# as YAML 1.2 writes them (exponents too), and dates are text; anything else is a string, which the
# typed config then refuses by name. The resolvers go on this loader only. YAML 1.1's value key
# (`=`) goes too: PyYAML resolves a plain `=` to it and has no constructor for it (QA: a prompt's
# `text: =` was "not valid YAML (could not determine a constructor for the tag
# 'tag:yaml.org,2002:value')"); in YAML 1.2 it is text.
_YAML_1_1_ONLY = (_BOOL, _INT, _FLOAT, "tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:value")
_NoAliasLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _YAML_1_1_ONLY]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_CORE_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_CORE_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")
_NoAliasLoader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
# the integer's before the float's: a digit string is an integer
_NoAliasLoader.add_implicit_resolver(_INT, _CORE_INT, list("-+0123456789"))
_NoAliasLoader.add_implicit_resolver(_FLOAT, _CORE_FLOAT, list("-+.0123456789"))


def _core_text(loader, node, pattern: re.Pattern, kind: str) -> str:
    """A scalar's text, which an explicit ``!!int``/``!!float`` tag may give in any spelling: one the
    core schema does not write is refused at its line (QA: ``!!int "0b11"`` was "holds a number Python
    will not read (invalid literal for int() ...)", naming no line or key, and ``!!int "1_0"`` or
    Arabic-Indic digits were read by Python's ``int()`` as 10 and 3)."""
    text = loader.construct_scalar(node)
    if not pattern.fullmatch(text):
        how = ("ASCII digits, 0o octal or 0x hex" if pattern is _CORE_INT
               else "ASCII digits with a decimal point or an exponent, .inf or .nan")
        raise yaml.constructor.ConstructorError(None, None, f"!!{kind} {text!r} is not one as YAML 1.2 writes it "
                                                f"({how})", node.start_mark)
    return text


def _core_int(loader, node) -> int:
    text = _core_text(loader, node, _CORE_INT, "int")
    if text.startswith("0x"):
        return int(text, 16)
    return int(text[2:], 8) if text.startswith("0o") else int(text, 10)


def _core_float(loader, node) -> float:
    text = _core_text(loader, node, _CORE_FLOAT, "float").lower()
    if text.endswith(".inf"):
        return float("-inf") if text.startswith("-") else float("inf")
    return float("nan") if text == ".nan" else float(text)


_NoAliasLoader.add_constructor(_INT, _core_int)
_NoAliasLoader.add_constructor(_FLOAT, _core_float)
# A plain `<<` is YAML 1.1's merge key, refused as a key (_check_nodes); as a value it is text, as in
# YAML 1.2 (QA: `text: <<` was "could not determine a constructor for the tag '...:merge'").
_NoAliasLoader.add_constructor(_MERGE, lambda loader, node: loader.construct_scalar(node))


def yaml_text(text: str, unquoted: dict[str, str] | None = None) -> Any:
    """``text``'s data as :func:`read_yaml` reads a file's (YAML 1.2, no aliases, no key given twice);
    PyYAML's errors as they are. For text the tuner writes for itself to read back (a starter's name)."""
    loader = _NoAliasLoader(text)  # what yaml.load does, with the loader's unquoted texts kept
    loader.unquoted = unquoted
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _odd_space(text: str, line: int) -> str:
    """Where PyYAML stopped (0-based ``line``, or the line before, the key's), a space character YAML
    does not take as one: a no-break space (U+00A0, which web pages and word processors put after a
    colon) or another Unicode space. The line looks right; the hint says what is there. QA:
    ``tp_size:\u00a08`` was "line 8: not valid YAML (could not find expected ':')", a line that reads
    ``tp_size: 8``."""
    lines = text.split("\n")
    for n in (line, line - 1):
        if 0 <= n < len(lines):
            odd = next((c for c in lines[n] if c != " " and unicodedata.category(c) == "Zs"), None)
            if odd is not None:
                name = unicodedata.name(odd, "space character").lower()
                return (f"; line {n + 1} holds U+{ord(odd):04X} ({name}), which YAML does not read as a "
                        "space: type a plain space there")
    return ""


def read_yaml(path: str | Path, unquoted: dict[str, str] | None = None) -> Any:
    """A YAML file's data, read bounded (a regular file, size cap, UTF-8, no aliases, no duplicate
    keys, no lone surrogates: see above); a missing, oversized or non-UTF-8 file and bad YAML become
    :class:`ConfigError`. ``unquoted``: filled as :func:`_check_nodes` says."""
    path = Path(path)
    text = read_text_capped(path)
    try:
        return yaml_text(text, unquoted)
    except _NodeRefused as exc:
        raise ConfigError(path, exc.key, exc.message) from None
    except yaml.reader.ReaderError as exc:
        # A control character (NUL, ESC, BEL...) YAML does not allow anywhere: PyYAML's own text
        # spans two lines and counts characters from the start of the file (QA: a two-line error)
        char = exc.character if isinstance(exc.character, int) else ord(exc.character)
        line = text.count("\n", 0, exc.position) + 1
        raise ConfigError(path, f"line {line}", f"not valid YAML (control character U+{char:04X} is not "
                                               "allowed in YAML, not even quoted; remove it)") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else ""
        problem = " ".join(str(getattr(exc, "problem", None) or exc).split())  # one line, whatever PyYAML says
        hint = _odd_space(text, mark.line) if mark else ""
        if mark and str(getattr(exc, "problem", "")) == "but found another document":
            # `---` after the file's mapping (two files pasted together, or a Kubernetes habit): PyYAML's
            # words named neither the marker nor the fix (QA, qa228)
            hint = (f"; line {mark.line + 1} starts a second YAML document ('---'), and a tuner file holds one "
                    "mapping: remove that line and merge the keys below it into the file's, or split the file")
        if mark and "'\\t'" in str(getattr(exc, "problem", "")):  # PyYAML writes the tab as its repr
            # PyYAML's scanner takes no tab where a token may start (an indent, after a colon or a dash):
            # "found character '\t' that cannot start any token" said neither the tab nor the fix (QA, qa228)
            hint = (f"; line {mark.line + 1} holds a tab, which YAML does not take there: indent and separate "
                    "with spaces")
        raise ConfigError(path, where, f"not valid YAML ({problem}){hint}") from None
    except RecursionError:
        raise ConfigError(path, "", "nested too deeply to be a tuner file") from None
    except ValueError as exc:  # Python's cap on int() of a long digit string (sys.set_int_max_str_digits)
        raise ConfigError(path, "", f"holds a number Python will not read ({exc}); no tuner setting needs one") from None


def parse_model(model: type[M], data: Any, source: str | Path, context: dict | None = None) -> M:
    """Validate already-loaded data against ``model``; errors name ``source``."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(source, "", f"expected a mapping at the top level, got {type(data).__name__}")
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        raise validation_error(source, exc, model, (context or {}).get("unquoted")) from None


def load_model(model: type[M], path: str | Path, context: dict | None = None,
               unquoted: dict[str, str] | None = None) -> M:
    """Read and validate one YAML file. ``context`` reaches validators (e.g. the file's folder), with
    ``unquoted``: :func:`_check_nodes`'s texts, which :func:`written_numbers` reads (filled into the
    caller's dict when one is given, for the parts of the file validated later: an inline suite)."""
    path = Path(path)
    unquoted = {} if unquoted is None else unquoted
    data = read_yaml(path, unquoted)
    ctx = {"path": path, "unquoted": unquoted, **(context or {})}
    if data is None:  # no document: an empty file, or one of comments only
        try:
            return parse_model(model, data, path, ctx)
        except ConfigError:
            # the first missing key alone ("name: required key is missing") reads as if the rest of
            # the file were there (QA, qa178: an empty study file said just that)
            required = [k for k, f in model.model_fields.items() if f.is_required()]
            raise ConfigError(path, "", "is empty (or holds only comments): write its keys"
                              + (f", at least {', '.join(required)}" if required else "")) from None
    return parse_model(model, data, path, ctx)


def written_numbers(context: dict | None, prefix: str) -> dict[str, str]:
    """The unquoted numbers and booleans of a file under ``prefix`` (``server.args.``), as written,
    keyed by the rest of their path (``served_model_name``); ``{}`` for data not read from a file
    (a stored study's config)."""
    unquoted = (context or {}).get("unquoted") or {}
    return {key[len(prefix):]: text for key, text in unquoted.items() if key.startswith(prefix)}
