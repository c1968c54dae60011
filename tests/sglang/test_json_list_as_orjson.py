"""SGLang's JSON-list flags (``--forward-hooks``, ``--sidecar-args``, ...) are read as SGLang 0.5.23 reads
them: ``json_list_type`` (``srt/utils/common.py``) is ``orjson.loads``, which refuses what Python's
``json`` takes and no double holds, and lone UTF-16 surrogates.

QA (qa128): ``server.args: {forward_hooks: '[1e400]'}`` was created (Python's json reads ``inf``), and
SGLang's parser would refuse every launch of the night ("argument --forward-hooks: Invalid JSON list").
The verdicts below are orjson 3.11's, recorded (CI has no orjson): ``orjson.loads(text)``.
"""

from __future__ import annotations

import argparse

import pytest
from pydantic import ValidationError

from tuner.config.study import ServerSettings
from tuner.sglang.arg_types import json_list_type

#: text -> orjson.loads' verdict: the value, or its JSONDecodeError message
ORJSON = {
    "[1e400]": "number is infinity when parsed as double",
    "[-1e400]": "number is infinity when parsed as double",
    "[1.8e308]": "number is infinity when parsed as double",
    "[1" + "0" * 400 + "]": "number is infinity when parsed as double",
    '["\\ud800"]': "no low surrogate in string",
    '{"\\udc00": 1}': "invalid high surrogate in string",
    "[NaN]": "invalid",
    "[1.7976931348623157e308]": [1.7976931348623157e308],
    "[18446744073709551616]": [1.8446744073709552e19],  # past 64 bits: a double
    "[9223372036854775808]": [9223372036854775808],  # an unsigned 64-bit integer
    '["\\ud83d\\ude00"]': ["\U0001F600"],  # a surrogate pair is one character
    "[1, 2]": [1, 2],
}


@pytest.mark.parametrize("text, orjson_says", ORJSON.items(), ids=[k[:24] for k in ORJSON])
def test_json_list_type_takes_what_orjson_takes(text, orjson_says):
    if isinstance(orjson_says, str):
        with pytest.raises(argparse.ArgumentTypeError, match="Invalid JSON list"):
            json_list_type(text)
    else:
        assert json_list_type(text) == orjson_says


def test_a_study_giving_such_a_list_is_refused_naming_the_argument():
    with pytest.raises(ValidationError) as err:
        ServerSettings.model_validate({"model_path": "m", "backend": "sglang", "args": {"forward_hooks": "[1e400]"}})
    assert "forward_hooks: expected JSON text" in str(err.value)
