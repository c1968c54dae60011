"""A landscape table (``FILE.json``): the true figures of every setting of a search space.

A landscape replays a grid measured once (on a real node, or written by a model) as the
``server.backend: model`` backend of a study and as a test landscape of
``benchmarks/search_efficiency.py``. The format (the README, "How the tuner searches")::

    {"name": "my-node", "concurrency": 32,
     "baseline": {"single_tok_per_s": 26.2, "tok_per_s@32": 808.7},
     "configs": [{"num_steps": 1, "eagle_topk": 1, "num_draft_tokens": 2, "accept_length": 1.8,
                  "single_tok_per_s": 43.6, "tok_per_s@32": 833.3}, ...]}

* ``concurrency``: one sweep concurrency or a list of them; the baseline and every config give
  ``tok_per_s@C`` for each (aggregate tok/s) and ``single_tok_per_s`` (mean single-request tok/s),
  each from :data:`MIN_TOK_PER_S` to :data:`MAX_TOK_PER_S`.
* ``configs``: one row per *effective* setting, as SGLang runs it (topk 1 runs steps + 1 draft
  tokens; a tree larger than its steps and topk can draft fails): a row SGLang would not run as
  written is an error that names what it runs instead. ``accept_length`` (mean accepted tokens per
  verify step, bonus token included) is optional.
  A row may give ``failure`` (one of :data:`LAUNCH_FAILURES`, e.g. ``"oom"``) in place of figures:
  the setting was launched and failed so, and a study's launch of it fails so.
* A key given as null is a key not given (a table written from a data frame holds every column in
  every row): ``"failure": null`` marks a measured row; a null figure a measured row needs is refused.
* ``load_s`` (optional): seconds a server launch takes before the suite runs (model load), for the
  modelled duration of a measurement.
* ``description`` (optional): free text.

The listed settings (measured or failed) are the grid the table holds: the default search proposes
no other, and a setting of the study's space that is not in the table fails at launch
(``not_in_landscape``) when another sampler proposes it.
Validation happens once, in :func:`load_landscape`: any problem is one :class:`ConfigError` line
naming the file and the key (``configs[3].tok_per_s@32``).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..sglang.rules import SpecConfig, resolve
from .names import name_problem
from .yamlfile import (MAX_DURATION_S, ConfigError, RepeatedKey, lone_surrogate, no_repeated_keys,
                       read_text_capped, surrogate_message)

_SPEC_KEYS = ("num_steps", "eagle_topk", "num_draft_tokens")
_TOP_KEYS = ("name", "description", "concurrency", "baseline", "configs", "load_s")
_THROUGHPUT = re.compile(r"tok_per_s@([1-9][0-9]*)")  #: one spelling per level: tok_per_s@032 is no key
#: The failure classes a row may replay (README, "Failure classes"): how a launch of the setting
#: failed on the node the grid was measured on.
LAUNCH_FAILURES = ("oom", "invalid_args", "spec_runtime", "nccl", "startup_timeout", "crash_after_ready",
                   "hung", "request_errors", "bad_response", "args_unverified", "args_mismatch", "other")


@dataclass(frozen=True)
class LandscapeFigures:
    """One row's figures: single-request tok/s, aggregate tok/s per concurrency, accept length."""

    single_tok_per_s: float
    tok_per_s: dict[int, float]
    accept_length: float | None = None


@dataclass(frozen=True)
class LandscapeTable:
    """A validated landscape table. ``configs`` maps each effective setting to its figures."""

    name: str
    source: str
    concurrencies: tuple[int, ...]
    baseline: LandscapeFigures
    configs: dict[SpecConfig, LandscapeFigures] = field(default_factory=dict)
    load_s: float | None = None
    description: str = ""
    sha256: str = ""  #: of the file's bytes ("" for a table built in memory)
    #: settings listed as failed at launch, and how (:data:`LAUNCH_FAILURES`)
    failures: dict[SpecConfig, str] = field(default_factory=dict)

    @property
    def listed(self) -> frozenset[SpecConfig]:
        """Every setting the table lists, measured or failed: the grid it holds."""
        return frozenset(self.configs) | frozenset(self.failures)

    def speedups(self, spec: SpecConfig) -> dict[str, float]:
        """``single_speedup`` and ``speedup@C`` of a row against the table's baseline."""
        row = self.configs[spec]
        out = {"single_speedup": row.single_tok_per_s / self.baseline.single_tok_per_s}
        for c in self.concurrencies:
            out[f"speedup@{c}"] = row.tok_per_s[c] / self.baseline.tok_per_s[c]
        return out

    def to_dict(self) -> dict[str, Any]:
        """The table in its file format (what :func:`load_landscape` reads back)."""
        def figures(f: LandscapeFigures) -> dict[str, Any]:
            out: dict[str, Any] = {"single_tok_per_s": f.single_tok_per_s}
            if f.accept_length is not None:
                out["accept_length"] = f.accept_length
            out.update({f"tok_per_s@{c}": v for c, v in sorted(f.tok_per_s.items())})
            return out

        data: dict[str, Any] = {"name": self.name}
        if self.description:
            data["description"] = self.description
        data["concurrency"] = self.concurrencies[0] if len(self.concurrencies) == 1 else list(self.concurrencies)
        if self.load_s is not None:
            data["load_s"] = self.load_s
        data["baseline"] = figures(self.baseline)
        rows = {spec: {**spec.as_dict(), **figures(f)} for spec, f in self.configs.items()}
        rows.update({spec: {**spec.as_dict(), "failure": cls} for spec, cls in self.failures.items()})
        data["configs"] = [rows[spec] for spec in sorted(rows)]
        return data


class _NonFinite(float):
    """A JSON number no float holds (``1e309`` overflows to inf) or a constant JSON does not have
    (``NaN``, ``Infinity``: Python's reader takes them), kept with its text so the message quotes what
    the file says rather than ``inf``."""

    text: str

    def __new__(cls, text: str):
        out = super().__new__(cls, text)
        out.text = text
        return out


def _parse_float(text: str) -> float:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


def _number(source, key: str, value: Any, minimum: float = 0.0, strict: bool = True) -> float:
    if isinstance(value, _NonFinite):
        constant = value.text.lstrip("-") in ("NaN", "Infinity")
        what = "is not JSON" if constant else "is beyond what a float holds"
        raise ConfigError(source, key, f"{value.text} {what}; give the figure as a finite number")
    try:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    except OverflowError:  # an integer of hundreds of digits: no float holds it
        raise ConfigError(source, key, f"expected a number, got an integer of {len(str(value))} digits") from None
    if not ok or (value <= minimum if strict else value < minimum):
        bound = f"above {minimum:g}" if strict else f"at least {minimum:g}"
        raise ConfigError(source, key, f"expected a number {bound}, got {value!r}")
    return float(value)


#: The range a tok/s figure may take: a thousandth of a token a second to a billion. Outside it the
#: figure is no server's (a unit slip), and the arithmetic of a measurement is not safe: a noisy
#: reading of 1e308 overflows, a suite at 1e-320 tok/s takes infinite modelled time.
MIN_TOK_PER_S, MAX_TOK_PER_S = 1e-3, 1e9


def _rate(source, key: str, value: Any) -> float:
    """A tok/s figure: a number above 0, from :data:`MIN_TOK_PER_S` to :data:`MAX_TOK_PER_S`."""
    value = _number(source, key, value)
    if not MIN_TOK_PER_S <= value <= MAX_TOK_PER_S:
        raise ConfigError(source, key, f"{value:g} tok/s is no server's figure: expected at least "
                          f"{MIN_TOK_PER_S:g} and at most {MAX_TOK_PER_S:g} tok/s (check the unit)")
    return value


def _figures(source, key: str, data: Any, concurrencies: tuple[int, ...], allowed: set[str]) -> LandscapeFigures:
    if not isinstance(data, dict):
        raise ConfigError(source, key, f"expected a mapping of figures, got {type(data).__name__}")
    nulls = {name for name, v in data.items() if v is None}  # a key given as null is a key not given
    data = {name: v for name, v in data.items() if v is not None}
    needed = ("null: a measured row needs this figure; give it, or the row's failure" if key != "baseline"
              else "null: the baseline needs this figure; give it")
    for name in data:
        if name not in allowed and not _THROUGHPUT.fullmatch(str(name)):
            raise ConfigError(source, f"{key}.{name}", f"unknown key; expected {', '.join(sorted(allowed))} "
                              f"or tok_per_s@C")
        m = _THROUGHPUT.fullmatch(str(name))
        if m and int(m.group(1)) not in concurrencies:
            raise ConfigError(source, f"{key}.{name}", f"concurrency {m.group(1)} is not in the table's "
                              f"concurrency ({', '.join(map(str, concurrencies))}); add it there or drop the key")
    if "single_tok_per_s" not in data:
        raise ConfigError(source, f"{key}.single_tok_per_s",
                          needed if "single_tok_per_s" in nulls else "required key is missing")
    single = _rate(source, f"{key}.single_tok_per_s", data["single_tok_per_s"])
    tps = {}
    for c in concurrencies:
        name = f"tok_per_s@{c}"
        if name in nulls:
            raise ConfigError(source, f"{key}.{name}", needed)
        if name not in data:
            raise ConfigError(source, f"{key}.{name}", f"required key is missing (the table's concurrency "
                              f"includes {c})")
        tps[c] = _rate(source, f"{key}.{name}", data[name])
    accept = data.get("accept_length")
    if accept is not None:
        accept = _number(source, f"{key}.accept_length", accept, 1.0, strict=False)
    return LandscapeFigures(single, tps, accept)


def _spec(source, key: str, row: dict) -> SpecConfig:
    values = []
    for name in _SPEC_KEYS:
        v = row.get(name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            got = "it is missing" if name not in row else "null" if v is None else repr(v)
            raise ConfigError(source, f"{key}.{name}", f"expected a positive integer, got {got}")
        values.append(v)
    spec = SpecConfig(*values)
    res = resolve(spec)
    if not res.ok:
        raise ConfigError(source, key, f"{spec.label()} cannot run ({res.violation.rule}: "
                          f"{res.violation.message}); drop the row")
    if res.effective != spec:
        raise ConfigError(source, key, f"{spec.label()} is not what SGLang runs: it runs "
                          f"{res.effective.label()}; list effective settings only")
    return spec


#: How far a speedup may exceed the accept length before it cannot be true. A speculative step
#: commits ``accept_length`` tokens per request on average (SGLang's own figure:
#: ``completion_tokens / spec_verify_ct``, managers/tokenizer_manager.py) and costs at least one
#: forward of the target model (the verify, ``speculative/eagle_worker.py``) plus the draft's, while
#: an autoregressive step commits one token for one forward: so no setting runs faster than
#: ``accept_length`` times the baseline, at one request or at many. On every landscape of the search
#: benchmark (the simulator's model and three families written apart from it) the largest ratio is
#: 0.96; the margin above 1 leaves room for the run-to-run noise of both measurements.
#: Applied here to a table's true figures, and by ``tuner.engine.outcome.speedup_problem`` to a
#: measured trial (the engine imports it from here: the config layer cannot import the engine).
SPEEDUP_BOUND = 1.25


def most_accepted(spec: SpecConfig) -> int:
    """The most tokens one verify step of ``spec`` can commit: the drafted path, at most
    ``num_steps`` deep and at most the tree's ``num_draft_tokens - 1`` drafted nodes, plus the bonus
    token (SGLang 0.5.23 ``speculative/eagle_utils.py``, ``organize_draft_results``: the verified tree
    is the root and the ``num_draft_tokens - 1`` best candidates)."""
    return min(spec.num_steps + 1, spec.num_draft_tokens)


def _check_row(source, key: str, spec: SpecConfig, row: LandscapeFigures, baseline: LandscapeFigures) -> None:
    """A row's figures that cannot be true: an accept length above what ``spec`` can accept, or a
    speedup over the baseline above :data:`SPEEDUP_BOUND` times the accept length (the row's, else
    the most ``spec`` can accept). QA: a row at 190x its baseline, and a baseline at 0.5 tok/s that
    made every row 100x, were replayed as measurements."""
    most = most_accepted(spec)
    accept = row.accept_length
    if accept is not None and accept > most:
        raise ConfigError(source, f"{key}.accept_length", f"{accept:g} tokens per verify step is more than "
                          f"{spec.label()} can accept (num_steps + 1 = {spec.num_steps + 1}, "
                          f"num_draft_tokens = {spec.num_draft_tokens}: at most {most})")
    bound, what = (accept, f"its accept length {accept:g}") if accept is not None else \
        (most, f"no accept length and at most {most} tokens per verify step")
    pairs = [("single_tok_per_s", row.single_tok_per_s, baseline.single_tok_per_s)]
    pairs += [(f"tok_per_s@{c}", v, baseline.tok_per_s[c]) for c, v in sorted(row.tok_per_s.items())]
    name, value, base = max(pairs, key=lambda p: p[1] / p[2])
    if value / base > SPEEDUP_BOUND * bound:
        raise ConfigError(source, f"{key}.{name}", f"{value:g} tok/s is {value / base:.2f}x the baseline's "
                          f"{base:g} (baseline.{name}) for {spec.label()} with {what}: no setting runs "
                          f"more than {SPEEDUP_BOUND:g} x its accept length faster than the autoregressive "
                          "baseline; check this figure and the baseline's (a unit slip, a swapped column)")


def parse_landscape(data: Any, source: str | Path) -> LandscapeTable:
    """Validate a loaded landscape table; :class:`ConfigError` names ``source`` and the key."""
    if not isinstance(data, dict):
        raise ConfigError(source, "", f"expected a JSON object at the top level, got {type(data).__name__}")
    for name in data:
        if name not in _TOP_KEYS:
            raise ConfigError(source, str(name), f"unknown key; expected one of: {', '.join(_TOP_KEYS)}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(source, "name", f"expected a non-empty string, got {name!r}")
    for key in ("name", "description"):
        bad = lone_surrogate(data.get(key)) if isinstance(data.get(key), str) else None
        if bad is not None:
            raise ConfigError(source, key, surrogate_message(data[key], bad))
    bad_name = name_problem(name)
    if bad_name is not None:  # the name heads tables and report lines: a newline would split them
        raise ConfigError(source, "name", bad_name)
    conc = data.get("concurrency")
    conc_list = conc if isinstance(conc, list) else [conc]
    if not conc_list or any(not isinstance(c, int) or isinstance(c, bool) or c < 1 for c in conc_list) \
            or len(set(conc_list)) != len(conc_list):
        raise ConfigError(source, "concurrency", f"expected a positive integer or a list of distinct ones, "
                          f"got {conc!r}")
    concurrencies = tuple(sorted(conc_list))
    from .suite import MAX_CONCURRENCY

    if concurrencies[-1] > MAX_CONCURRENCY:  # no suite sweeps it, so no study reads it (QA: 10**30 loaded)
        raise ConfigError(source, "concurrency", f"{concurrencies[-1]} is more than the tuner's cap of "
                          f"{MAX_CONCURRENCY} requests at once; give the concurrencies the grid was "
                          "measured at")
    load_s = data.get("load_s")
    if load_s is not None:
        load_s = _number(source, "load_s", load_s, 0.0, strict=False)
        if load_s > MAX_DURATION_S:
            raise ConfigError(source, "load_s", f"{load_s:g} s is longer than a year; give the seconds a launch "
                              "takes before the suite runs")
    description = data.get("description") if data.get("description") is not None else ""
    if not isinstance(description, str):
        raise ConfigError(source, "description", f"expected a string, got {description!r}")
    if "baseline" not in data:
        raise ConfigError(source, "baseline", "required key is missing")
    baseline = _figures(source, "baseline", data["baseline"], concurrencies, {"single_tok_per_s", "accept_length"})
    if baseline.accept_length not in (None, 1.0):  # QA: 3.0 loaded, and was never read
        raise ConfigError(source, "baseline.accept_length", f"{baseline.accept_length:g}: the "
                          "autoregressive baseline commits one token per forward (accept length 1); give 1 "
                          "or leave the key out")
    rows = data.get("configs")
    if not isinstance(rows, list) or not rows:
        raise ConfigError(source, "configs", "expected a non-empty list of settings with their figures")
    configs: dict[SpecConfig, LandscapeFigures] = {}
    failures: dict[SpecConfig, str] = {}
    index: dict[SpecConfig, int] = {}
    allowed = {"single_tok_per_s", "accept_length"}
    for i, row in enumerate(rows):
        key = f"configs[{i}]"
        if not isinstance(row, dict):
            raise ConfigError(source, key, f"expected a mapping, got {type(row).__name__}")
        spec = _spec(source, key, row)
        if spec in index:  # QA: it named only the second row; which figures are right is the user's call
            raise ConfigError(source, key, f"{spec.label()} is listed twice (configs[{index[spec]}] and "
                              f"{key}); keep one row per setting")
        index[spec] = i
        # a key given as null is a key not given: a table written from a data frame (pandas'
        # ``to_json(orient="records")``) holds every column in every row, null where a row has no
        # value -- ``"failure": null`` on each measured row, null figures beside each failure. QA: such
        # a grid was refused, its first measured row told "None is no failure class; give one of oom, ..."
        figures = {k: v for k, v in row.items() if k not in _SPEC_KEYS}
        if figures.get("failure") is not None:
            failures[spec] = _failure(source, key, spec, {k: v for k, v in figures.items() if v is not None})
            continue
        try:
            configs[spec] = _figures(source, key, figures, concurrencies, allowed)
        except ConfigError as exc:  # the row by its index and its flags: a grid is found by its flags
            raise ConfigError(source, exc.key, f"{exc.message} (the row of {spec.label()})") from None
        _check_row(source, key, spec, configs[spec], baseline)
    if not configs:
        raise ConfigError(source, "configs", f"all {len(failures)} rows are failures: a table needs at least "
                          "one measured setting")
    return LandscapeTable(name.strip(), str(source), concurrencies, baseline, configs, load_s, description,
                          failures=failures)


def _failure(source, key: str, spec: SpecConfig, row: dict) -> str:
    """A failed row's class: one of :data:`LAUNCH_FAILURES`, and no figure beside it."""
    cls = row["failure"]
    if not isinstance(cls, str) or cls not in LAUNCH_FAILURES:
        raise ConfigError(source, f"{key}.failure", f"{cls!r} is no failure class; give one of "
                          f"{', '.join(LAUNCH_FAILURES)} (the row of {spec.label()})")
    extra = sorted(k for k in row if k != "failure")
    if extra:
        raise ConfigError(source, f"{key}.{extra[0]}", f"a failed setting has no figures; give the failure or the "
                          f"figures (the row of {spec.label()})")
    return cls


def load_landscape(path: str | Path) -> LandscapeTable:
    """Read and validate a landscape table file (JSON); :class:`ConfigError` for any problem."""
    path = Path(path)
    text = read_text_capped(path, MAX_TABLE_BYTES)  # bounded like every file read on a user's word
    try:
        # a leading byte-order mark (a Windows editor's) read as the YAML files' and datasets' are:
        # json refused it, saying "decode using utf-8-sig" (QA: the fuzz of test_fuzz_inputs.py)
        data = json.loads(text.removeprefix("\ufeff"), object_pairs_hook=no_repeated_keys,
                          parse_float=_parse_float, parse_constant=_NonFinite)
    except json.JSONDecodeError as exc:
        raise ConfigError(path, f"line {exc.lineno}", f"not valid JSON ({exc.msg})") from None
    except RepeatedKey as exc:
        raise ConfigError(path, str(exc), RepeatedKey.FIX) from None
    except RecursionError:
        raise ConfigError(path, "", "nested too deeply to read; a table is an object of rows") from None
    except ValueError as exc:  # an integer past Python's digit cap for int() of a string
        raise ConfigError(path, "", f"holds a number Python will not read ({exc}); a figure needs no such number") from None
    table = parse_landscape(data, path)
    return replace(table, sha256=hashlib.sha256(text.encode()).hexdigest())


#: A landscape table's size cap: a grid of every setting of a large space (tens of thousands of
#: rows) fits; a wrong path to a model file does not read gigabytes.
MAX_TABLE_BYTES = 64 << 20


def missing_accept_note(table: LandscapeTable, source: str) -> str | None:
    """One warning line for a table some of whose measured rows give no ``accept_length`` (None:
    every one gives it). The default search (``sampler: auto``, ``tuner.engine.structured``) models
    a speedup as accept length over step time only when every reading has one; else it models the
    speedups directly for the whole study, and finds the optima less often: the figures are the
    README's ("Replaying a landscape: the table format"), with the benchmark command they came from."""
    missing = sum(row.accept_length is None for row in table.configs.values())
    n = len(table.configs)
    which = f"all {n} measured rows lack" if missing == n else f"{missing} of its {n} measured rows lack"
    return None if not missing else (
        f"warning: {source}: {which} accept_length, so the default search models the speedups without it "
        "(on the benchmark's train set, 3 seeds at 2% noise, its exported picks were within 3% of both optima "
        "in 87% of runs without accept lengths, all rows or half, against 94% with them); give each row's "
        "accept_length (SGLang's spec_accept_length, or completion_tokens / spec_verify_ct)")
