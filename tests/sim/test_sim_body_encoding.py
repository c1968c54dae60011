"""Request bodies in another encoding than UTF-8, as SGLang 0.5.23 reads them.

SGLang parses bodies with orjson (``srt/entrypoints/http_server.py`` lines 472-481,
``ORJSONRequest``), which takes UTF-8 only; FastAPI turns its ``JSONDecodeError`` into the 400
validation body (``json_invalid``). The simulator parsed with ``json.loads`` on the bytes, which
detects a BOM and UTF-16/32 and decodes them: a client sending such a body was served by the
simulator and refused by SGLang. In-process: the parsing is what is under test, not the server.
"""

from __future__ import annotations

import pytest

from tuner.sim.request_models import ApiError, read_body

JSON = "application/json"


@pytest.mark.parametrize(("raw", "said"), [
    ('\ufeff{"text": "hi"}'.encode(), "UTF-8 byte order mark (BOM) is not supported"),
    ('{"text": "hi"}'.encode("utf-16"), "str is not valid UTF-8: surrogates not allowed"),
    ('{"text": "hi"}'.encode("utf-32"), "str is not valid UTF-8: surrogates not allowed"),
    (b'{"text": "\xff"}', "str is not valid UTF-8: surrogates not allowed"),
])
@pytest.mark.parametrize("endpoint", ["/generate", "/v1/chat/completions"])
def test_non_utf8_body_is_a_json_decode_error(raw, said, endpoint):
    with pytest.raises(ApiError) as caught:
        read_body(raw, JSON, endpoint)
    exc = caught.value
    assert exc.status == 400
    assert exc.body["object"] == "error" and exc.body["code"] == 400
    assert "'type': 'json_invalid', 'loc': ('body', 0)" in exc.body["message"]
    assert said in exc.body["message"]


def test_utf8_body_is_read():
    assert read_body('{"text": "h\u00e9 \u4f60"}'.encode(), JSON, "/generate") == {"text": "h\u00e9 \u4f60"}
