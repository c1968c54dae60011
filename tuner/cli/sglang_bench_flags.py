"""SGLang's ``bench_serving`` dataset flags given to ``tuner bench``: refused with the suite that
measures the same file (one line, exit 2 through :class:`~tuner.config.yamlfile.ConfigError`).

A user coming from SGLang types ``--dataset-name custom --dataset-path data.jsonl``; click's own
"No such option" named no way to reach the data. ``tuner bench`` draws its requests from a suite,
whose ``dataset:`` reads SGLang's layouts (:mod:`tuner.config.dataset`)."""

from __future__ import annotations

from ..config.yamlfile import ConfigError

#: SGLang 0.5.23's ``bench_serving --dataset-name`` values whose files a suite's ``dataset:`` reads,
#: and the ``format`` that reads them (``benchmark/datasets/custom.py``, ``sharegpt.py``,
#: ``openai_dataset.py``: a ``messages`` object per line, the tuner's ``jsonl``).
_SGLANG_DATASETS = {"custom": "custom", "sharegpt": "sharegpt", "openai": "jsonl"}


def sglang_dataset_flag(ctx, param, value):
    """``--dataset-name`` and ``--dataset-path``, as SGLang's ``bench_serving`` takes them: refused
    with the suite that does the same (a user coming from SGLang types them; click's "No such option"
    named no way to reach the data). Hidden: not options of ``tuner bench``."""
    if value is None:
        return None
    name = value if param.name == "dataset_name" else "sharegpt"  # SGLang's default --dataset-name
    path = value if param.name == "dataset_path" else "DATA.jsonl"
    fmt = _SGLANG_DATASETS.get(name)
    if fmt is None:
        use = ("the tuner has no generated datasets: give the requests as a suite's prompts or a dataset "
               "file (--suite FILE.yaml)")
    else:
        use = (f"give --suite FILE.yaml with dataset: {{path: {path}, format: {fmt}}}"
               + (", SGLang's layout of that name" if fmt == name else " (a messages object per line)"))
    raise ConfigError(param.opts[0], "", f"tuner bench draws its requests from a suite, not SGLang's "
                                         f"bench_serving flags: {use} (README: Workloads from data)")
