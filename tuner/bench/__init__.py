"""The benchmark layer: runs the fixed suite over HTTP against one server. Knows nothing of Optuna.

Owns the HTTP load client, the suite runner, the staged order a study measures in (``plan``) and
:class:`SuiteResult` (per-request records and the figures aggregated from them). May import :mod:`tuner.config` (the suite file, atomic writes) and
:mod:`tuner.sglang`; nothing above (engine, results, cli) and none of its peers (server, sim).

Public API (everything else is internal)::

    suite = load_suite("seed")                 # tuner.config.suite: "quick", a YAML path, an inline dict
    result = run_suite("http://127.0.0.1:30000", suite, api="generate", stream=False,
                       on_event=lambda phase, info: ..., deadline_s=None, hang=HangPolicy())
    result.single_tok_per_s, result.tok_per_s_at(32), result.accept_length   # model time
    result.save("bench.json"); SuiteResult.load("bench.json")

``run_suite`` raises :class:`ServerUnreachableError` when nothing answers at the URL,
:class:`ServerDiedError` when the server dies mid-suite and :class:`ServerHungError` when it stops
answering or outlives the caller's deadline (both :class:`ServerLostError`, with ``.partial``, a
:class:`SuiteResult`), and :class:`ServerInfoError` when a simulator gives no usable time scale.
"""

from .client import BenchError, ServerUnreachableError
from .records import RequestRecord
from .result import (SCHEMA_VERSION, SingleRow, SuiteResult, SweepRow, first_internal_state,
                     resolved_spec_from_info)
from .runner import (ServerDiedError, ServerHungError, ServerInfoError, ServerLostError, run_suite,
                     says_simulator)
from .stats import Figure
from .watch import HangPolicy

__all__ = [
    "BenchError",
    "Figure",
    "HangPolicy",
    "RequestRecord",
    "SCHEMA_VERSION",
    "ServerDiedError",
    "ServerHungError",
    "ServerInfoError",
    "ServerLostError",
    "ServerUnreachableError",
    "SingleRow",
    "SuiteResult",
    "SweepRow",
    "first_internal_state",
    "resolved_spec_from_info",
    "run_suite",
    "says_simulator",
]
