"""The benchmark layer: runs the fixed suite over HTTP against one server. Knows nothing of Optuna.

Owns the HTTP load client, the suite runner, the staged order a study measures in (``plan``) and
:class:`SuiteResult` (per-request records and the figures aggregated from them). May import :mod:`tuner.config` (the suite file, atomic writes) and
:mod:`tuner.sglang`; nothing above (engine, results, cli) and none of its peers (server, sim).

Public API (everything else is internal)::

    suite = load_suite("seed")                 # tuner.config.suite: "quick", a YAML path, an inline dict
    result = run_suite("http://127.0.0.1:30000", suite, api="generate", stream=False,
                       on_event=lambda phase, info: ...)
    result.single_tok_per_s, result.tok_per_s_at(32), result.accept_length   # model time
    result.save("bench.json"); SuiteResult.load("bench.json")

``run_suite`` raises :class:`ServerUnreachableError` when nothing answers at the URL and
:class:`ServerDiedError` (with ``.partial``, a :class:`SuiteResult`) when the server dies mid-suite.
"""

from .client import BenchError, ServerUnreachableError
from .records import RequestRecord
from .result import SCHEMA_VERSION, SingleRow, SuiteResult, SweepRow, resolved_spec_from_info
from .runner import ServerDiedError, run_suite
from .stats import Figure

__all__ = [
    "BenchError",
    "Figure",
    "RequestRecord",
    "SCHEMA_VERSION",
    "ServerDiedError",
    "ServerUnreachableError",
    "SingleRow",
    "SuiteResult",
    "SweepRow",
    "resolved_spec_from_info",
    "run_suite",
]
