"""What the simulator's own flags say of their defaults is what the server runs with (in-process).

QA (README "The simulated SGLang server", Flags): ``--sim-noise``'s help and its bad-value line said
"the profile's" noise, but no profile carries one: without the flag the server runs with none
(``tuner/sim/server.py`` builds ``PerfModel(noise=0.0)``), as the README's table says.
"""

from __future__ import annotations

import pytest
import yaml

from tuner.sim.args import build_parser, parse_args
from tuner.sim.profile import PROFILES_DIR


def _help_of(flag: str) -> str:
    """The help text argparse prints for ``flag`` in the simulator arguments group, on one line."""
    text = " ".join(build_parser().format_help().split())
    group = text[text.index("simulator arguments:"):]
    start = group.index(flag + " ")
    nxt = group.find(" --sim-", start + len(flag))
    return group[start:nxt if nxt != -1 else len(group)]


def _keys(node) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {k for v in node.values() for k in _keys(v)}
    if isinstance(node, list):
        return {k for v in node for k in _keys(v)}
    return set()


def test_sim_noise_help_states_the_default_the_server_runs_with():
    # the server's own default: no --sim-noise -> None -> PerfModel(noise=0.0)
    assert parse_args(["--model-path", "m"]).sim_noise is None
    # ... and no shipped profile has a noise of its own that could stand in for it
    for path in sorted(PROFILES_DIR.glob("*.yaml")):
        assert not any("noise" in k for k in _keys(yaml.safe_load(path.read_text()))), path.name
    said = _help_of("--sim-noise R")
    assert "default: 0" in said, said
    assert "profile's" not in said, said


def test_a_bad_sim_noise_names_the_default_it_falls_back_to(capsys):
    with pytest.raises(SystemExit) as exc:
        parse_args(["--model-path", "m", "--sim-noise", "-1"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --sim-noise: "), err
    assert "without it: 0" in err and "profile's" not in err, err
