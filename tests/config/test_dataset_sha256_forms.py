"""``dataset.sha256`` pins the file by its digest, whichever case its hex digits are in (QA: the
upper-case digest PowerShell's Get-FileHash and certutil print was refused with "string should match
pattern '^[0-9a-f]{64}$'"); another form is refused saying what is expected and how to get it."""

import hashlib
import json

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError


def _load(tmp_path, sha256: str):
    (tmp_path / "d.jsonl").write_text(json.dumps({"prompt": "hello there"}) + "\n")
    (tmp_path / "s.yaml").write_text(json.dumps({"name": "s", "dataset": {"path": "d.jsonl", "sha256": sha256},
                                                 "single": {"lengths": [8]}}))
    return load_suite(tmp_path / "s.yaml")


def _digest(tmp_path) -> str:
    (tmp_path / "d.jsonl").write_text(json.dumps({"prompt": "hello there"}) + "\n")
    return hashlib.sha256((tmp_path / "d.jsonl").read_bytes()).hexdigest()


def test_an_upper_case_digest_pins_the_file_as_the_lower_case_one(tmp_path):
    digest = _digest(tmp_path)
    upper, lower = _load(tmp_path, digest.upper()), _load(tmp_path, digest)
    assert upper.dataset.sha256 == lower.dataset.sha256 == digest
    assert upper.to_dict() == lower.to_dict()  # the same suite: a study created with one goes on with the other
    # and a file that changed is still told apart, whatever the case
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, ("0" * 64 if digest != "0" * 64 else "1" * 64).upper())
    assert "not the one the suite pins; the file changed" in str(err.value)


@pytest.mark.parametrize("given, length", [("sha256:{d}", 71), ("{d60}", 60)])
def test_another_form_says_what_is_expected(tmp_path, given, length):
    digest = _digest(tmp_path)
    value = given.format(d=digest, d60=digest[:60])
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, value)
    assert str(err.value) == (f"{tmp_path / 's.yaml'}: dataset.sha256: expected the file's SHA-256 as 64 hexadecimal "
                              f"digits, as sha256sum FILE prints it (or Get-FileHash FILE); got {value!r} "
                              f"({length} characters)")
