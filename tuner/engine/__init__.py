"""The study engine: the ask / check / dedupe / measure / tell loop and its storage.

Owns the Optuna study and its companion baseline study (``study``, ``baseline``), one worker's run
(``runner``) and one trial's steps (``trial``, ``outcome``), several workers sharing a study
(``workers``: heartbeats and claims), the samplers (``sampling``; the default, ``structured``, with
its ``surrogate`` and ``lookahead``; the seed trials, ``seeds``), objectives, the trial records
every reader uses (``records``), storage URLs (``storage``), artifacts, and the one seam to the
world, ``Backend.measure`` (``backends``).

May import: :mod:`tuner.server` and :mod:`tuner.bench` (through the backends), :mod:`tuner.sim`
(its performance model, for the model backend), :mod:`tuner.config`, :mod:`tuner.sglang`.
Never :mod:`tuner.results` or :mod:`tuner.cli`.
"""
