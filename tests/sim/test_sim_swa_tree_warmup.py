"""A draft tree verified on FA3 at a page size above 1 for a sliding-window model (rule
``swa-tree-page-size``) dies where SGLang 0.5.23 dies: at the first target verify, SGLang's own warmup
request (http_server.py ``_execute_server_warmup``, 8 new tokens), which runs once the HTTP server is up.
``layers/attention/flashattention_backend.py`` asserts ``page_size == 1`` in
``_init_sliding_window_attn_spec_metadata`` (line 3417), reached from the target verify (line 1177 eager,
line 3277 CUDA-graph replay); the target's CUDA-graph capture returns before it for topk > 1 (lines
671-678), and the draft's capture never calls it, so the step count changes nothing.

QA (qa208, qa209): with more than one step the simulator printed "Exception: Capture cuda graph failed:
FlashAttention backend doesn't support ..." from the draft CUDA-graph capture and exited before its port
opened."""

from __future__ import annotations

import pytest
import requests
import yaml
from support.simproc import running_sim

from tuner.server.failures import PHASE_STARTUP, classify_log, error_line
from tuner.sim.profile import PROFILES_DIR

#: SGLang's assert (flashattention_backend.py line 3417), word for word
SAYS = ("AssertionError: FlashAttention backend doesn't support topk > 1 speculative decoding with page size > 1 "
        "sliding window attention")


@pytest.fixture
def gpt_oss_h100(tmp_path):
    data = yaml.safe_load((PROFILES_DIR / "dense-27b-tp1.yaml").read_text())
    data["model"]["architecture"] = "GptOssForCausalLM"
    data["hardware"]["compute_capability"] = "9.0"
    path = tmp_path / "gpt-oss-h100.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def _log(profile: str, steps: int, draft: int) -> str:
    args = ["--sim-profile", profile, "--sim-load-seconds", "0.3", "--page-size", "16",
            "--attention-backend", "fa3", "--speculative-algorithm", "EAGLE3",
            "--speculative-num-steps", str(steps), "--speculative-eagle-topk", "2",
            "--speculative-num-draft-tokens", str(draft)]
    with running_sim(*args, speedup=200.0, ready=False) as sim:
        with pytest.raises(requests.ConnectionError):  # loading: SGLang's port is still closed
            requests.get(sim.url + "/health_generate", timeout=10)
        assert sim.wait(15) == 1
        return sim.log


@pytest.mark.parametrize("steps,draft", [(1, 3), (2, 4), (4, 8)])  # trees their drafts can fill
def test_dies_at_the_warmup_verify_after_the_port_opens(gpt_oss_h100, steps, draft):
    log = _log(gpt_oss_h100, steps, draft)
    assert "The server is fired up" not in log
    assert "Capture cuda graph failed" not in log
    assert 'flashattention_backend.py", in _init_sliding_window_attn_spec_metadata' in log
    assert SAYS in log
    assert log.index("Load weight end") < log.index("HTTP server listening on") < log.index(SAYS)
    # the tuner reads it as SGLang's: a start-up failure past argument handling, not of the tree's size
    # (``other``: the sampler rules out this tree alone), quoting SGLang's assert
    assert classify_log(log, 1, PHASE_STARTUP) == "other"
    assert error_line(log) == SAYS
