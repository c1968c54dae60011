"""``tuner study create|run|status|pareto|export|report``."""

import click


@click.group()
def study() -> None:
    """Create, run and inspect Optuna studies of EAGLE-3 settings."""
