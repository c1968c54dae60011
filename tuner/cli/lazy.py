"""A click group whose subcommands are imported only when used.

Keeps ``tuner --help`` and ``tuner space ...`` fast (Optuna and aiohttp load only for the commands
that need them), and lets each command live in its own module: adding one is one line in a table.
"""

from __future__ import annotations

import importlib

import click


class LazyGroup(click.Group):
    """``lazy`` maps a command name to ``"module.path:attribute"``."""

    def __init__(self, *args, lazy: dict[str, str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx, name):
        if name in self.lazy:
            module, attr = self.lazy[name].split(":")
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)
