"""SGLang 0.5.23's refusal of the hierarchical KV cache without the radix cache.

``arg_groups/kv_cache_hook.py`` line 393 (``handle_cache_compatibility``) raises a ``ValueError``
while handling the arguments, at every launch, the baseline's too. The radix cache is off by
``disable_radix_cache``, except on a disaggregated decode node, where ``pd_disaggregation_hook.py``
(lines 115-126) decides it first: off unless ``disaggregation_decode_enable_radix_cache``. The
simulator raises it (:mod:`tuner.sim.args`); a study refuses it when its file loads
(:func:`tuner.config.server_arg_checks.radix_cache_refusal`).
"""

from __future__ import annotations

#: SGLang's message for it, as the simulator raises it.
HICACHE_WITHOUT_RADIX = ("The arguments enable-hierarchical-cache and disable-radix-cache are mutually exclusive "
                         "and cannot be used at the same time. Please use only one of them.")


def hicache_without_radix(args: dict) -> bool:
    """Whether the server arguments ``args`` (SGLang's underscore names) ask for the hierarchical cache
    with the radix cache off, which SGLang refuses (module docstring)."""
    if args.get("enable_hierarchical_cache") is not True:
        return False
    if args.get("disaggregation_mode") == "decode":
        return not args.get("disaggregation_decode_enable_radix_cache")
    return args.get("disable_radix_cache") is True
