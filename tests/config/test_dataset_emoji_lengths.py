"""Emoji count a token each, as CJK characters do (QA: a ShareGPT reply of 44 emoji, 44 to 176 tokens to
the byte-level BPE tokenizers SGLang serves, was a request of 11 output tokens, and a prompt of two emoji
was dropped as under 2 tokens)."""

import json

from tuner.config.dataset import estimate_tokens
from tuner.config.suite import load_suite


def test_emoji_and_symbols_count_a_token_each():
    assert estimate_tokens("🙂" * 44) == 44
    assert estimate_tokens("☕✅") == 2  # U+2615, U+2705: symbols and dingbats, three UTF-8 bytes
    assert estimate_tokens("𝐀𝐁𝐂𝐃") == 4  # mathematical bold letters, past U+FFFF
    assert estimate_tokens("ok 👍 thanks") == 1 + round(len("ok  thanks") / 4)
    assert estimate_tokens("hello world") == 3  # Latin text as before


def test_a_sharegpt_reply_of_emoji_is_measured_at_its_length(tmp_path):
    convs = [{"id": "party", "conversations": [{"from": "human", "value": "Reply in emoji only, please."},
                                               {"from": "gpt", "value": "🎉🥳🎈" * 15}]},
             {"id": "short", "conversations": [{"from": "human", "value": "🙂🙂"},
                                               {"from": "gpt", "value": "Nice to see you smiling."}]}]
    (tmp_path / "d.json").write_text(json.dumps(convs, ensure_ascii=False), encoding="utf-8")
    suite = load_suite({"name": "t", "dataset": {"path": "d.json"}, "single": {"repeats": 1}}, tmp_path)
    assert {p.name: p.max_tokens for p in suite.prompts} == {"party": 45, "short": 6}
    assert suite.dataset.dropped_short == 0
