"""What a benchmark run tunes, and the truth it is scored against.

A :class:`Target` is a landscape table on disk (:mod:`tuner.config.landscape`): a run's study reads
it through ``server.backend: model`` exactly as a user's study would. A simulator profile becomes a
table once (``tuner.sim.landscape``: the model's expected figures of every valid setting that fits
in memory), cached under ``--cache`` by the hash of everything the figures depend on, so thousands
of runs evaluate the model once per setting.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPACE = ROOT / "search_spaces" / "eagle3.yaml"
#: figures a profile's table carries: every level of the seed suite's sweep (the modelled duration
#: of a measurement interpolates levels a table lacks)
TABLE_CONCURRENCIES = (1, 2, 4, 8, 16, 32)


@dataclass(frozen=True)
class Truth:
    """The landscape reduced to what scoring needs: true objective values per effective setting."""

    name: str
    objectives: tuple[str, ...]
    values: dict  #: SpecConfig -> tuple of true objective values
    optimum: tuple[float, ...]
    nadir: tuple[float, ...]
    front_hv: float
    n_configs: int
    outside: int = 0  #: the table's rows outside the search space (never proposed, not scored)


@dataclass(frozen=True)
class Target:
    """A landscape to tune: its table file, its label in tables, and which set it belongs to."""

    name: str
    table: Path
    group: str = "given"  #: shipped, train, test, given (a --profiles / --landscape argument)
    family: str = ""  #: generator, A, B, C ... ("" for shipped and given)
    load_s: float | None = None
    #: how the user named it (``--profiles d.yaml``, ``--landscape node.json``; "" for a set's): a
    #: message about it names the input given, not the cached table it became
    given: str = ""

    def truth(self, space: Path | None = None) -> Truth:
        """The truth the runs are scored on: the table's settings the search ``space`` holds (every
        row without one); a row the search can never propose is no optimum it could miss."""
        from tuner.config.landscape import load_landscape

        allowed = None
        if space is not None:
            from tuner.config.space import SearchSpace

            allowed = set(SearchSpace.load(space).effective_configs())
        return truth_of_table(load_landscape(self.table), self.name, allowed)

    def objectives(self) -> tuple[str, str]:
        from tuner.config.landscape import load_landscape

        return objectives_of(load_landscape(self.table))


def objectives_of(table) -> tuple[str, str]:
    """The study's default objectives on a table: single-request speedup and the speedup at the
    table's largest concurrency (32 for every shipped and generated landscape)."""
    return ("single_speedup", f"speedup@{max(table.concurrencies)}")


def truth_of_table(table, name: str, allowed: set | None = None) -> Truth:
    """``ValueError`` when no row of ``table`` is in ``allowed`` (None: every row counts)."""
    from tuner.engine.objectives import hypervolume, pareto_front

    objectives = objectives_of(table)
    specs = [spec for spec in table.configs if allowed is None or spec in allowed]
    if not specs:
        n = len(table.configs)  # QA: "none of its 1 settings lies in"
        which = "its one setting lies outside" if n == 1 else f"none of its {n} settings lies in"
        raise ValueError(f"{table.source}: {which} the search space; give the space it was measured over (--space)")
    values = {spec: tuple(table.speedups(spec)[o] for o in objectives) for spec in specs}
    optimum = tuple(max(v[i] for v in values.values()) for i in range(len(objectives)))
    nadir = tuple(min(v[i] for v in values.values()) for i in range(len(objectives)))
    points = list(values.values())
    front_hv = hypervolume([points[i] for i in pareto_front(points)], nadir)
    return Truth(name, objectives, values, optimum, nadir, front_hv, len(values), len(table.configs) - len(values))


def _file_stem(label: str) -> str:
    """``label`` as one file name in the cache: a profile's name is free text (``../x``, ``a/b``),
    never a path; what is not a letter, digit, '.', '_' or '-' becomes '_', and no leading '.'."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", label).lstrip(".") or "profile"


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(hashlib.sha256(p).digest())
    return h.hexdigest()[:16]


def _model_sources() -> list[bytes]:
    """The code a profile's figures come from: a change to it invalidates every cached table."""
    sim = ROOT / "tuner" / "sim"
    return [(sim / name).read_bytes() for name in ("model.py", "acceptance.py", "landscape.py")]


def profile_table(profile, cache: Path, suite: str = "seed", space: Path = SPACE, name: str | None = None,
                  group: str = "given", family: str = "") -> Target:
    """The table of a simulator profile (a name, a path, or a ``Profile``), written to ``cache``
    once. Settings that do not fit in the GPUs' memory are left out: they fail at launch, as on
    the simulated server. ``ValueError`` (nothing written) when the baseline or no setting fits."""
    from tuner.sim.model import PerfModel
    from tuner.sim.profile import Profile, load_profile

    prof = profile if isinstance(profile, Profile) else load_profile(profile)
    key = _digest(prof.model_dump_json().encode(), suite.encode(), Path(space).read_bytes(), *_model_sources())
    label = name or prof.name
    path = Path(cache) / f"{_file_stem(label)}-{key}.json"
    if not path.exists():
        from tuner.config.files import write_text_atomic
        from tuner.sim.landscape import landscape, table_that_fits

        model = PerfModel(prof)
        if not model.kv_budget_ok(None, max(TABLE_CONCURRENCIES), prof.runtime.default_context_tokens)[0]:
            raise ValueError(f"profile {label}: the baseline itself does not fit in memory")  # before the model runs
        land = landscape(model, space, concurrencies=TABLE_CONCURRENCIES, suite=suite)
        table, _ = table_that_fits(land, model)  # ValueError before the cache is written: no setting fits
        table["name"] = label
        Path(cache).mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(table) + "\n")
    return Target(label, path, group, family)


def table_target(path: Path, group: str = "given", family: str = "") -> Target:
    """A landscape table file as a target (validated now: a bad file is one line, exit 2)."""
    from tuner.config.landscape import load_landscape

    table = load_landscape(path)
    return Target(table.name, Path(path).resolve(), group, family)


def write_table(data: dict, cache: Path, name: str, group: str, family: str) -> Target:
    """A generated table (a landscape family's) written to ``cache`` by content."""
    from tuner.config.files import write_text_atomic

    text = json.dumps(data) + "\n"
    path = Path(cache) / f"{name}-{_digest(text.encode())}.json"
    if not path.exists():
        Path(cache).mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, text)
    return Target(name, path, group, family)


def strip_accept(target: Target, share: float, seed: int, cache: Path) -> Target:
    """``target`` with the ``accept_length`` of ``share`` (0 to 1) of its measured rows removed, as
    from a benchmark that does not record it (SGLang's ``spec_accept_length``): a copy of its table
    written to ``cache`` by content, the same name, group and family. The rows are drawn by a
    generator seeded with ``seed`` and the table's name (the same rows in every run of it);
    ``share`` 1 strips every row. The speedups, and so the truth the runs are scored on, are
    unchanged: only what the search may read is."""
    import random

    data = json.loads(Path(target.table).read_text())
    rows = [row for row in data["configs"] if row.get("accept_length") is not None]
    for row in random.Random(f"{seed}:{target.name}").sample(rows, round(share * len(rows))):
        del row["accept_length"]
    stripped = write_table(data, cache, _file_stem(f"{target.name}-noaccept"), target.group, target.family)
    return Target(target.name, stripped.table, target.group, target.family, target.load_s, target.given)


def repeated_input(profiles: list[str], landscapes: list[str]) -> str | None:
    """The first input named twice, as one line (None: every input is its own): the same
    ``--profiles`` entry twice, a profile name and a path to the same file, one ``--landscape``
    file twice, or one file given to both flags. Judged on the resolved file (a shipped name is
    ``tuner/sim/profiles/NAME.yaml``), before any table is built; an entry that names no file is
    compared as written and refused later by its own check."""
    from tuner.config.yamlfile import ConfigError
    from tuner.sim.profile import profile_path

    def where(flag: str, value: str) -> Path | str:
        try:
            path = profile_path(value) if flag == "--profiles" else Path(value)
            return path.resolve() if path.is_file() else value
        except (ConfigError, OSError):
            return value

    seen: dict = {}
    for flag, values in (("--profiles", profiles), ("--landscape", landscapes)):
        for value in values:
            key = where(flag, value)
            if key not in seen:
                seen[key] = (flag, value)
                continue
            first_flag, first = seen[key]
            if first_flag == flag and first == value:
                return f"{flag}: {value!r} is given twice; give it once"
            named = f"{flag}: {first!r} and {value!r}" if first_flag == flag else \
                f"{first_flag} {first!r} and {flag} {value!r}"
            return f"{named} are the same file ({key}); give it once"
    return None
