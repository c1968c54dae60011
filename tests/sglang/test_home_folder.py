"""The contract of :func:`tuner.sglang.home.home_folder`, the one place ``Path.home()`` is asked (the
Hugging Face cache lookup, matplotlib's folders for ``report --png``): the home folder as ``$HOME``
gives it, existing or not, and None where there is none to be had (``HOME`` unset and this user's
id in no passwd entry), where ``Path.home()`` raises."""

from support.rights import HOME_VARS, without_home
from tuner.sglang.home import home_folder
from tuner.sglang.model import hf_cache_dirs


def test_a_home_that_does_not_exist_is_given_as_it_is(tmp_path, monkeypatch):
    for var in HOME_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "nowhere"))
    assert home_folder() == tmp_path / "nowhere"
    assert hf_cache_dirs() == [tmp_path / "nowhere" / ".cache" / "huggingface" / "hub"]
    assert not (tmp_path / "nowhere").exists()  # nothing made


def test_no_home_to_be_had_is_none_and_the_variables_still_count(tmp_path, monkeypatch):
    without_home(monkeypatch)
    assert home_folder() is None
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # no home needed for it
    assert hf_cache_dirs() == [tmp_path / "cache" / "huggingface" / "hub"]
