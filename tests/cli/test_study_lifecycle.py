"""`tuner study list | delete | copy | compare`, extending a study, and `-f table|json|csv`, on real
SQLite studies measured through the performance model."""

import csv
import io
import json
import shutil

import pytest
from click.testing import CliRunner
from support.model_study import make_model_study
from support.prepared_once import prepared_once
from support.small_space import small_space

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError
from tuner.engine.backends import ModelBackend
from tuner.engine.records import load_records
from tuner.engine.runner import run_study
from tuner.engine.study import open_study


def invoke(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    # run once per session, whichever xdist worker asks first; each worker reads its own copy
    return prepared_once(tmp_path_factory, "life", lambda folder: make_model_study(folder, "life", n_trials=6))


@pytest.fixture
def study(measured, tmp_path):
    """A fresh copy of one measured study (file and SQLite storage) for each test."""
    for f in ("life.yaml", "life.db"):
        shutil.copy(measured / f, tmp_path / f)
    path = tmp_path / "life.yaml"
    return path, load_study(path)


def test_list_in_every_format(study, monkeypatch, tmp_path):
    path, config = study
    r = invoke("study", "list", "--storage", config.storage, "-f", "json")
    assert r.exit_code == 0, r.output
    [row] = json.loads(r.output)
    records = load_records(open_study("life", config.storage))
    assert row["name"] == "life" and row["trials"] == len(records) and row["budget"] == 40
    assert row["launched"] == sum(1 for x in records if x.status in ("measured", "failed"))
    best = max(x.values[0] for x in records if x.status == "measured" and x.feasible)
    assert row["best"]["single_speedup"] == pytest.approx(best)
    assert row["created"] and row["backend"] == "sim"
    rows = list(csv.DictReader(io.StringIO(invoke("study", "list", "--storage", config.storage, "-f", "csv").output)))
    assert [x["study"] for x in rows] == ["life"] and float(rows[0]["best single_speedup"]) == pytest.approx(best)
    table = invoke("study", "list", "--storage", config.storage).output
    assert "life" in table and "life.baseline" not in table
    # with no storage: every studies/*.db here (a folder without the study file and its life.db)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "studies").mkdir(parents=True)
    shutil.copy(path.parent / "life.db", elsewhere / "studies" / "life.db")
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    assert "life" in invoke("study", "list").output
    # one studies/*.db that is not a database is named, and hides none of the others (QA)
    (elsewhere / "studies" / "notes.db").write_text("not a database\n")
    r = CliRunner().invoke(cli, ["study", "list", "-f", "csv"])
    assert r.exit_code == 0 and [x["study"] for x in csv.DictReader(io.StringIO(r.stdout))] == ["life"]
    assert "warning: skipped" in r.stderr and "notes.db" in r.stderr and "not a database" in r.stderr


def test_with_no_storage_a_study_beside_its_file_here_is_found_as_in_studies(study, monkeypatch, tmp_path):
    """QA: `tuner study init demo.yaml && tuner study run demo.yaml` keeps demo.db beside the file, here;
    `study list` and `status NAME` looked only in studies/ and found nothing."""
    path, _ = study
    here = tmp_path / "here"
    here.mkdir()
    shutil.copy(path.parent / "life.db", here / "life.db")
    monkeypatch.chdir(here)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    r = CliRunner().invoke(cli, ["study", "list", "-f", "csv"])
    assert r.exit_code == 0 and [x["study"] for x in csv.DictReader(io.StringIO(r.stdout))] == ["life"], r.output
    r = CliRunner().invoke(cli, ["study", "status", "life", "-f", "csv"])
    assert r.exit_code == 0 and list(csv.DictReader(io.StringIO(r.stdout))), r.output
    r = CliRunner().invoke(cli, ["study", "status", "other"])
    assert r.exit_code == 2 and "neither other.db nor studies/other.db exists" in r.output
    # the same name in both places is two studies: the user says which, nothing is guessed
    (here / "studies").mkdir()
    shutil.copy(path.parent / "life.db", here / "studies" / "life.db")
    r = CliRunner().invoke(cli, ["study", "status", "life"])
    assert r.exit_code == 2 and "both life.db and studies/life.db exist" in r.output
    assert len(r.output.strip().splitlines()) == 1
    r = CliRunner().invoke(cli, ["study", "list", "-f", "csv"])  # list shows both, each with its storage
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [x["study"] for x in rows] == ["life", "life"] and rows[0]["storage"] != rows[1]["storage"]


def test_status_and_pareto_as_csv(study):
    path, config = study
    rows = list(csv.DictReader(io.StringIO(invoke("study", "status", path, "-f", "csv").output)))
    records = load_records(open_study("life", config.storage))
    assert [int(x["trial"]) for x in rows] == [x.number for x in records]
    for x, rec in zip(rows, records):
        assert x["status"] == (rec.status or "")
        if rec.status == "measured":
            assert float(x["single_speedup"]) == pytest.approx(rec.values[0])
        if rec.status == "invalid":
            assert x["single_speedup"] == "" and x["failure_class"].startswith("rule:")  # no placeholder values
    front = list(csv.DictReader(io.StringIO(invoke("study", "pareto", path, "-f", "csv").output)))
    assert front[0]["trial"] == "baseline" and len(front) >= 3
    assert json.loads(invoke("study", "pareto", path, "--json").output)["study"] == "life"  # the old spelling


def test_a_spent_study_says_how_to_extend_it_and_grows(study, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # `run --study NAME` works in studies/NAME of the current folder
    path, config = study
    text = path.read_text().replace("n_trials: 40", "n_trials: 3")
    spent = tmp_path / "spent.yaml"
    spent.write_text(text.replace("name: life", "name: spent"))
    cfg = load_study(spent)
    from tuner.engine.study import create_study

    create_study(cfg, cfg.storage)
    run_study(cfg, cfg.storage, ModelBackend("k2.6-tp8-pcie", load_suite("quick"), seed=2))
    backend_runs = []

    def run(*args):
        from tuner.engine import runner

        class Model(ModelBackend):
            def measure(self, *a, **kw):
                backend_runs.append(a[0])
                return super().measure(*a, **kw)

        import tuner.cli.study as cli_study

        orig = cli_study._backend
        cli_study._backend = lambda config, space, suite: Model("k2.6-tp8-pcie", load_suite(suite), seed=3)
        try:
            return CliRunner().invoke(cli, ["study", "run", *map(str, args)], catch_exceptions=False)
        finally:
            cli_study._backend = orig
        del runner

    r = run(spent, "--n-trials", 2)
    assert r.exit_code == 0 and "0 measured" in r.output and "--add-trials N" in r.output
    assert "raise budget.n_trials in" in r.output and backend_runs == []
    # a larger budget in the file: the one change a study takes
    spent.write_text(spent.read_text().replace("n_trials: 3", "n_trials: 4"))
    r = run(spent)
    assert "study spent: budget.n_trials 3 -> 4" in r.output and "1 measured" in r.output, r.output
    # --add-trials raises the stored budget; the file's smaller one then keeps the stored one
    r = run("--study", "spent", "--storage", cfg.storage, "--add-trials", 2)
    assert "budget.n_trials 4 -> 6" in r.output and "2 measured" in r.output, r.output
    r = run(spent)
    assert "kept budget.n_trials 6 (the file says 4" in r.output and r.exit_code == 0, r.output
    launched = [x for x in load_records(open_study("spent", cfg.storage)) if x.status in ("measured", "failed")]
    assert len(launched) == 6
    # the same search space from another file (another node's checkout, a copy): the same study
    moved = tmp_path / "moved-space.yaml"
    shutil.copy(cfg.search_space, moved)
    spent.write_text(spent.read_text().replace(f"search_space: {cfg.search_space}", f"search_space: {moved}"))
    assert load_study(spent).search_space == str(moved)
    r = CliRunner().invoke(cli, ["study", "create", str(spent)])
    assert r.exit_code == 0, r.output
    # a change of budget.prune is taken, and said
    spent.write_text(spent.read_text().replace("budget: {", "budget: {prune: false, "))
    r = CliRunner().invoke(cli, ["study", "create", str(spent)])
    assert r.exit_code == 0 and "budget.prune True -> False" in r.output, r.output
    # anything else that differs is still refused, naming the key
    spent.write_text(spent.read_text().replace("suite: quick", "suite: seed"))
    r = CliRunner().invoke(cli, ["study", "create", str(spent)])
    assert r.exit_code == 2 and "suite" in r.output and "differs" in r.output


def test_copy_keeps_trials_and_numbers_and_runs_under_its_new_name(study, tmp_path):
    path, config = study
    other = f"sqlite:///{tmp_path / 'other.db'}"
    r = invoke("study", "copy", path, "life2", "--to-storage", other)
    assert r.exit_code == 0 and "copied life" in r.output, r.output
    src, dst = open_study("life", config.storage), open_study("life2", other)
    a, b = load_records(src), load_records(dst)
    assert [(x.number, x.status, x.values, x.feasible) for x in a] == [(x.number, x.status, x.values, x.feasible)
                                                                      for x in b]
    assert dst.user_attrs["tuner_config"]["name"] == "life2" and dst.metric_names == src.metric_names
    from tuner.engine.baseline import find_baseline

    assert find_baseline(dst).figures == find_baseline(src).figures
    # the copy runs on its own, from storage alone, and leaves the source alone
    from tuner.engine.study import config_from_study

    cfg, _, suite = config_from_study(dst, str(tmp_path / "wd"))
    run_study(cfg, other, ModelBackend("k2.6-tp8-pcie", load_suite(suite), seed=5), n_trials=1)
    assert len(load_records(open_study("life2", other))) > len(b)
    assert len(load_records(open_study("life", config.storage))) == len(a)
    r = CliRunner().invoke(cli, ["study", "copy", str(path), "life2", "--to-storage", other])
    assert r.exit_code == 2 and "exists already" in r.output


def test_copy_of_a_running_trial_fails_it_and_queues_it_again(study, tmp_path):
    path, config = study
    src = open_study("life", config.storage)
    from tuner.engine.asktell import ask
    from tuner.engine.study import config_from_study

    running = ask(src, config_from_study(src)[1].distributions())  # a worker in the middle of a trial
    from tuner.engine.lifecycle import copy_study

    res = copy_study("life", config.storage, "life3")
    assert res.running == [running.number]
    dst = open_study("life3", config.storage)
    trials = dst.get_trials(deepcopy=False)
    assert trials[running.number].state.name == "FAIL"
    assert trials[-1].state.name == "WAITING" and trials[-1].user_attrs["retry_of"] == running.number


def test_delete_asks_and_takes_the_baseline_along(study):
    path, config = study
    import optuna

    r = CliRunner().invoke(cli, ["study", "delete", str(path)], input="")  # no terminal, no --yes
    assert r.exit_code == 2 and "--yes" in r.output
    assert "life" in {s.study_name for s in optuna.get_all_study_summaries(config.storage)}
    src = open_study("life", config.storage)
    from tuner.engine.asktell import ask

    ask(src)  # a running trial: refused without --force
    r = CliRunner().invoke(cli, ["study", "delete", str(path), "--yes"])
    assert r.exit_code == 2 and "running" in r.output
    r = invoke("study", "delete", path, "--yes", "--force")
    assert r.exit_code == 0 and "deleted life.baseline, life" in r.output
    assert optuna.get_all_study_summaries(config.storage) == []
    r = CliRunner().invoke(cli, ["study", "delete", "life", "--storage", config.storage, "--yes"])
    assert r.exit_code == 2 and "no such study" in r.output


def test_compare_two_studies(tmp_path):
    # four launches each, on the small space (the first default seed, then the sampler's, seeded
    # alike): settings measured in both (six launches, or the shipped space, showed nothing more)
    space = small_space(tmp_path)
    a = load_study(make_model_study(tmp_path, "pcie", n_trials=4, space=space))
    b = load_study(make_model_study(tmp_path, "nvlink", n_trials=4, profile="k2.6-tp8-nvlink", space=space))
    page = tmp_path / "cmp.html"
    r = invoke("study", "compare", "pcie", "nvlink", "--storage", a.storage, "--storage-b", b.storage, "-f", "json",
               "-o", page)
    assert r.exit_code == 0, r.output
    cmp = json.loads(r.stdout)
    assert cmp["a"]["hardware"]["profile"] == "k2.6-tp8-pcie" and cmp["b"]["hardware"]["profile"] == "k2.6-tp8-nvlink"
    assert cmp["a"]["sglang_versions"] == [] and cmp["warnings"] == []  # model backend: no server version
    assert cmp["a"]["workload"]["concurrencies"] == [1, 8, 32]
    # the NVLink node's autoregressive baseline is about twice as fast at C=32 (the profiles' tables)
    assert 1.8 < cmp["baseline_ratio_b_over_a"]["tok_per_s@32"] < 2.6
    assert cmp["common"], "the seed trials are measured in both"
    for c in cmp["common"]:
        assert c["ratio_b_over_a"][0] == pytest.approx(c["values_b"][0] / c["values_a"][0])
    assert [p["trial"] for p in cmp["a"]["front"]] == sorted(
        (p["trial"] for p in cmp["a"]["front"]), key=lambda n: -next(
            q["values"][0] for q in cmp["a"]["front"] if q["trial"] == n))
    html = page.read_text()
    assert 'data-key="fronts"' in html and 'data-key="throughput"' in html and "Settings measured in both" in html
    table = invoke("study", "compare", "pcie", "nvlink", "--storage", a.storage, "--storage-b", b.storage).output
    assert "k2.6-tp8-nvlink" in table and "settings measured in both" in table
    import re

    from tuner.results.compare_report import summary_rows

    # figures as figures: one decimal for tok/s, A's as B's (no 26.507499020384046)
    baselines = [cell for row in summary_rows(cmp) if row[0].startswith("baseline ") for cell in row[1:]]
    assert baselines and all(re.fullmatch(r"(\d+\.\d( \(\d+\.\d\dx A\))?)?", str(c)) for c in baselines), baselines


def test_a_storage_that_refuses_writes_is_one_line(study, monkeypatch):
    """QA: delete and copy on a read-only SQLite file (chattr +i) ended in Optuna's traceback. The
    refusal is faked at the storage's seam (root writes through file modes, and not every file
    system takes chattr): SQLAlchemy's OperationalError wrapped as Optuna wraps it."""
    import sqlite3

    import optuna
    from optuna.exceptions import StorageInternalError
    from sqlalchemy.exc import OperationalError

    def refuse(*args, **kwargs):
        cause = OperationalError("DELETE ...", {}, sqlite3.OperationalError("attempt to write a readonly database"))
        raise StorageInternalError("An exception is raised during the commit.") from cause

    path, config = study
    monkeypatch.setattr(optuna, "delete_study", refuse)
    r = CliRunner().invoke(cli, ["study", "delete", str(path), "--yes"])
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert "cannot write: OperationalError: attempt to write a readonly database" in r.output
    monkeypatch.setattr(optuna.study.Study, "set_user_attr", refuse)
    r = CliRunner().invoke(cli, ["study", "copy", str(path), "life2"])
    assert r.exit_code == 2 and "life2: cannot write: OperationalError" in r.output, r.output


def test_compare_names_the_backends_it_warns_of(tmp_path):
    """QA: a study of backend model compared with one of the simulator was said to run on SGLang."""
    import optuna

    from tuner.results.compare import compare_studies

    a = load_study(make_model_study(tmp_path, "simmed", n_trials=2, space=small_space(tmp_path)))
    folder = tmp_path / "m"
    folder.mkdir()
    text = (folder.parent / "simmed.yaml").read_text().replace("name: simmed", "name: modelled").replace(
        "backend: sim", "backend: model").replace("sim: {profile: k2.6-tp8-pcie}", "model: {profile: k2.6-tp8-pcie, seed: 1}")
    (folder / "modelled.yaml").write_text(text)
    r = invoke("study", "run", folder / "modelled.yaml", "--n-trials", "2")
    assert r.exit_code == 0, r.output
    b = load_study(folder / "modelled.yaml")
    cmp = compare_studies(optuna.load_study(study_name="simmed", storage=a.storage),
                          optuna.load_study(study_name="modelled", storage=b.storage))
    assert cmp["warnings"] == ["A ran on the simulated server, B on no server (backend model): figures of the "
                               "simulator and the model backend are model time, SGLang's wall time"]


def test_a_copy_cut_short_leaves_nothing_behind(study, monkeypatch):
    """QA: Ctrl-C 3 s into `copy` left 12 of 17 trials and no baseline under the new name, which
    status, pareto, report and list showed as a study. A copy is all or nothing."""
    import optuna

    from tuner.engine import lifecycle

    path, config = study
    real, calls = lifecycle._copy_one, []

    def cut(*args, **kwargs):
        calls.append(args[2])
        out = real(*args, **kwargs)
        if len(calls) == 2:  # the study is copied, its baseline too: Ctrl-C before the ready mark
            raise KeyboardInterrupt
        return out

    monkeypatch.setattr(lifecycle, "_copy_one", cut)
    with pytest.raises(KeyboardInterrupt):
        lifecycle.copy_study("life", config.storage, "half")
    assert calls == ["half", "half.baseline"]
    names = {s.study_name for s in optuna.get_all_study_summaries(config.storage)}
    assert names == {"life", "life.baseline"}
    monkeypatch.setattr(lifecycle, "_copy_one", real)
    r = CliRunner().invoke(cli, ["study", "copy", str(path), "half"])  # the name is free again
    assert r.exit_code == 0, r.output


def test_a_copy_killed_outright_reads_as_incomplete_and_says_how_to_clear_it(study, monkeypatch):
    """QA: `kill -9` during `copy` (no cleanup can run) left 3 of 8 trials that `status` and `list`
    showed as a whole study, and the next copy said only "exists already"."""
    import optuna

    from tuner.engine import lifecycle

    path, config = study
    real = lifecycle._copy_one

    def killed(source, target, new_name, rename):
        real(source, target, new_name, rename)
        raise SystemExit(137)  # as a SIGKILL leaves it: the cleanup below is skipped

    monkeypatch.setattr(lifecycle, "_copy_one", killed)
    monkeypatch.setattr(optuna, "delete_study", lambda **kw: None)  # (no process left to clean up)
    with pytest.raises(SystemExit):
        lifecycle.copy_study("life", config.storage, "half")
    monkeypatch.undo()
    url = ["--storage", config.storage]
    r = CliRunner().invoke(cli, ["study", "status", "--study", "half", *url])
    assert "warning: study half is incomplete: its creation or copy was cut short" in r.output, r.output
    assert "tuner study delete half" in r.output
    r = CliRunner().invoke(cli, ["study", "list", *url])
    assert "incomplete" in r.stdout and "warning: study half is incomplete" in r.stderr, r.output
    assert "study life is incomplete" not in r.stderr  # the whole one is not flagged
    r = CliRunner().invoke(cli, ["study", "copy", str(path), "half"])
    refused = "half: exists already (incomplete: a creation or copy cut short); delete it first (tuner study"
    assert r.exit_code == 2 and refused in r.output, r.output
    assert CliRunner().invoke(cli, ["study", "delete", "--study", "half", *url, "--yes"]).exit_code == 0
    assert CliRunner().invoke(cli, ["study", "copy", str(path), "half"]).exit_code == 0


def test_a_copy_whose_storage_fails_names_what_it_could_not_remove(study, monkeypatch):
    """QA: PostgreSQL stopped 2 s into `copy`: one line, but the part written stayed, unnamed."""
    import optuna
    from sqlalchemy.exc import OperationalError

    from tuner.engine import lifecycle

    path, config = study
    real = lifecycle._copy_one

    def storage_gone(*args, **kwargs):
        real(*args, **kwargs)
        raise OperationalError("INSERT", {}, Exception("the database system is shutting down"))

    def cannot(**kw):
        raise OperationalError("DELETE", {}, Exception("connection refused"))

    monkeypatch.setattr(lifecycle, "_copy_one", storage_gone)
    monkeypatch.setattr(optuna, "delete_study", cannot)
    with pytest.raises(ConfigError) as err:
        lifecycle.copy_study("life", config.storage, "gone")
    assert "cannot write" in str(err.value) and "shutting down" in str(err.value)
    assert str(err.value).endswith("the part copied as gone may remain (incomplete): tuner study delete "
                                   "gone, once the storage answers")


def test_copy_of_a_running_trial_without_a_setting_says_nothing_was_queued(study):
    """A copy during a run may read a trial between its ask and its params (QA: `copy` said
    "trials [166] were running: failed in the copy, their settings queued again", and the copy held
    no queued trial: 166 had no setting)."""
    path, config = study
    src = open_study("life", config.storage)
    from tuner.engine.asktell import ask

    running = ask(src)  # asked; the sampler's params not stored yet
    r = CliRunner().invoke(cli, ["study", "copy", str(path), "life4"])
    assert r.exit_code == 0, r.output
    assert f"[{running.number}] had no setting yet: nothing to queue" in r.output, r.output
    assert "queued again" not in r.output, r.output
    trials = open_study("life4", config.storage).get_trials(deepcopy=False)
    assert trials[running.number].state.name == "FAIL"
    assert "nothing to queue" in trials[running.number].user_attrs["note"]
    assert not [t for t in trials if t.state.name == "WAITING" and t.user_attrs.get("retry_of") == running.number]
