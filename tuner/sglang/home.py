"""This user's home folder, as the libraries under SGLang and the tuner find theirs: huggingface_hub
its model cache (``~/.cache/huggingface/hub``, :func:`tuner.sglang.model.hf_cache_dirs`), matplotlib
its config and cache folders (:func:`tuner.results.report_plots.matplotlib_config_dir`).

Here, in the bottom layer, so that every layer asks it the one way.
"""

from __future__ import annotations

from pathlib import Path


def home_folder() -> Path | None:
    """This user's home folder as :meth:`pathlib.Path.home` gives it (``$HOME``, else this user's passwd
    entry, as ``os.path.expanduser`` and so huggingface_hub and matplotlib read it), or None when there
    is none to be had: ``HOME`` unset and this user's id in no passwd entry (a container run as
    ``-u 1234``, a Kubernetes ``runAsUser``), where ``Path.home()`` raises (RuntimeError on Python
    3.11+; the passwd lookup's KeyError on 3.10).

    A ``HOME`` that does not exist, or cannot be written, is given as it is: what is looked for under it
    is then not found, and nothing is made here (the caller says what it needs of it)."""
    try:
        return Path.home()
    except (RuntimeError, KeyError):
        return None
