"""The checkers shipped with generated tests: they pass what matches and name the first place that differs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from lmrbench.runtime.lmrbench_checkers import (
    assert_close,
    assert_equal,
    assert_similar_text,
    assert_unordered,
)


@dataclasses.dataclass
class Out:
    loss: float
    logits: np.ndarray


def fails(check, actual, expected, message, **kw):
    with pytest.raises(AssertionError, match=message):
        check(actual, expected, **kw)


def test_close_accepts_values_within_tolerance_through_nesting():
    expected = {
        "loss": 1.0,
        "parts": (np.array([1.0, 2.0]), [3, np.float32(4.0)]),
        "out": Out(0.5, np.ones(2)),
    }
    actual = {
        "loss": 1.0 + 1e-7,
        "parts": (np.array([1.0, 2.0 + 1e-6]), [3, np.float32(4.0)]),
        "out": Out(0.5, np.ones(2)),
    }
    assert_close(actual, expected, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize(
    ("actual", "expected", "message"),
    [
        (np.ones(3), np.ones(4), r"result: shape \[3\], expected \[4\]"),
        (np.ones(3, dtype=np.float32), np.ones(3), "result: dtype float32, expected float64"),
        (
            np.array([1.0, 2.0, 3.5]),
            np.array([1.0, 2.0, 3.0]),
            r"result: 1 of 3 values differ; at index \(2,\) got np.float64\(3.5\), "
            r"expected np.float64\(3.0\)",
        ),
        (np.array([np.nan, 1.0]), np.array([0.0, 1.0]), r"1 of 2 values differ; at index \(0,\)"),
        ({"a": (1.0, np.zeros(2))}, {"a": (1.0, np.ones(2))}, r"result\['a'\]\[1\]: 2 of 2 values differ"),
        ({"a": 1}, {"b": 1}, r"result: keys differ \(missing \['b'\], unexpected \['a'\]\)"),
        ([1.0, 2.0], [1.0], "result: 2 items, expected 1"),
        (np.float64(1.1), 1.0, r"result: got np.float64\(1.1\), expected 1.0 \(rtol=1e-05, atol=1e-08 for float64\)"),
        (1.0, np.ones(1), r"result: expected array float64\[1\], got 1.0"),
        (True, 1, "result: got True, expected the number 1"),
        (None, 0.0, "result: got None, expected the number 0.0"),
        ("abc", "abd", "result: got 'abc', expected 'abd'"),
        (Out(0.5, np.zeros(2)), Out(0.5, np.ones(2)), r"result.logits: 2 of 2 values differ"),
    ],
    ids=lambda v: type(v).__name__,
)
def test_close_names_what_differs(actual, expected, message):
    fails(assert_close, actual, expected, message)


def test_nan_matches_only_nan():
    assert_close(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    assert_close(float("nan"), float("nan"))
    fails(assert_close, 1.0, float("nan"), "got 1.0, expected nan")
    assert_equal(np.array([np.nan]), np.array([np.nan]))


def test_tolerances_are_the_ones_given():
    assert_close(1.05, 1.0, rtol=0.1)
    fails(assert_close, 1.05, 1.0, "expected 1.0", rtol=0.01)
    assert_close(np.array([1e-9]), np.array([0.0]), atol=1e-8)
    fails(assert_close, np.array([1e-7]), np.array([0.0]), "1 of 1 values differ", atol=1e-8)


def test_equal_is_strict_about_types_and_values():
    assert_equal((1, [np.int32(2)], "x"), (1, [np.int32(2)], "x"))
    fails(assert_equal, [1, 2], (1, 2), "result: got a list, expected a tuple")
    fails(assert_equal, np.array([1.0 + 1e-12]), np.array([1.0]), "1 of 1 values differ")
    fails(assert_equal, np.int64(2), np.int32(2), r"got np.int64\(2\), expected np.int32\(2\)")


def test_unordered_matches_items_in_any_order():
    assert_unordered([(2, "b"), (1, "a")], [(1, "a"), (2, "b")])
    assert_unordered(np.array([[3.0, 4.0], [1.0, 2.0]]), np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert_close({1.0, 2.0}, {2.0, 1.0 + 1e-9})
    fails(
        assert_unordered,
        [(1, "a"), (1, "a")],
        [(1, "a"), (2, "b")],
        r"no item matches expected item 1 \(\(2, 'b'\)\)",
    )
    fails(assert_unordered, [1], [1, 2], "result: 1 items, expected 2")
    fails(assert_unordered, 3, [3], "result: expected a collection, got 3")


def test_text_similarity_has_a_threshold():
    assert_similar_text("The cat sat on the mat.", "The cat sat on a mat.", threshold=0.9)
    assert_similar_text({"summary": "A short text", "score": 0.5}, {"summary": "A short text!", "score": 0.5})
    fails(
        assert_similar_text,
        "completely different",
        "The cat sat on the mat.",
        r"result: text similarity 0\.\d+ is below 0\.9",
        threshold=0.9,
    )
    fails(assert_similar_text, ["ok", 1.5], ["ok", 1.0], r"result\[1\]: got 1.5, expected 1.0")


def test_pandas_objects_are_compared_with_tolerance():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1.0, 2.0]})
    assert_close(frame + 1e-9, frame)
    fails(assert_close, frame + 1.0, frame, "result: ")
