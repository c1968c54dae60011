"""A profile loaded again is read again whenever the file changed on disk, whatever the change; only
an unchanged file is served from :func:`tuner.sim.profile.load_profile`'s cache (QA qa227: a run
loaded and validated the same file 8-10 times)."""

import os

import pytest
import yaml

from tuner.config.yamlfile import ConfigError
from tuner.sim import profile as profile_mod
from tuner.sim.profile import PROFILES_DIR, load_profile


def _write(path, **runtime):
    data = yaml.safe_load((PROFILES_DIR / "dense-27b-tp1.yaml").read_text())
    data["runtime"].update(runtime)
    path.write_text(yaml.safe_dump(data, sort_keys=True))


def _same_stamp(path, stamp):
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))


def test_an_edit_between_two_loads_is_seen(tmp_path):
    path = tmp_path / "p.yaml"
    _write(path, forward_overhead_ms=1.5)
    assert load_profile(path).runtime.forward_overhead_ms == 1.5
    before = path.stat()
    _write(path, forward_overhead_ms=2.5)  # same size, in place (same inode)
    assert path.stat().st_size == before.st_size and path.stat().st_ino == before.st_ino
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1))  # a clock-tick later, no more
    assert load_profile(path).runtime.forward_overhead_ms == 2.5


def test_a_file_replaced_with_the_same_size_and_time_is_seen(tmp_path):
    # an editor's save (or a deploy) writes a new file and renames it over the old: a new inode,
    # whose size and mtime may match the old one's exactly
    path, new = tmp_path / "p.yaml", tmp_path / "p.yaml.new"
    _write(path, forward_overhead_ms=1.5)
    assert load_profile(path).runtime.forward_overhead_ms == 1.5
    keep = tmp_path / "held"  # held open by a second name, so the new file cannot reuse its inode
    os.link(path, keep)
    stamp = path.stat()
    _write(new, forward_overhead_ms=2.5)
    _same_stamp(new, stamp)
    os.replace(new, path)
    assert path.stat().st_size == stamp.st_size and path.stat().st_mtime_ns == stamp.st_mtime_ns
    assert load_profile(path).runtime.forward_overhead_ms == 2.5


def test_a_file_broken_after_a_good_load_is_refused(tmp_path):
    path = tmp_path / "p.yaml"
    _write(path, forward_overhead_ms=1.5)
    load_profile(path)
    _write(path, forward_overhead_ms=-1.0)
    stamp = path.stat()
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1))
    with pytest.raises(ConfigError, match=r"p\.yaml: runtime\.forward_overhead_ms"):
        load_profile(path)
    path.unlink()
    with pytest.raises(ConfigError, match=r"p\.yaml: file not found"):
        load_profile(path)


def test_an_unchanged_file_is_read_once(tmp_path, monkeypatch):
    path = tmp_path / "p.yaml"
    _write(path, forward_overhead_ms=1.25)
    reads = []
    real = profile_mod.load_model
    monkeypatch.setattr(profile_mod, "load_model", lambda *a, **k: reads.append(a) or real(*a, **k))
    first, again = load_profile(path), load_profile(path)
    assert again == first and again.runtime.forward_overhead_ms == 1.25
    assert len(reads) == 1
