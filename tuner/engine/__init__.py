"""The study engine: the ask / check / dedupe / measure / tell loop and its storage.

Owns the Optuna study and its companion baseline study (``study``, ``baseline``), one worker's run
(``runner``) and one trial's steps (``trial``, ``outcome``), several workers sharing a study
(``workers``: heartbeats and claims), the sampler (``sampling``), objectives, the trial records
every reader uses (``records``), storage URLs (``storage``), artifacts, stopping a trial once its
result is decided (``pruning``), and the one seam to the world, ``Backend.measure`` (``backends``;
the model backend's request-by-request suite in ``model_suite``).

May import: :mod:`tuner.server` and :mod:`tuner.bench` (through the backends), :mod:`tuner.sim`
(its performance model, for the model backend), :mod:`tuner.config`, :mod:`tuner.sglang`.
Never :mod:`tuner.results` or :mod:`tuner.cli`.
"""
