"""``python -m tuner.sim ARGS``: run the simulated SGLang server (see :mod:`tuner.sim.server`)."""

import sys

from .server import main

if __name__ == "__main__":
    sys.exit(main())
