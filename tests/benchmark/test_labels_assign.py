"""Assignment with overlap: deterministic for a seed, balanced, shared items spread over the pairs; the store."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from helpers.labels_run import write_review_run
from lmrbench.benchmark.labels.assign import assign, write_assignment
from lmrbench.benchmark.labels.store import LabelStore, check_annotator
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.errors import LmrError


@pytest.fixture
def runs(tmp_path):
    return [write_review_run(tmp_path / f"r{k}")[1] for k in range(4)]  # 12 items


def who_has(result) -> dict[tuple[str, str, int], set[str]]:
    out: dict[tuple[str, str, int], set[str]] = {}
    for path, per_run in result.queues.items():
        for name, queue in per_run.items():
            for item in queue.items:
                out.setdefault((str(path), item.task, item.impl), set()).add(name)
    return out


def test_overlap_share_balance_and_pairs(runs) -> None:
    result = assign(runs, ["a", "b", "c"], overlap=0.5, seed=3)
    owners = who_has(result)
    assert len(owners) == 12 and result.shared == 6
    assert Counter(len(v) for v in owners.values()) == {2: 6, 1: 6}
    load = result.load()
    assert sum(load.values()) == 18 and max(load.values()) - min(load.values()) <= 1
    pairs = Counter(tuple(sorted(v)) for v in owners.values() if len(v) == 2)
    assert set(pairs) == set(combinations("abc", 2))  # every pair shares items: each pairwise kappa exists
    for path, per_run in result.queues.items():
        for queue in per_run.values():
            assert queue.seed == 3 and queue.annotators == ["a", "b", "c"]
            for item in queue.items:  # the shared flag says whether someone else labels the item too
                assert item.shared == (len(owners[(str(path), item.task, item.impl)]) == 2)


def test_same_seed_same_queues_other_seed_other_queues(runs) -> None:
    one, two = (assign(runs, ["a", "b"], overlap=0.25, seed=1) for _ in range(2))
    assert who_has(one) == who_has(two)
    assert any(who_has(assign(runs, ["a", "b"], overlap=0.25, seed=s)) != who_has(one) for s in range(2, 6))


def test_written_queues_are_read_back(runs) -> None:
    result = assign(runs[:1], ["a", "b"], overlap=1.0, seed=0)
    write_assignment(result)
    for name in ("a", "b"):
        queue = RunDir(runs[0]).queue(name)
        assert queue is not None and len(queue.items) == 3 and all(i.shared for i in queue.items)


@pytest.mark.parametrize(
    ("names", "overlap", "message"),
    [(["a"], 0.2, "two annotators"), (["a", "a"], 0.0, "named twice"), (["a", "b"], 1.5, "between 0 and 1"),
     (["a b", "c"], 0.1, "not usable")],
)  # fmt: skip
def test_bad_assignments_are_refused(runs, names, overlap, message) -> None:
    with pytest.raises(LmrError, match=message):
        assign(runs, names, overlap=overlap)


def test_store_writes_one_file_per_label_in_the_annotators_folder(runs) -> None:
    run = RunDir(runs[0])
    store = LabelStore(run, "alice")
    store.save("1-Toy", 1, 2, note="close")
    store.save("1-Toy", 1, 3)  # relabel keeps the comment
    assert store.reload("1-Toy", 1).label.score == 3 and store.reload("1-Toy", 1).note == "close"
    assert [p.relative_to(run.path).as_posix() for p in (run.path / "labels").rglob("*.json")] == [
        "labels/alice/1-Toy/1.json"
    ]
    with pytest.raises(LmrError, match="1, 2 or 3"):
        store.save("1-Toy", 2, 0)
    with pytest.raises(LmrError, match="no label yet"):
        store.comment("1-Toy", 2, "x")
    with pytest.raises(LmrError, match="not usable"):
        check_annotator("../bob")
