"""``tuner bench``: run the fixed benchmark suite against any SGLang-compatible server."""

import click


@click.group()
def bench() -> None:
    """Benchmark a running server with the fixed suite."""
