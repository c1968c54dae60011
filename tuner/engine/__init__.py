"""The study engine: the ask / check / dedupe / measure / tell loop and its storage.

Owns the Optuna study and its companion baseline study (``study``, ``baseline``), one worker's run
(``runner``) and one trial's steps (``trial``, ``outcome``), recording a measurement exactly once
(``finish``, ``journal``; ``killpoints`` for the tests), several workers sharing a study
(``workers``: heartbeats and claims; ``requeue``), the samplers (``sampling``; the default,
``structured``, with its ``surrogate`` and ``lookahead``; the seed trials, ``seeds``), objectives,
the trial records every reader uses (``records``), the storage (``storage``, ``urls``, and
``patience``: riding out outages), artifacts, the model and GPU facts behind a study's attention
backend (``facts``), the preflight checks of ``tuner doctor`` (``doctor``), stopping a trial once its
result is decided (``pruning``), and the one seam to the world, ``Backend.measure`` (``backends``,
``measurement``; the model backend, ``model_backend``, and its request-by-request suite,
``model_suite``).

May import: :mod:`tuner.server` and :mod:`tuner.bench` (through the backends), :mod:`tuner.sim`
(its performance model, for the model backend; its profiles' facts; its argument handling, for
doctor), :mod:`tuner.config`, :mod:`tuner.sglang`.
Never :mod:`tuner.results` or :mod:`tuner.cli`.
"""
