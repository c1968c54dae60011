"""``tuner launch``: build, show and run the server command a trial would use."""

import click


@click.group()
def launch() -> None:
    """Launch the server a trial would use (SGLang or the simulator)."""
