"""The test bed, split: strategies are chosen and tuned on TRAIN only and reported on TEST.

* ``shipped``: the three shipped simulator profiles (reported on their own: the default must keep
  >= 95% there);
* ``train``: generated profiles (:mod:`.profilegen`) with seeds 0-49, and landscape family A
  (:mod:`.families`) with seeds 0-9;
* ``test``: generated profiles with seeds 1000-1099, and landscape families B and C with seeds 0-9
  each -- families whose functional forms the strategy never saw while it was tuned.

Every landscape is a table in the cache (written once, by content).
"""

from __future__ import annotations

from pathlib import Path

SHIPPED = ("k2.6-tp8-pcie", "k2.6-tp8-nvlink", "dense-27b-tp1")
SETS = {
    "shipped": {"profiles": SHIPPED},
    "train": {"generator": range(0, 50), "families": {"A": range(0, 10)}},
    "test": {"generator": range(1000, 1100), "families": {"B": range(0, 10), "C": range(0, 10)}},
}


def build_set(name: str, cache: Path, space: Path, suite: str = "seed", progress=None) -> list:
    """The targets of one set, their tables written to ``cache`` when missing."""
    from tuner.config.space import SearchSpace

    from .families import family_table
    from .profilegen import draw_profile
    from .targets import profile_table, write_table

    spec = SETS[name]
    out = []
    for profile in spec.get("profiles", ()):
        out.append(profile_table(profile, cache, suite=suite, space=space, group=name))
    for seed in spec.get("generator", ()):
        p = draw_profile(seed)
        out.append(profile_table(p, cache, suite=suite, space=space, name=p.name, group=name, family="generator"))
        if progress:
            progress(f"{name}: {p.name} ({p.description})")
    configs = SearchSpace.load(space).effective_configs()
    for family, seeds in spec.get("families", {}).items():
        for seed in seeds:
            data = family_table(family, seed, configs)
            out.append(write_table(data, cache, data["name"], name, family))
    return out
