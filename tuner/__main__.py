"""``python -m tuner ARGS``: the ``tuner`` command (:func:`tuner.cli.main`).

Only when run: importing ``tuner.__main__`` (``pytest --doctest-modules --pyargs tuner``, ``pydoc``,
an API-doc generator walking the package) neither runs the command nor exits, as
``tuner/sim/__main__.py`` does not either.
"""

from tuner.cli import main

if __name__ == "__main__":
    main()
