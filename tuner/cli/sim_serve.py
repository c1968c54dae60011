"""``tuner sim serve ARGS``: the simulated SGLang server in the foreground.

Every argument goes unchanged to the simulator's own parser (SGLang's launch flags plus ``--sim-*``;
``tuner sim serve --help`` prints them), so a command line that works with
``python -m sglang.launch_server`` works here with the same meaning.
"""

from __future__ import annotations

import sys

import click


@click.command(
    "serve",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
    add_help_option=False,
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def serve(args: tuple[str, ...]) -> None:
    """Run the simulated SGLang server (SGLang's flags plus --sim-*; --help lists them)."""
    from ..sim.server import main

    sys.exit(main(list(args)))
