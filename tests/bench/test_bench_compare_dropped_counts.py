"""``tuner bench --compare``: a baseline saved before a dataset's dropped rows were counted (its
suite without ``dataset.dropped_short``) measured the same workload as the suite loaded now (the
shipped sharegpt-mini drops one entry, so a result of it read as "another suite")."""

from pathlib import Path

import pytest

from tuner.bench import SuiteResult
from tuner.cli.bench import _refuse_other_workload
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError


def test_a_baseline_saved_before_the_counts_compares_with_the_same_dataset():
    suite = load_suite("sharegpt-mini")
    old = suite.to_dict()
    assert old["dataset"].pop("dropped_short") == 1  # as a result saved before the counts has it
    base = SuiteResult(suite=old, complete=True, api="generate")
    _refuse_other_workload(base, suite, "generate", Path("base.json"))  # before: "dataset differ"
    old["dataset"]["sha256"] = "0" * 64  # another file is still another suite
    with pytest.raises(ConfigError, match="dataset differ"):
        _refuse_other_workload(SuiteResult(suite=old, complete=True, api="generate"), suite, "generate",
                               Path("base.json"))
