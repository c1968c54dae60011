"""``tuner sim landscape`` honours a space's fixed CUDA-graph cap under the name a space may use.

QA (README "tuner sim landscape": "A fixed cuda_graph_max_bs in the space file is honoured"): a
space refuses ``cuda_graph_max_bs`` (ambiguous in SGLang 0.5.23), and the landscape read only that
name, so ``cuda_graph_max_bs_decode: 4``, which the simulator runs with, changed no figure: C=32
batches were modelled in a CUDA graph where the server runs them eager.
"""

from __future__ import annotations

from pathlib import Path

from tuner.sim.landscape import landscape, load_suite_inputs
from tuner.sim.model import PerfModel, load_profile

SPACE = """\
algorithm: EAGLE3
params:
  speculative_num_steps: {low: 1, high: 2}
  speculative_eagle_topk: {choices: [1]}
  speculative_num_draft_tokens: {low: 2, high: 3}
fixed: {FIXED}
"""


def _space(tmp_path: Path, name: str, fixed: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(SPACE.replace("{FIXED}", fixed))
    return path


def test_a_fixed_cuda_graph_max_bs_decode_changes_the_modelled_figures(tmp_path):
    model = PerfModel(load_profile("k2.6-tp8-pcie"))
    free = landscape(model, _space(tmp_path, "free", "{}"), concurrencies=(32,), suite="quick")
    capped = landscape(model, _space(tmp_path, "capped", "{cuda_graph_max_bs_decode: 4}"),
                       concurrencies=(32,), suite="quick")
    # the model's own figure for the same cap: batches of 32 run eager, so slower
    quick = load_suite_inputs("quick")
    expected = model.expected_figures(None, prompts=list(quick.prompts), single_lengths=[],
                                      concurrencies=[32], sweep_tokens=quick.sweep_tokens,
                                      cuda_graph_max_bs=4)
    assert capped.baseline.tok_per_s[32] < free.baseline.tok_per_s[32]
    assert abs(capped.baseline.tok_per_s[32] - expected.tok_per_s[32]) < 1e-6 * expected.tok_per_s[32]


def test_a_fixed_decode_bs_list_caps_the_graphs_at_its_largest_entry(tmp_path):
    # SGLang 0.5.23 captures decode graphs up to max(cuda_graph_bs_decode) (memory_hook.py lines 201-207),
    # as the simulator runs it (tuner/sim/server.py); QA (qa226): the landscape read max_bs alone
    model = PerfModel(load_profile("k2.6-tp8-pcie"))
    capped = landscape(model, _space(tmp_path, "capped", "{cuda_graph_max_bs_decode: 4}"),
                       concurrencies=(32,), suite="quick")
    listed = landscape(model, _space(tmp_path, "listed", "{cuda_graph_bs_decode: [1, 2, 4]}"),
                       concurrencies=(32,), suite="quick")
    assert listed.baseline.tok_per_s[32] == capped.baseline.tok_per_s[32]
