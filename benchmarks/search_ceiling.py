"""How much of issue #17's goal the noise alone leaves open: an oracle's share of right picks.

The oracle is told the true best ``m`` settings of each objective (never what they measure) and
spends every launch on them: round-robin (``rr``), or one reading each and then the setting whose
next reading best separates the leading two of the least settled objective (``ad``). It exports
like ``tuner study export``: the best mean reading of each objective. A run is right when both
picks are truly within 3% of their optima -- the benchmark's own test (``searchbench.runs``).
Readings carry the benchmark's noise: each figure times ``N(1, noise)``.

No strategy knows the top ``m`` in advance, so this is no bound on a search; it says whether
readings this noisy, this many, can settle the picks at all once the right settings are found.
The last columns turn each landscape's rate into the chance that 20 seeds reach 16 (18) right, the
goal's ">= 80%" (">= 90%"), and their sum over the set.

    python benchmarks/search_ceiling.py --set shipped,test --noise 0.04 --launches 16
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from searchbench.runs import WITHIN  # noqa: E402
from searchbench.sets import SETS, build_set  # noqa: E402
from searchbench.targets import SPACE  # noqa: E402

CACHE = Path(__file__).resolve().parent / ".landscapes"


def oracle_rate(values: np.ndarray, optimum: np.ndarray, m: int, noise: float, launches: int, policy: str,
                rng: np.random.Generator, runs: int) -> float:
    """The share of ``runs`` whose two picks are both truly within WITHIN of ``optimum``."""
    top = sorted(set().union(*(np.argsort(-values[:, i])[:m].tolist() for i in range(2))))
    v = values[top]
    good = v >= (1 - WITHIN) * optimum
    k, right = len(top), 0
    for _ in range(runs):
        sums, counts = np.zeros((k, 2)), np.zeros(k)

        def read(j: int) -> None:
            sums[j] += v[j] * np.maximum(0.01, rng.normal(1.0, noise, 2))
            counts[j] += 1

        if policy == "rr":
            for t in range(launches):
                read(t % k)
        else:
            for j in range(min(k, launches)):
                read(j)
            for _ in range(launches - k):
                means = sums / counts[:, None]
                gaps = []
                for i in range(2):
                    a, b = np.argsort(-means[:, i])[:2] if k > 1 else (0, 0)
                    sep = (means[a, i] - means[b, i]) / (noise * means[a, i] * np.sqrt(1 / counts[a] + 1 / counts[b]))
                    gaps.append((sep, a, b))
                _, a, b = min(gaps)
                read(a if counts[a] <= counts[b] else b)
        means = sums / np.maximum(counts, 1)[:, None]
        picks = [int(np.argmax(np.where(counts > 0, means[:, i], -np.inf))) for i in range(2)]
        right += all(good[picks[i], i] for i in range(2))
    return right / runs


def main(argv: list[str] | None = None) -> int:
    from scipy.stats import binom

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="shipped,test", help=f"comma-separated, of {', '.join(SETS)}")
    ap.add_argument("--noise", type=float, default=0.04)
    ap.add_argument("--launches", type=int, default=16)
    ap.add_argument("--top", default="2,3,5", help="comma-separated m: the oracle knows each objective's best m")
    ap.add_argument("--runs", type=int, default=2000, help="simulated runs per landscape")
    args = ap.parse_args(argv)
    names = args.set.split(",")
    if not set(names) <= set(SETS) or not 0 < args.noise < 1 or args.launches < 1 or args.runs < 1:
        ap.error(f"--set takes {', '.join(SETS)}; --noise in (0, 1); --launches and --runs >= 1")
    rng = np.random.default_rng(0)
    for name in names:
        truths = [t.truth(SPACE) for t in build_set(name, CACHE, SPACE)]
        for m in (int(x) for x in args.top.split(",")):
            for policy in ("rr", "ad"):
                rates = np.array([oracle_rate(np.array(list(t.values.values())), np.array(t.optimum), m,
                                              args.noise, args.launches, policy, rng, args.runs) for t in truths])
                p80, p90 = binom.sf(15, 20, rates), binom.sf(17, 20, rates)
                print(f"{name} ({len(rates)}) noise {args.noise:g}, {args.launches} launches, top-{m} {policy}: "
                      f"mean {rates.mean():.3f}, worst {rates.min():.3f}; landscapes expected at >= 16/20 "
                      f"{p80.sum():.1f}, at >= 18/20 {p90.sum():.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
