"""What SGLang does with flags: the one copy of that knowledge, by SGLang version.

Owns the speculative-decoding rules and rewrites (``rules``), which settings verify the same draft
tree (``trees``), the adaptive policy's flags and file format (``adaptive``), what SGLang reads from a
model's ``config.json`` (``model``: MLA or not), GPU generations (``hardware``), the attention
backend SGLang picks and which backends run draft trees (``attention``), SGLang's own argparse
types for its server arguments (``arg_types``: ``human_readable_int``, 128k), this user's home folder as
huggingface_hub finds its cache there (``home``), and ``probe.py``, a
standalone script the server's interpreter runs to ask SGLang's own parser and resolver (it imports
nothing of the tuner). Every rule names the SGLang 0.5.23 source it mirrors, so a new SGLang
release is an edit here. The tuner uses these modules to propose only what SGLang runs; the
simulator uses the very same functions to fail and rewrite as SGLang does.

May import: nothing of the tuner (the bottom layer).
"""
