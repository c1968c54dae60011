"""A repo id's ``config.json`` is the one huggingface_hub (and so the server) resolves offline: the
snapshot ``refs/main`` names, or the one ``--revision`` names (a branch or tag in ``refs``, or a
commit), not the newest snapshot in the cache.

QA (qa193): a cache holding ``main`` (an MHA config) and a snapshot fetched later with
``revision="mla-test"`` (an MLA config) was read as MLA, where the server loads ``main``.
"""

from __future__ import annotations

import os

import pytest

from tuner.sglang.model import find_config_json, read_model_facts

MAIN, BRANCH = "a" * 40, "b" * 40


@pytest.fixture
def hub(tmp_path, monkeypatch):
    for var in ("HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    repo = tmp_path / "hub" / "models--org--m"
    for commit, config, mtime in ((MAIN, '{"architectures": ["LlamaForCausalLM"]}', 1_000_000),
                                  (BRANCH, '{"architectures": ["DeepseekV3ForCausalLM"]}', 2_000_000)):
        snap = repo / "snapshots" / commit
        snap.mkdir(parents=True)
        # The hub's layout: the snapshot's file is a symlink to a blob.
        blob = repo / "blobs" / commit[:8]
        blob.parent.mkdir(exist_ok=True)
        blob.write_text(config)
        (snap / "config.json").symlink_to(os.path.relpath(blob, snap))
        os.utime(snap / "config.json", (mtime, mtime), follow_symlinks=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(MAIN)  # the hub writes the hash with no newline
    (repo / "refs" / "mla-test").write_text(BRANCH)
    return repo


def test_main_is_the_snapshot_refs_main_names_not_the_newest(hub):
    assert find_config_json("org/m") == hub / "snapshots" / MAIN / "config.json"
    assert read_model_facts("org/m").attention == "mha"


@pytest.mark.parametrize("revision, commit", [("mla-test", BRANCH), (BRANCH, BRANCH), ("main", MAIN),
                                              (MAIN, MAIN)])
def test_a_revision_is_its_ref_or_its_commit(hub, revision, commit):
    assert find_config_json("org/m", revision=revision) == hub / "snapshots" / commit / "config.json"
    assert read_model_facts("org/m", revision=revision).attention == ("mla" if commit == BRANCH else "mha")


def test_a_revision_not_in_the_cache_is_not_found(hub):
    assert find_config_json("org/m", revision="v2.0") is None
    assert read_model_facts("org/m", revision="c" * 40) is None


def test_refs_main_naming_a_snapshot_not_cached_is_not_found(hub):
    (hub / "refs" / "main").write_text("d" * 40)
    assert find_config_json("org/m") is None


def test_a_cache_without_refs_gives_its_newest_snapshot(hub):
    for ref in (hub / "refs").iterdir():
        ref.unlink()
    (hub / "refs").rmdir()
    assert find_config_json("org/m") == hub / "snapshots" / BRANCH / "config.json"


@pytest.mark.parametrize("where", ["args", "extra_args"])
def test_a_study_s_revision_is_the_snapshot_its_facts_come_from(hub, where):
    """The study's ``--revision`` (``server.args.revision`` or ``server.extra_args``) names the
    snapshot SGLang loads, so the facts the rules judge by come from it (QA, qa193: the facts were
    read from main whatever the revision)."""
    from tuner.config.study import ServerSettings
    from tuner.engine.facts import gather_facts

    base = {"backend": "sglang", "model_path": "org/m", "tp_size": 1}
    assert gather_facts(ServerSettings(**base)).target.attention == "mha"
    given = {"args": {"revision": "mla-test"}} if where == "args" else {"extra_args": ["--revision", "mla-test"]}
    facts = gather_facts(ServerSettings(**base, **given))
    assert facts.target.attention == "mla" and BRANCH in facts.target.source, facts.target
