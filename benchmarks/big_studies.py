"""What thousands of trials cost the study commands: ``run --add-trials 1``, ``status``, ``pareto``,
``export``, ``report``, ``compare``, ``copy``, ``list`` and ``delete`` on studies of 2,000, 10,000 and
30,000 trials, on SQLite and (``--pg URL``, or ``--pg auto`` for a throwaway server of
``.ci/postgres.sh``) on PostgreSQL.

The big studies are built cheaply and with the right shape: a real small study is run on
``server.backend: model`` (16 trials: measured, pruned), copied with ``tuner study copy`` into the
storage under test, and its trials are then replicated row by row in bulk SQL (trial, params, values,
user and system attributes, intermediate values) up to the size asked, each copy with its own
setting (its params and the tuner's ``claim``/``effective_key``/``requested``/``effective``
attributes rewritten alike) and its values scaled a little, so a big study has many settings, a
front and duplicates as a long night has. Every 50th trial is FAIL.

Prints one line per (storage, size, command): the wall time of a fresh ``tuner`` process, as a
person runs it in the morning. Asserts nothing (behaviour is tested in ``tests/``).

    nice -n 5 python benchmarks/big_studies.py [--sizes 2000,10000,30000] [--pg auto|URL]
        [--commands status,pareto,...] [--dir /tmp/big-studies] [--keep]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMALL = """name: small
search_space: eagle3
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  model: {profile: k2.6-tp8-pcie, noise: 0.02, seed: 1}
bench:
  suite: seed
objectives: [single_speedup, speedup@32]
budget:
  n_trials: 16
"""
COMMANDS = ("run", "status", "pareto", "export", "report", "compare", "copy", "list", "delete")


def tuner(*args: str, cwd: Path, check: bool = True) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tuner", *args], cwd=cwd, capture_output=True, text=True)
    took = time.perf_counter() - started
    if check and done.returncode != 0:
        raise RuntimeError(f"tuner {' '.join(args)}: exit {done.returncode}: {done.stderr.strip()[-800:]}")
    return took, done


def small_study(work: Path) -> Path:
    (work / "small.yaml").write_text(SMALL)
    tuner("study", "run", "small.yaml", cwd=work)
    return work / "small.db"


def _setting(i: int) -> dict:
    """The ``i``-th replicated trial's setting: steps 1..8, topk 1/2/4/8, draft tokens within SGLang's rules."""
    steps = 1 + i % 8
    topk = (1, 2, 4, 8)[(i // 8) % 4]
    low = steps + 1 if topk == 1 else 2
    # even draft-token counts only: the odd ones stay unmeasured, for `run` to propose
    draft = steps + 1 if topk == 1 else 2 * ((low + 1) // 2 + (i // 32) % (32 - (low + 1) // 2 + 1))
    return {"speculative_num_steps": steps, "speculative_eagle_topk": topk, "speculative_num_draft_tokens": draft}


def grow(url: str, name: str, size: int) -> None:
    """Replicate the trials of study ``name`` in ``url`` up to ``size`` trials (see the module docstring)."""
    import sqlalchemy as sa
    from optuna.storages._rdb import models

    from tuner.engine.storage import driver_url

    engine = sa.create_engine(driver_url(url))
    m = models
    with engine.begin() as conn:
        study_id = conn.execute(sa.select(m.StudyModel.study_id).where(m.StudyModel.study_name == name)).scalar_one()
        trials = conn.execute(sa.select(m.TrialModel).where(m.TrialModel.study_id == study_id)
                              .order_by(m.TrialModel.number)).mappings().all()
        src = [t for t in trials if t["state"].name in ("COMPLETE", "PRUNED", "FAIL")]
        ids = [t["trial_id"] for t in src]

        def rows(model):
            out: dict[int, list] = {}
            for r in conn.execute(sa.select(model).where(model.trial_id.in_(ids))).mappings():
                out.setdefault(r["trial_id"], []).append(dict(r))
            return out

        params, values = rows(m.TrialParamModel), rows(m.TrialValueModel)
        uattrs, sattrs = rows(m.TrialUserAttributeModel), rows(m.TrialSystemAttributeModel)
        inter = rows(m.TrialIntermediateValueModel)
        next_id = conn.execute(sa.select(sa.func.max(m.TrialModel.trial_id))).scalar_one() + 1
        number = len(trials)
        while number < size:
            chunk = range(number, min(size, number + 2000))
            t_rows, p_rows, v_rows, u_rows, s_rows, i_rows = [], [], [], [], [], []
            for n in chunk:
                t = src[n % len(src)]
                tid, setting = next_id, _setting(n)
                next_id += 1
                scale = 1.0 + ((n * 7919) % 101 - 50) / 1000.0
                state = t["state"] if n % 50 else m.TrialState.FAIL
                t_rows.append({"trial_id": tid, "number": n, "study_id": study_id, "state": state,
                               "datetime_start": t["datetime_start"], "datetime_complete": t["datetime_complete"]})
                for p in params.get(t["trial_id"], []):
                    dist = json.loads(p["distribution_json"])
                    value = setting[p["param_name"]]
                    if dist["name"] == "CategoricalDistribution":
                        value = dist["attributes"]["choices"].index(value)
                    p_rows.append({"trial_id": tid, "param_name": p["param_name"], "param_value": float(value),
                                   "distribution_json": p["distribution_json"]})
                if state != m.TrialState.FAIL:
                    for v in values.get(t["trial_id"], []):
                        v_rows.append({"trial_id": tid, "objective": v["objective"],
                                       "value": None if v["value"] is None else v["value"] * scale,
                                       "value_type": v["value_type"]})
                key = "-".join(str(setting[k]) for k in ("speculative_num_steps", "speculative_eagle_topk",
                                                         "speculative_num_draft_tokens"))
                short = {"num_steps": setting["speculative_num_steps"], "eagle_topk": setting["speculative_eagle_topk"],
                         "num_draft_tokens": setting["speculative_num_draft_tokens"]}
                for u in uattrs.get(t["trial_id"], []):
                    value = json.loads(u["value_json"])
                    if u["key"] in ("claim", "effective_key"):
                        value = key
                    elif u["key"] in ("requested", "effective"):
                        value = short
                    elif u["key"] in ("single_speedup", "speedup@32") and isinstance(value, float):
                        value *= scale
                    elif u["key"] == "status" and state == m.TrialState.FAIL:
                        value = "failed"
                    u_rows.append({"trial_id": tid, "key": u["key"], "value_json": json.dumps(value)})
                for s in sattrs.get(t["trial_id"], []):
                    if s["key"] in ("tuner:created_as", "fixed_params"):
                        continue
                    s_rows.append({"trial_id": tid, "key": s["key"], "value_json": s["value_json"]})
                for iv in inter.get(t["trial_id"], []):
                    i_rows.append({"trial_id": tid, "step": iv["step"],
                                   "intermediate_value": iv["intermediate_value"],
                                   "intermediate_value_type": iv["intermediate_value_type"]})
            conn.execute(sa.insert(m.TrialModel), t_rows)
            for model, batch in ((m.TrialParamModel, p_rows), (m.TrialValueModel, v_rows),
                                 (m.TrialUserAttributeModel, u_rows), (m.TrialSystemAttributeModel, s_rows),
                                 (m.TrialIntermediateValueModel, i_rows)):
                if batch:
                    conn.execute(sa.insert(model), batch)
            number = chunk[-1] + 1
        # the budget covers every trial, so `run --add-trials 1` has one trial to run
        attr = m.StudyUserAttributeModel
        row = conn.execute(sa.select(attr).where(attr.study_id == study_id, attr.key == "tuner_config")).mappings().one()
        config = json.loads(row["value_json"])
        config["budget"]["n_trials"] = size
        conn.execute(sa.update(attr).where(attr.study_user_attribute_id == row["study_user_attribute_id"])
                     .values(value_json=json.dumps(config)))
    engine.dispose()


def build(work: Path, url: str, size: int) -> str:
    name = f"big{size}"
    tuner("study", "copy", "small", name, "--storage", f"sqlite:///{work / 'small.db'}", "--to-storage", url,
          cwd=work)
    grow(url, name, size)
    return name


def measure(work: Path, url: str, name: str, command: str) -> tuple[float, str]:
    s = ("--storage", url)
    if command == "run":
        took, done = tuner("study", "run", "--study", name, *s, "--add-trials", "1", "--workdir",
                           str(work / name), cwd=work)
        return took, done.stdout.strip().splitlines()[-1][:80]
    if command == "copy":
        took, _ = tuner("study", "copy", name, f"{name}-copy", *s, cwd=work)
        tuner("study", "delete", f"{name}-copy", *s, "--yes", cwd=work)
        return took, ""
    if command == "delete":
        tuner("study", "copy", name, f"{name}-del", *s, cwd=work)
        took, _ = tuner("study", "delete", f"{name}-del", *s, "--yes", cwd=work)
        return took, ""
    args = {"status": ("status", name, *s), "pareto": ("pareto", name, *s),
            "export": ("export", name, *s, "--pick", "knee", "-o", str(work / f"{name}.best.yaml")),
            "report": ("report", name, *s, "-o", str(work / f"{name}.html")),
            "compare": ("compare", name, "small", *s, "--storage-b", f"sqlite:///{work / 'small.db'}"),
            "list": ("list", *s)}[command]
    took, done = tuner("study", *args, cwd=work)
    return took, ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="2000,10000,30000")
    ap.add_argument("--pg", default=None, help="a PostgreSQL server URL, or auto (.ci/postgres.sh)")
    ap.add_argument("--commands", default=",".join(COMMANDS))
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    work = a.dir or Path(tempfile.mkdtemp(prefix="big-studies-"))
    work.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in a.sizes.split(",")]
    commands = a.commands.split(",")
    small_study(work)
    storages = [("sqlite", lambda size: f"sqlite:///{work / f'big{size}.db'}")]
    server = None
    try:
        if a.pg:
            pg = a.pg
            if pg == "auto":
                sys.path.insert(0, str(ROOT / "tests"))
                from support.pg import throwaway_server
                server = throwaway_server(work / "pg.url")
                pg = server.__enter__().read_text().strip()
            storages.append(("postgresql", lambda size, pg=pg: _pg_database(pg, f"big{size}")))
        print(f"{'storage':<11} {'trials':>7} {'command':<8} {'seconds':>8}")
        for kind, url_of in storages:
            for size in sizes:
                url = url_of(size)
                started = time.perf_counter()
                name = build(work, url, size)
                print(f"{kind:<11} {size:>7} {'(build)':<8} {time.perf_counter() - started:8.2f}", flush=True)
                for command in commands:
                    took, note = measure(work, url, name, command)
                    print(f"{kind:<11} {size:>7} {command:<8} {took:8.2f} {note}", flush=True)
    finally:
        if server is not None:
            server.__exit__(None, None, None)
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


def _pg_database(server_url: str, name: str) -> str:
    """A fresh database ``name`` on the server (dropped first when it exists); its URL."""
    import sqlalchemy as sa
    from urllib.parse import urlsplit, urlunsplit

    from tuner.engine.storage import driver_url

    engine = sa.create_engine(driver_url(server_url), isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    with engine.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}"'))
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    parts = urlsplit(server_url)
    return urlunsplit(parts._replace(path=f"/{name}"))


if __name__ == "__main__":
    main()
