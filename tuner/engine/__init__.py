"""The study engine: the ask / check / dedupe / measure / tell loop and its storage.

Owns the Optuna study and its companion baseline study (``study``, ``baseline``), one worker's run
(``runner``) and one trial's steps (``trial``, ``outcome``), recording a measurement exactly once
(``finish``, ``journal``; ``killpoints`` for the tests), several workers sharing a study
(``workers``: heartbeats and claims; ``requeue``), the sampler (``sampling``), objectives, the trial
records every reader uses (``records``), the storage (``storage``, ``urls``, and ``patience``: riding
out outages), artifacts, and the one seam to the world, ``Backend.measure`` (``backends``).

May import: :mod:`tuner.server` and :mod:`tuner.bench` (through the backends), :mod:`tuner.sim`
(its performance model, for the model backend), :mod:`tuner.config`, :mod:`tuner.sglang`.
Never :mod:`tuner.results` or :mod:`tuner.cli`.
"""
