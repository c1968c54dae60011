"""``tuner sim ...``: the simulated SGLang server and its performance model."""

from __future__ import annotations

import click

from .lazy import LazyGroup


@click.group(cls=LazyGroup, lazy={
    "serve": "tuner.cli.sim_serve:serve",
    "landscape": "tuner.cli.sim_landscape:landscape",
})
def sim() -> None:
    """The simulated SGLang server (no GPU needed) and its performance model."""
