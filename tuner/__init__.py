"""tuner: unattended tuning of SGLang's EAGLE-3 speculative decoding flags with Optuna.

Public API: :class:`tuner.rules.SpecConfig`, :func:`tuner.rules.resolve`,
:class:`tuner.space.SearchSpace`, :func:`tuner.config.load_study`. Everything else is internal.
"""

__version__ = "0.1.0"
