"""The order the suite's tests run in on xdist workers (support/long_first.py): the long files at the
head of every worker's first share, balanced, nothing lost, every file's tests in their order."""
from support.long_first import shares, spread


def _items(files: dict[str, int]) -> list[str]:
    return [f"{f}::t{i}" for f, n in files.items() for i in range(n)]


def _file(item: str) -> str:
    return item.split("::")[0]


def test_shares_are_the_worksteal_scheduler_s():
    assert shares(10, 4) == [2, 2, 3, 3] and sum(shares(4713, 4)) == 4713 and shares(3, 4) == [0, 1, 1, 1]


def test_long_files_lead_the_shares_balanced_and_nothing_else_moves_within_a_file():
    files = {"a.py": 30, "long1.py": 3, "b.py": 40, "long2.py": 2, "c.py": 25, "long3.py": 4, "long4.py": 1}
    weights = {"long1.py": 100, "long2.py": 90, "long3.py": 50, "long4.py": 45}
    items = _items(files)
    out = spread(items, 2, _file, weights)
    assert sorted(out) == sorted(items)
    for f in files:  # each file's tests in their order; a long file's together (a short one may span
        # two shares, as in the collection's own order)
        at = [i for i, item in enumerate(out) if _file(item) == f]
        assert [out[i] for i in at] == [x for x in items if _file(x) == f]
        assert f not in weights or at == list(range(at[0], at[-1] + 1))
    first, second = out[:shares(len(out), 2)[0]], out[shares(len(out), 2)[0]:]
    # longest first to the lightest share: long1 (100) | long2 (90), then long3 (50) to the second
    # (90 < 100), long4 (45) to the first (100 < 140)
    assert [_file(x) for x in first[:4]] == ["long1.py"] * 3 + ["long4.py"]
    assert [_file(x) for x in second[:6]] == ["long2.py"] * 2 + ["long3.py"] * 4
    assert [x for x in out if _file(x) not in weights] == [x for x in items if _file(x) not in weights]


def test_one_worker_keeps_the_collection_order():
    items = _items({"a.py": 3, "long.py": 2})
    assert spread(items, 1, _file, {"long.py": 9}) == items and spread([], 4, _file) == []
