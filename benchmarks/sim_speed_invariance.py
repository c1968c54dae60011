"""Does a study's outcome depend on --sim-speedup? The same small study at 3x, 20x and 40x.

Issue 16's goal: figures at 3x and 40x agree within noise for the same study. Per-request timeouts
are in model time on the simulator (the suite's ``timeout_s``; the client divides by
``sim_speedup``, ``tuner/bench/client.py``), so a setting that times out at one speed times out at
every speed, and the objectives should differ only by noise.

Runs, through the CLI as a user would (``tuner study create`` / ``run`` / ``status -f json``), the
demo study (``studies/sim-demo.yaml``: quick suite, objectives ``single_speedup`` and
``speedup@32``) cut to four seed trials (SGLang's automatic choice 3/1/4, the article's 1/1/3,
a medium tree 4/4/16 and a large one 5/8/32: the default seeds when it was written, pinned here so
its figures do not move with the sampler's defaults), at each speedup ``--repeats`` times
with ``server.sim.seed`` = the repeat number (so repeats differ in their acceptance draws and 2%
step jitter, as separate studies would), the speedups interleaved.
Prints each setting's objectives per speedup (mean of the repeats), the differences against the
lowest speedup with their noise bound (t(0.975) x the pooled repeat spread x sqrt(2/repeats)),
the performance model's value (``tuner sim landscape``), and a verdict.

    python benchmarks/sim_speed_invariance.py                     # 3,20,40; 2 repeats
    python benchmarks/sim_speed_invariance.py --speedups 3,40 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import load_line  # noqa: E402

from tuner.bench.stats import t975  # noqa: E402
from tuner.config.space import space_path  # noqa: E402
from tuner.sglang.rules import SpecConfig  # noqa: E402

OBJECTIVES = ("single_speedup", "speedup@32")
#: The README's demo study (quick suite, k2.6-tp8-pcie, 2% step noise, these objectives), cut to
#: ``SETTINGS``, at another speedup and sim seed.
DEMO = ROOT / "studies" / "sim-demo.yaml"
#: the four settings measured (steps, topk, draft tokens); SGLang runs 1/1/3 as 1/1/2
SETTINGS = ((3, 1, 4), (1, 1, 3), (4, 4, 16), (5, 8, 32))


def _tuner(*args: str, cwd: Path) -> str:
    out = subprocess.run([sys.executable, "-m", "tuner", *args], cwd=cwd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"tuner {' '.join(args)} exited {out.returncode}:\n{out.stderr[-3000:]}")
    return out.stdout


def run_study(workdir: Path, speedup: float, seed: int) -> dict:
    """One study; returns {setting label: (values or None, failure class or None)} and its timing."""
    name = f"inv-{speedup:g}x-s{seed}"
    path = workdir / f"{name}.yaml"
    study = yaml.safe_load(DEMO.read_text())
    study.update(name=name, search_space=str(space_path(study["search_space"], DEMO.parent).resolve()),
                 budget={"n_trials": len(SETTINGS)}, default_seed_trials=False,
                 seed_trials=[SpecConfig(*c).server_args() for c in SETTINGS])
    study["server"]["sim"].update(speedup=speedup, seed=seed)
    assert tuple(study["objectives"]) == OBJECTIVES and study["bench"]["suite"] == "quick", study
    path.write_text(yaml.safe_dump(study))
    t0, load = time.perf_counter(), load_line("at the start")
    _tuner("study", "create", str(path), cwd=workdir)
    _tuner("study", "run", str(path), cwd=workdir)
    wall = time.perf_counter() - t0
    status = json.loads(_tuner("study", "status", str(path), "-f", "json", cwd=workdir))
    settings = {}
    for t in status["trials"]:
        e = t["effective"]
        label = f"{e['num_steps']}/{e['eagle_topk']}/{e['num_draft_tokens']}"
        settings[label] = (t["values"] if t["status"] == "measured" else None, t["failure_class"])
    return {"settings": settings, "wall_s": wall, "load": load}


def model_values() -> dict[str, list[float]]:
    """The performance model's objectives per setting on the quick suite."""
    land = json.loads(subprocess.run(
        [sys.executable, "-m", "tuner", "sim", "landscape", "--profile", "k2.6-tp8-pcie", "--suite", "quick",
         "--concurrency", "32", "--json"], capture_output=True, text=True, check=True).stdout)
    return {f"{r['num_steps']}/{r['eagle_topk']}/{r['num_draft_tokens']}": [r[o] for o in OBJECTIVES]
            for r in land["rows"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--speedups", default="3,20,40")
    ap.add_argument("--repeats", type=int, default=2, help="studies per speedup (server.sim.seed 0, 1, ...)")
    args = ap.parse_args()
    if args.repeats < 2:  # one study per speedup has no spread to bound a difference by (QA: NaN, "NOT met")
        ap.error("--repeats: give 2 or more; the noise bound is the spread between repeats")
    speedups = [float(x) for x in args.speedups.split(",")]
    print(load_line("before"))
    runs: dict[float, list[dict]] = {s: [] for s in speedups}
    with tempfile.TemporaryDirectory(prefix="speed-invariance-") as tmp:
        for seed in range(args.repeats):
            for s in speedups:  # interleaved, so a load change hits every speedup alike
                run = run_study(Path(tmp), s, seed)
                runs[s].append(run)
                print(f"# {s:g}x seed {seed}: {run['wall_s']:.0f} s wall; {run['load']}", file=sys.stderr)
    print(load_line("after"))
    model = model_values()
    labels = list(runs[speedups[0]][0]["settings"])
    base = speedups[0]
    verdicts = []
    for i, objective in enumerate(OBJECTIVES):
        # Pooled within-speedup spread: what repeats of the same study at the same speed differ by.
        sq, df = 0.0, 0
        for label in labels:
            for s in speedups:
                vals = [r["settings"][label][0][i] for r in runs[s] if r["settings"][label][0] is not None]
                if len(vals) > 1:
                    sq += statistics.variance(vals) * (len(vals) - 1)
                    df += len(vals) - 1
        sd = math.sqrt(sq / df) if df else float("nan")
        bound = t975(df) * sd * math.sqrt(2 / args.repeats) if df else float("nan")
        print(f"\n{objective}: mean of {args.repeats} studies per speedup; pooled repeat sd {sd:.4f} "
              f"({df} df), noise bound for a difference of means {bound:.4f}")
        head = "".join(f"{f'{s:g}x':>24}" for s in speedups)
        diffs = "".join(f"{f'{s:g}x-{base:g}x':>12}" for s in speedups[1:])
        print(f"{'setting':>10}{head}{diffs}{'model':>9}")
        for label in labels:
            cells, means, failed = "", {}, {}
            for s in speedups:
                vals = [r["settings"][label][0] for r in runs[s]]
                fails = [r["settings"][label][1] for r in runs[s] if r["settings"][label][0] is None]
                if fails:
                    failed[s] = len(fails) == len(vals)
                    what = ("failed: " + ",".join(sorted(set(fails))) if failed[s]
                            else f"{len(fails)}/{len(vals)} failed")
                    cells += f"{what:>24}"
                    means[s] = None
                    continue
                xs = [v[i] for v in vals]
                means[s] = statistics.mean(xs)
                spread = f"±{(max(xs) - min(xs)) / 2:.3f}" if len(xs) > 1 else ""
                cells += f"{f'{means[s]:.3f}{spread}':>24}"
            dcells = ""
            for s in speedups[1:]:
                if means[s] is None or means[base] is None:
                    same = failed.get(s, False) and failed.get(base, False)
                    dcells += f"{'same' if same else 'DIFFERS':>12}"
                    verdicts.append(same)
                    continue
                d = means[s] - means[base]
                agree = abs(d) <= bound
                verdicts.append(agree)
                dcells += f"{f'{d:+.3f}' + ('' if agree else ' !'):>12}"
            m = model.get(label)
            print(f"{label:>10}{cells}{dcells}{(f'{m[i]:.3f}' if m else '-'):>9}")
    print("\n'!' marks a difference beyond the noise bound; 'failed: CLASS': every repeat failed so; "
          "'same': failed at both speedups")
    print(f"goal (figures at every speedup agree within noise): "
          f"{'met' if all(verdicts) else f'NOT met ({verdicts.count(False)} of {len(verdicts)} differ)'}")


if __name__ == "__main__":
    main()
