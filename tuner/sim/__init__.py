"""The simulated SGLang server: SGLang's launch flags, HTTP API and failure modes, timed by a
performance model calibrated to the article.

The tuner talks to it only over HTTP and its command line (``python -m tuner.sim``), exactly as to
SGLang; the engine's model backend also reads its performance model directly (``model``,
``landscape``), with no process.

May import: :mod:`tuner.config`, :mod:`tuner.sglang`. Never its peers :mod:`tuner.server` and
:mod:`tuner.bench`, nor anything above.
"""
