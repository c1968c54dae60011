"""A dataset row whose message content is OpenAI text parts (``[{"type": "text", "text": ..}]``, as
OpenAI's clients write it) is served: ``bench.api: chat`` sends the parts as they are (SGLang's
chat template decides how they join), the raw-text APIs send them joined by a space (SGLang
0.5.23's ``process_content_for_template_format``, "string" format). QA: such a row was refused."""

from __future__ import annotations

import json

from support.chat_server import FakeChatSGLang

from tuner.bench import run_suite
from tuner.config.suite import load_suite

PARTS = [{"type": "text", "text": "Describe the sea"}, {"type": "text", "text": "in one line."}]
# (the parts on the system turn: the test server answers the last turn's text)
ROW = {"id": "sea", "messages": [{"role": "system", "content": PARTS}, {"role": "user", "content": "Go on."}],
       "max_tokens": 6}


def _suite(tmp_path):
    (tmp_path / "d.jsonl").write_text(json.dumps(ROW) + "\n")
    (tmp_path / "s.yaml").write_text("name: s\ndataset: {path: d.jsonl}\nsingle: {repeats: 1}\n"
                                     "sweep: {concurrencies: [1]}\nwarmup: {requests: 0}\ntimeout_s: 10\n")
    return load_suite(tmp_path / "s.yaml")


def test_text_parts_are_served_as_parts_through_chat_and_joined_as_raw_text(tmp_path):
    suite = _suite(tmp_path)
    (prompt,) = suite.prompts
    assert prompt.text == "Describe the sea in one line.\n\nGo on."
    assert prompt.chat_messages() == ROW["messages"]
    assert load_suite(suite.to_dict()) == suite  # stored with the study and read back alike
    with FakeChatSGLang(verify_every=2) as server:
        result = run_suite(server.url, suite, api="chat", stream=False)
    assert [b["messages"] for b in server.bodies] == [ROW["messages"]] * 2  # single, then the sweep
    assert all(r.ok and r.completion_tokens == r.max_tokens == 6 for r in result.records)
