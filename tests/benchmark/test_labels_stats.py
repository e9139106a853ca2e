"""Agreement statistics on small cases computed by hand, and the consensus rule."""

from __future__ import annotations

import pytest

from lmrbench.benchmark.labels.agreement import Item, alpha, compare, inter_annotator
from lmrbench.benchmark.labels.consensus import consensus


def test_compare_on_four_items() -> None:
    # Table rows (first rater) [1,0,0] [0,1,0] [0,1,1]; rows 1,1,2; columns 1,2,1; po = 3/4.
    # pe = (1*1 + 1*2 + 2*1)/16 = 5/16, kappa = (12/16 - 5/16)/(11/16) = 7/11.
    # Quadratic disagreement weights (i-j)^2/4: observed 0.25/4, expected 5/16, weighted kappa = 1 - 1/5 = 0.8.
    c = compare([(1, 1), (2, 2), (3, 3), (3, 2)])
    assert c.n == 4 and c.exact == 0.75 and c.binary == 0.75
    assert c.cohen_kappa == pytest.approx(7 / 11) and c.weighted_kappa == pytest.approx(0.8)
    assert c.confusion == [[1, 0, 0], [0, 1, 0], [0, 1, 1]]


def test_weighted_kappa_punishes_far_disagreements_more() -> None:
    near = compare([(1, 1), (2, 2), (3, 3), (3, 2)])
    far = compare([(1, 1), (2, 2), (3, 3), (3, 1)])
    assert far.weighted_kappa < near.weighted_kappa


def test_perfect_and_undefined_kappa() -> None:
    assert compare([(1, 1), (3, 3)]).cohen_kappa == pytest.approx(1.0)
    same = compare([(3, 3), (3, 3)])  # chance agreement is 1: kappa undefined, never a number
    assert same.exact == 1.0 and same.cohen_kappa is None
    empty = compare([])
    assert empty.n == 0 and empty.exact is None and empty.confusion == [[0, 0, 0]] * 3


def test_krippendorff_alpha_ordinal_by_hand() -> None:
    # Units {1,1} {2,3} {3,3}: counts n1=2, n2=1, n3=3 (n=6); ordinal delta^2: (2,3)=4, (1,2)=2.25, (1,3)=12.25.
    # Do = (1/6)(4+4) = 4/3; De = (2/30)(2*1*2.25 + 2*3*12.25 + 1*3*4) = 6; alpha = 1 - (4/3)/6 = 7/9.
    units = [{"a": 1, "b": 1}, {"a": 2, "b": 3}, {"a": 3, "b": 3}]
    assert alpha(units) == pytest.approx(7 / 9)
    assert alpha([{"a": 2}]) is None  # no item with two labels


@pytest.mark.parametrize(
    ("scores", "expected"),
    [([3], 3), ([1, 3, 3], 3), ([2, 3], 2), ([1, 3], 1), ([1, 2, 3], 2), ([1, 1, 3, 3], 1), ([], None)],
)
def test_consensus_is_majority_then_median(scores, expected) -> None:
    assert consensus(scores) == expected


def test_inter_annotator_pairs_only_count_shared_items() -> None:
    items = [
        Item("m", "1-A", 1, humans={"a": 3, "b": 3}),
        Item("m", "1-A", 2, humans={"a": 1, "b": 2}),
        Item("m", "2-B", 1, humans={"a": 2, "c": 2}),
        Item("m", "3-C", 1, humans={"c": 1}),
    ]
    ia = inter_annotator(items)
    assert ia.items == 3
    pairs = {(p.a, p.b): p for p in ia.pairs}
    assert set(pairs) == {("a", "b"), ("a", "c")}
    assert pairs[("a", "b")].n == 2 and pairs[("a", "b")].exact == 0.5
    assert pairs[("a", "c")].n == 1 and pairs[("a", "c")].exact == 1.0
