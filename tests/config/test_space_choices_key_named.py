"""An error inside a search-space parameter's ``choices`` list names the key ``choices``: pydantic puts
the union member's tag (``choices``) in the location before the member's own key (also ``choices``),
and the tag, which means nothing to a YAML author, is dropped; the key is kept
(tuner/config/yamlfile.py ``validation_error``).

QA: ``speculative_eagle_topk: {choices: [1, 2, 4.0, 8]}`` said
``params.speculative_eagle_topk[2]: input should be a valid integer, got 4.0``, a key no file has.
"""

import pytest

from tuner.config.space import load_space
from tuner.config.yamlfile import ConfigError

SPACE = """algorithm: EAGLE3
params:
  speculative_num_steps: {low: 1, high: 8}
  speculative_eagle_topk: {choices: [1, 2, CHOICE, 8]}
  speculative_num_draft_tokens: {low: 2, high: 64}
"""


@pytest.mark.parametrize("choice, said", [("4.0", "got 4.0"), ("'4'", "got '4'"), ("true", "got True")])
def test_a_bad_choice_is_named_under_choices(tmp_path, choice, said):
    path = tmp_path / "space.yaml"
    path.write_text(SPACE.replace("CHOICE", choice))
    with pytest.raises(ConfigError) as err:
        load_space(path)
    assert err.value.key == "params.speculative_eagle_topk.choices[2]"
    assert said in err.value.message


def test_a_bad_range_bound_keeps_its_key(tmp_path):
    path = tmp_path / "space.yaml"
    path.write_text(SPACE.replace("CHOICE", "4").replace("{low: 1, high: 8}", "{low: 1, high: 8.5}"))
    with pytest.raises(ConfigError) as err:
        load_space(path)
    assert err.value.key == "params.speculative_num_steps.high"
