"""An empty study file, or one of comments only, says so, with the keys it needs.

QA (qa178): both said ``name: required key is missing``, which reads as if the rest of the file were
there and only the name had been forgotten.
"""

import pytest

from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError


@pytest.mark.parametrize("text", ["", "\n\n", "# a study, to be written\n", "---\n"])
def test_an_empty_study_file_says_it_is_empty(tmp_path, text):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_study(path)
    assert str(err.value) == f"{path}: is empty (or holds only comments): write its keys, at least name, server"


def test_a_study_file_missing_only_its_name_still_names_the_key(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("server: {backend: model}\n")
    with pytest.raises(ConfigError) as err:
        load_study(path)
    assert "name: required key is missing" in str(err.value)
