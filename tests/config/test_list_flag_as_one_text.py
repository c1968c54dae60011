"""A numeric list flag in ``server.args`` (or a space's ``fixed``) given its items as one text
(``cuda_graph_bs_decode: "1 2 4"``) is refused with the YAML list to write
(tuner/config/server_arg_checks.py ``_check_server_arg``).

QA (qa228): the line was ``cuda_graph_bs_decode: expected an integer, got '1 2 4'``, naming no fix.
SGLang 0.5.23 reads the text as one argv word, on the launch's command line and through its
``--config`` loader (``_add_scalar_arg``: ``str(value)``), so ``int('1 2 4')`` fails there; the
fix is the list, which both pass as separate words."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from support.demo_study import demo_study

from tuner.cli import cli
from tuner.config.server_arg_checks import check_server_args


@pytest.mark.parametrize("key, text, fix", [("cuda_graph_bs_decode", "1 2 4", "[1, 2, 4]"),
                                            ("gc_threshold", "700, 10, 10", "[700, 10, 10]")])
def test_items_in_one_text_say_the_list(tmp_path, key, text, fix):
    study = demo_study(tmp_path, "lf", **{"server.args": {key: text}})
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert f"lf.yaml: server.args: {key}: expected a list, each item an integer, got the text {text!r}" in lines[0]
    assert f"write the items as a YAML list: {key}: {fix}" in lines[0], r.output
    assert not (tmp_path / "lf.db").exists()


def test_one_item_as_text_and_a_text_item_with_a_space_are_taken():
    # '4' is one word argparse reads as 4; a path with a space is one item of a text list
    assert check_server_args({"cuda_graph_bs_decode": "4"}, "server.args") == {"cuda_graph_bs_decode": "4"}
    assert check_server_args({"log_requests_target": "/logs/my run"}, "server.args") == \
        {"log_requests_target": "/logs/my run"}
