"""``create_study`` of a study already in storage: the older-study judgement reads the storage the
study is created in (``storage_url``: ``--storage`` may name another than the file's ``storage``),
and the stored attributes are read once for the config check and the attention check."""

from __future__ import annotations

import shutil

import optuna
import pytest
from support.model_study import model_study_yaml
from support.older_study import older_dsa_study_with_a_tree_seed

from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError
from tuner.engine.study import create_study


def test_an_older_study_in_another_storage_than_the_file_s_is_judged_there(tmp_path):
    """The older study (its launches ran flashinfer, trees and all) moved to another storage, the
    file's own left without it: its tree seed was judged by this node's decision for a new study
    (dsa, chains only) and refused, read from the file's storage, not the one it was created in."""
    path, config = older_dsa_study_with_a_tree_seed(tmp_path)
    here = config.storage.removeprefix("sqlite:///")
    other = f"sqlite:///{tmp_path / 'other.db'}"
    shutil.move(here, tmp_path / "other.db")
    said = []
    assert create_study(config, other, note=said.append).study_name == "d"
    assert said == []
    # a new study of that file in the other storage is still judged by this node's decision
    fresh = config.model_copy(update={"name": "d2"})
    with pytest.raises(ConfigError, match=r"seed_trials\[0\]: steps=2 topk=4 draft=8 is a tree"):
        create_study(fresh, other)
    assert {s.study_name for s in optuna.get_all_study_summaries(other)} == {"d", "d.baseline"}


def test_an_existing_study_s_attributes_are_read_once_for_both_checks(tmp_path, monkeypatch):
    path = tmp_path / "s.yaml"
    path.write_text(model_study_yaml("s", f"sqlite:///{tmp_path / 's.db'}", 2))
    config = load_study(path)
    create_study(config, config.storage)
    reads = []
    real = optuna.storages.RDBStorage.get_study_user_attrs

    def counted(self, study_id):
        reads.append(study_id)
        return real(self, study_id)

    monkeypatch.setattr(optuna.storages.RDBStorage, "get_study_user_attrs", counted)
    create_study(config, config.storage)
    # one peek before anything could be written (is it an older tuner's study?), one once it is ready
    assert len(reads) == 2, reads


def test_a_storage_object_is_read_as_it_is(tmp_path):
    """create_study takes an Optuna storage object as well as a URL (the search benchmark's in-memory
    storage): the older-study judgement reads that object, no URL."""
    path = tmp_path / "s.yaml"
    path.write_text(model_study_yaml("s", f"sqlite:///{tmp_path / 's.db'}", 2))
    config = load_study(path)
    storage = optuna.storages.InMemoryStorage()
    first = create_study(config, storage)
    assert create_study(config, storage)._study_id == first._study_id
    assert not (tmp_path / "s.db").exists()  # the file's storage never touched
