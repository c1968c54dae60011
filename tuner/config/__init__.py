"""The config layer: typed, validated objects for every file a user writes, and safe file writes.

Owns the study file (``study``), the search-space file and the space it describes (``space``), the
benchmark suite file and the shipped suites (``suite``), landscape tables of true figures for the
model backend (``landscape``), strict YAML loading whose errors name the
file and the key (``yamlfile``), and atomic writes (``files``). Validation happens here, once.

May import: :mod:`tuner.sglang` only (the space is filtered through SGLang's rules).
"""
