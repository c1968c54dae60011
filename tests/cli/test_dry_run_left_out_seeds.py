"""`tuner study run --dry-run` says which default seed trials the run leaves out, and why (QA, qa134:
with an attention backend that runs no trees for the model, three of the four were dropped unsaid)."""

from __future__ import annotations

import yaml
from support.cli_in_process import tuner_here
from support.landscapes import table_from_profile, write_table
from support.model_study import model_study_data


def test_a_space_without_trees_names_the_tree_seeds_it_leaves_out(tmp_path):
    data = model_study_data("fi")
    data["server"]["backend"] = "sim"
    data["server"].pop("model", None)
    data["server"]["args"] = {"attention_backend": "flashinfer"}  # runs topk 1 only for this MLA model
    (tmp_path / "fi.yaml").write_text(yaml.safe_dump(data))
    r = tuner_here("study", "run", "fi.yaml", "--dry-run", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    left = [line for line in r.output.splitlines() if line.startswith("# default seed trial ")]
    assert left == [f"# default seed trial {s}: left out, it lies outside the search space as restricted above"
                    for s in ("steps=4 topk=8 draft=64", "steps=2 topk=4 draft=8", "steps=5 topk=8 draft=32")], r.output
    assert "# seed trial steps=3 topk=1 draft=4:" in r.output


def test_a_landscape_grid_names_the_seeds_it_does_not_list(tmp_path):
    grid = {(3, 1, 4), (2, 4, 8), (1, 1, 2)}
    write_table(tmp_path / "grid.json", table_from_profile(
        keep=lambda s: (s.num_steps, s.eagle_topk, s.num_draft_tokens) in grid))
    data = model_study_data("gr")
    data["server"]["model"] = {"landscape": "grid.json", "seed": 1}
    (tmp_path / "gr.yaml").write_text(yaml.safe_dump(data))
    r = tuner_here("study", "run", "gr.yaml", "--dry-run", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert [line for line in lines if line.startswith("# seed trial ")] == [
        "# seed trial steps=3 topk=1 draft=4", "# seed trial steps=2 topk=4 draft=8"], r.output
    assert [line for line in lines if line.startswith("# default seed trial ")] == [
        f"# default seed trial {s}: left out, the landscape table does not list it"
        for s in ("steps=4 topk=8 draft=64", "steps=5 topk=8 draft=32")], r.output
