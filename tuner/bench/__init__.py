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
:class:`SuiteResult`), :class:`ServerInfoError` when a simulator gives no usable time scale,
:class:`SuiteOverContext`, before any request, when the suite asks a request more tokens than the
server's context length holds, and
:class:`TunerOutOfFiles` (with ``.partial``) when the tuner itself hits its open-file limit.
"""

import importlib

#: Where each public name lives. Imported on first use (PEP 562): the engine's modules that need only
#: the plan or the figures (a status, an export, a run on the performance model) do not import the
#: HTTP client and aiohttp, about 0.15 s of CPU per process.
_HOME = {
    "BenchError": "client", "ServerUnreachableError": "client",
    "RequestRecord": "records",
    "SCHEMA_VERSION": "result", "SingleRow": "result", "SuiteResult": "result", "SweepRow": "result",
    "first_internal_state": "result", "resolved_spec_from_info": "result",
    "ServerDiedError": "runner", "ServerHungError": "runner", "ServerInfoError": "runner",
    "ServerLostError": "runner", "run_suite": "runner", "says_simulator": "result",
    "Figure": "stats",
    "HangPolicy": "watch",
    "SuiteOverContext": "context",
    "TunerOutOfFiles": "open_files",
}


def __getattr__(name: str):
    if name in _HOME:
        return getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = sorted(_HOME)
