"""``tuner sim serve ARGS``: the simulated SGLang server in the foreground.

Every argument goes unchanged to the simulator's own parser (SGLang's launch flags plus ``--sim-*``;
``tuner sim serve --help`` prints them), so a command line that works with
``python -m sglang.launch_server`` works here with the same meaning. A ``--config`` file SGLang's
loader cannot use is one line naming the file and the problem, exit 1 (SGLang's loader, and
``python -m tuner.sim`` which stands in for it, end in a traceback, exit 1).
"""

from __future__ import annotations

import sys

import click


def config_problem(args: list[str]) -> str | None:
    """The one line saying why the ``--config`` file in ``args`` cannot be loaded as SGLang 0.5.23's
    ``ConfigArgumentMerger`` loads it (:func:`tuner.sim.args.merge_config`), or None (no ``--config``,
    or a file it loads: its values are then argparse's to judge, exit 2, as in SGLang)."""
    import yaml

    from ..sim.args import build_parser, merge_config

    if "--config" not in args:
        return None
    at = args.index("--config")
    where = f"--config {args[at + 1]}" if at + 1 < len(args) else "--config"
    try:
        merge_config(list(args), build_parser())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        what = getattr(exc, "problem", None) or " ".join(str(exc).split())
        at_line = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        return f"error: {where}: not YAML SGLang's loader reads: {what}{at_line}"
    except OSError as exc:
        return f"error: {where}: cannot read it: {exc.strerror or exc}"
    except AttributeError as exc:  # ConfigArgumentMerger's key.replace on a key that is not text
        key = _key_not_text(args[at + 1])
        return (f"error: {where}: key {key!r} is not text; SGLang's --config loader fails on it ({exc}): "
                "keys are flag names, e.g. tp-size")
    except ValueError as exc:  # SGLang's own messages: not .yaml, not found, not a mapping, unsupported
        return f"error: {where}: {' '.join(str(exc).split())}"
    return None


def _key_not_text(path: str):
    import yaml

    with open(path) as fh:
        return next((k for k in (yaml.safe_load(fh) or {}) if not isinstance(k, str)), None)


@click.command(
    "serve",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
    add_help_option=False,
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def serve(args: tuple[str, ...]) -> None:
    """Run the simulated SGLang server (SGLang's flags plus --sim-*; --help lists them)."""
    from ..sim.server import main

    problem = config_problem(list(args))
    if problem is not None:
        click.echo(problem, err=True)
        sys.exit(1)
    sys.exit(main(list(args)))
