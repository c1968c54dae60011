"""What SGLang 0.5.23's scheduler does with a request its tokenizer manager let in near the context,
on the simulator and in the check before a study (``tuner/sim/context.py``).

From SGLang's source: ``max_req_len = min(context_len - 1, KV capacity - 1)`` and ``max_req_input_len =
max_req_len - 5`` (``srt/managers/tp_worker.py`` ``get_worker_info``); ``init_req_max_new_tokens``
lowers ``max_new_tokens`` to ``max_req_len - input - 1`` (``srt/managers/scheduler.py`` line 2693), and
``validate_input_length`` refuses an input of ``max_req_input_len`` tokens or more
(``srt/managers/utils.py`` line 259) with a 400 abort. The simulator served such a request whole (input
plus ``max_new_tokens`` equal to the context: every token asked), where SGLang answers 2 short, and the
check before a study let it through, so the baseline failed on SGLang only.
"""

from __future__ import annotations

import json
from pathlib import Path

import requests
import yaml
from click.testing import CliRunner
from support.simproc import running_sim

from tuner.cli import cli

JSON = {"Content-Type": "application/json"}


def _generate(url: str, n_input: int, max_new: int) -> requests.Response:
    body = {"input_ids": [7] * n_input, "sampling_params": {"max_new_tokens": max_new, "temperature": 0}}
    return requests.post(url + "/generate", data=json.dumps(body), headers=JSON, timeout=60)


def test_a_request_at_the_context_is_served_short_and_one_near_it_refused_as_by_sglang():
    with running_sim() as sim:
        info = requests.get(sim.url + "/server_info", timeout=30).json()
        ctx = info["context_length"]
        assert info["max_total_num_tokens"] >= ctx  # the context, not the KV cache, sets the limits here
        assert info["max_req_input_len"] == ctx - 6

        at_limit = _generate(sim.url, ctx - 100, 100)  # the tokenizer manager's limit exactly
        assert at_limit.status_code == 200, at_limit.text
        meta = at_limit.json()["meta_info"]
        assert meta["completion_tokens"] == 98 and meta["finish_reason"] == {"type": "length", "length": 98}

        completion = requests.post(sim.url + "/v1/completions", headers=JSON, timeout=60, data=json.dumps(
            {"model": "m", "prompt": [7] * (ctx - 50), "max_tokens": 49, "temperature": 0}))
        assert completion.status_code == 200, completion.text
        answer = completion.json()
        assert answer["usage"]["completion_tokens"] == 48 and answer["choices"][0]["finish_reason"] == "length"

        assert _generate(sim.url, ctx - 7, 1).json()["meta_info"]["completion_tokens"] == 1
        refused = _generate(sim.url, ctx - 6, 1)
        assert refused.status_code == 400
        assert refused.json() == {"error": {"message": (
            f"Input length ({ctx - 6} tokens) exceeds the maximum allowed length ({ctx - 6} tokens). Use a "
            "shorter input or enable --allow-auto-truncate.")}}


ROOT = Path(__file__).resolve().parents[2]


def _study(tmp: Path, prompt_chars: int, max_tokens: int) -> Path:
    """A simulator study on k2.6-tp8-pcie (context 8192; 4 characters a token) of one prompt."""
    suite = {"name": "s", "prompts": [{"name": "a", "text": "x" * prompt_chars}],
             "single": {"lengths": [max_tokens], "repeats": 1},
             "sweep": {"concurrencies": [1, 4], "max_tokens": max_tokens}, "warmup": {"requests": 0},
             "timeout_s": 30}
    study = {"name": "near", "search_space": str(ROOT / "search_spaces" / "eagle3.yaml"),
             "server": {"backend": "sim", "model_path": "m", "draft_model_path": "d",
                        "sim": {"speedup": 50, "profile": "k2.6-tp8-pcie"}},
             "bench": {"suite": "suite.yaml"}, "objectives": ["single_speedup", "speedup@4"]}
    (tmp / "suite.yaml").write_text(yaml.safe_dump(suite))
    (tmp / "near.yaml").write_text(yaml.safe_dump(study))
    return tmp / "near.yaml"


def test_the_check_before_a_study_holds_requests_to_what_sglang_serves_whole(tmp_path):
    cases = [  # (prompt tokens, max_tokens, what the one line says)
        (8184, 8, "suite.yaml: prompts[0]: 8184 prompt tokens + max_tokens 8 is within 2 tokens of the context "
                  "length 8192 of profile k2.6-tp8-pcie (tokens by the simulator's count, characters / 4, a CJK "
                  "character or an emoji one token); SGLang's scheduler lowers its max_tokens to 6 (the context - 2 - the "
                  "input), so its answer comes back short: shorten it or lower its max_tokens"),
        (8186, 4, "8186 prompt tokens + max_tokens 4 is within 6 tokens of the context length 8192 of profile "
                  "k2.6-tp8-pcie (tokens by the simulator's count, characters / 4, a CJK character or an emoji one token); "
                  "SGLang's scheduler refuses an input of 8186 tokens or more with HTTP 400: shorten it"),
    ]
    for i, (tokens, max_tokens, says) in enumerate(cases):
        work = tmp_path / str(i)
        work.mkdir()
        study = _study(work, tokens * 4, max_tokens)
        r = CliRunner().invoke(cli, ["study", "create", str(study)])
        lines = r.stderr.strip().splitlines()
        assert r.exit_code == 2 and len(lines) == 1 and says in lines[0], r.output
        assert sorted(p.name for p in work.iterdir()) == ["near.yaml", "suite.yaml"]  # nothing written

    fits = tmp_path / "fits"
    fits.mkdir()
    r = CliRunner().invoke(cli, ["study", "create", str(_study(fits, 8182 * 4, 8))])  # 8190: served whole
    assert r.exit_code == 0, r.output
