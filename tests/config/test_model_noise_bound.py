"""``server.model.noise`` past :data:`tuner.config.study.MAX_MODEL_NOISE` (0.1) is refused in a study
file with one line naming the key: a relative deviation that large on every figure cannot be meant
(the README's figures use 0.02 to 0.04). A study stored with it still opens.

QA: ``server.model: {noise: 0.7}`` was accepted for a model-backend study.
"""

import pytest
import yaml

from support.model_study import model_study_data
from tuner.config.study import load_study, study_from_dict
from tuner.config.yamlfile import ConfigError


def _file(tmp_path, noise):
    data = model_study_data("nz")
    data["server"]["model"]["noise"] = noise
    path = tmp_path / "nz.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_noise_no_measurement_has_is_refused_in_a_file_only(tmp_path):
    assert load_study(_file(tmp_path, 0.1)).server.model.noise == 0.1
    with pytest.raises(ConfigError) as err:
        load_study(_file(tmp_path, 0.7))
    line = str(err.value)
    assert "server.model.noise: 0.7" in line and "give at most 0.1" in line and "\n" not in line
    stored = load_study(_file(tmp_path, 0.1)).model_dump(mode="json")
    stored["server"]["model"]["noise"] = 0.7
    assert study_from_dict(stored).server.model.noise == 0.7
