"""tuner: unattended tuning of SGLang's EAGLE-3 speculative decoding flags with Optuna.

Public API: :class:`tuner.sglang.rules.SpecConfig`, :func:`tuner.sglang.rules.resolve`,
:class:`tuner.config.space.SearchSpace`, :func:`tuner.config.study.load_study`. Everything else is internal.
"""

__version__ = "0.1.0"
