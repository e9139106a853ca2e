"""Compare what a candidate returned with what the reference code returned, with a clear message on failure.

This module is copied into a task's ``unit_test/`` folder and runs where lmrbench is not installed: it needs
the standard library and numpy only; torch tensors and pandas objects are compared when the values hold them.

Four checkers, each raising ``AssertionError`` naming the first place that differs (``result[1]['loss']``):

- ``assert_equal``: exact (same types, shapes, dtypes and values; NaN equals NaN);
- ``assert_close``: numbers, arrays and tensors within ``rtol``/``atol`` (shape and dtype checked first, NaN
  only matches NaN), through lists, tuples, dicts, sets and dataclasses; everything else exact;
- ``assert_unordered``: like ``assert_close`` but the items of the outer collection may come in any order;
- ``assert_similar_text``: strings whose similarity ratio (difflib) is at least ``threshold``, numbers close.
"""

from __future__ import annotations

import cmath
import dataclasses
import difflib
import sys
from typing import Any

try:
    import numpy as np
except ImportError:  # a task image without numpy: no array can occur, and numbers are compared in Python

    class np:  # type: ignore[no-redef]  # noqa: N801
        """Stand-ins that no value is an instance of."""

        class ndarray: ...

        class generic: ...

        class number: ...

        class bool_: ...

    _NUMPY = False
else:
    _NUMPY = True

__all__ = ["assert_close", "assert_equal", "assert_similar_text", "assert_unordered"]


class _Options:
    def __init__(
        self, exact: bool, rtol: float = 0.0, atol: float = 0.0, text_threshold: float | None = None
    ):
        self.exact = exact
        self.rtol = rtol
        self.atol = atol
        self.text_threshold = text_threshold

    def tolerance(self) -> str:
        return "exact" if self.exact else f"rtol={self.rtol:g}, atol={self.atol:g}"


def assert_equal(actual: Any, expected: Any, *, where: str = "result") -> None:
    """Fail unless ``actual`` is exactly ``expected``."""
    _compare(actual, expected, where, _Options(exact=True))


def assert_close(
    actual: Any, expected: Any, *, rtol: float = 1e-5, atol: float = 1e-8, where: str = "result"
) -> None:
    """Fail unless ``actual`` matches ``expected`` within the tolerances, through any nesting."""
    _compare(actual, expected, where, _Options(exact=False, rtol=rtol, atol=atol))


def assert_unordered(actual: Any, expected: Any, *, rtol: float = 1e-5, atol: float = 1e-8) -> None:
    """Fail unless the items of ``actual`` match those of ``expected`` in some order."""
    opts = _Options(exact=False, rtol=rtol, atol=atol)
    got, want = _items(actual, "result"), _items(expected, "expected value")
    if len(got) != len(want):
        raise AssertionError(f"result: {len(got)} items, expected {len(want)}")
    unused = list(range(len(got)))
    for i, item in enumerate(want):
        match = next((j for j in unused if _matches(got[j], item, opts)), None)
        if match is None:
            raise AssertionError(
                f"result: no item matches expected item {i} ({_show(item)}) ({opts.tolerance()})"
            )
        unused.remove(match)


def assert_similar_text(
    actual: Any, expected: Any, *, threshold: float = 0.9, rtol: float = 1e-5, atol: float = 1e-8
) -> None:
    """Fail unless every string is at least ``threshold`` similar to the expected one (numbers: close)."""
    _compare(
        actual, expected, "result", _Options(exact=False, rtol=rtol, atol=atol, text_threshold=threshold)
    )


def _items(value: Any, where: str) -> list[Any]:
    if isinstance(value, list | tuple | set | frozenset):
        return list(value)
    if isinstance(value, np.ndarray) and value.ndim >= 1:
        return list(value)
    if _is_tensor(value) and value.dim() >= 1:
        return list(value)
    raise AssertionError(f"{where}: expected a collection, got {_show(value)}")


def _matches(actual: Any, expected: Any, opts: _Options) -> bool:
    try:
        _compare(actual, expected, "item", opts)
    except AssertionError:
        return False
    return True


def _is_tensor(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _show(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array {value.dtype.name}{list(value.shape)}"
    if _is_tensor(value):
        return f"tensor {str(value.dtype).removeprefix('torch.')}{list(value.shape)}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | complex | np.number) and not isinstance(value, bool | np.bool_)


def _compare(actual: Any, expected: Any, where: str, opts: _Options) -> None:
    if _is_tensor(expected):
        _compare_tensor(actual, expected, where, opts)
    elif isinstance(expected, np.ndarray):
        if not isinstance(actual, np.ndarray):
            raise AssertionError(f"{where}: expected {_show(expected)}, got {_show(actual)}")
        _compare_arrays(actual, expected, where, opts)
    elif isinstance(expected, bool | np.bool_):
        if not isinstance(actual, bool | np.bool_) or bool(actual) != bool(expected):
            raise AssertionError(f"{where}: got {_show(actual)}, expected {expected!r}")
    elif _is_number(expected):
        _compare_numbers(actual, expected, where, opts)
    elif isinstance(expected, str):
        _compare_text(actual, expected, where, opts)
    elif expected is None or isinstance(expected, bytes):
        if actual != expected or type(actual) is not type(expected):
            raise AssertionError(f"{where}: got {_show(actual)}, expected {_show(expected)}")
    elif isinstance(expected, dict):
        _compare_dicts(actual, expected, where, opts)
    elif isinstance(expected, list | tuple):
        _compare_sequences(actual, expected, where, opts)
    elif isinstance(expected, set | frozenset):
        if opts.exact:
            if actual != expected:
                raise AssertionError(f"{where}: got {_show(actual)}, expected {_show(expected)}")
        else:
            _compare_sets(actual, expected, where, opts)
    elif dataclasses.is_dataclass(expected) and not isinstance(expected, type):
        if type(actual) is not type(expected):
            raise AssertionError(f"{where}: got {_show(actual)}, expected a {type(expected).__qualname__}")
        for f in dataclasses.fields(expected):
            _compare(getattr(actual, f.name), getattr(expected, f.name), f"{where}.{f.name}", opts)
    elif _is_pandas(expected):
        _compare_pandas(actual, expected, where, opts)
    elif actual != expected:
        raise AssertionError(f"{where}: got {_show(actual)}, expected {_show(expected)}")


def _compare_numbers(actual: Any, expected: Any, where: str, opts: _Options) -> None:
    if not _is_number(actual):
        raise AssertionError(f"{where}: got {_show(actual)}, expected the number {expected!r}")
    if opts.exact and isinstance(expected, np.generic) and getattr(actual, "dtype", None) != expected.dtype:
        raise AssertionError(f"{where}: got {_show(actual)}, expected {expected!r}")
    if not _NUMPY:
        if _python_same(actual, expected, opts):
            return
        raise AssertionError(f"{where}: got {actual!r}, expected {expected!r} ({opts.tolerance()})")
    a, e = np.asarray(actual), np.asarray(expected)
    if opts.exact:
        same = bool(a == e) or (e.dtype.kind in "fc" and bool(np.isnan(a)) and bool(np.isnan(e)))
    else:
        same = bool(np.isclose(a, e, rtol=opts.rtol, atol=opts.atol, equal_nan=True))
    if not same:
        raise AssertionError(f"{where}: got {actual!r}, expected {expected!r} ({opts.tolerance()})")


def _python_same(actual: Any, expected: Any, opts: _Options) -> bool:
    """numpy.isclose's rule (|a - e| <= atol + rtol * |e|, NaN equal to NaN) in plain Python."""
    nan_a = isinstance(actual, float | complex) and cmath.isnan(actual)
    nan_e = isinstance(expected, float | complex) and cmath.isnan(expected)
    if nan_a or nan_e:
        return nan_a and nan_e
    if opts.exact:
        return bool(actual == expected)
    if cmath.isinf(expected) or cmath.isinf(actual):
        return bool(actual == expected)
    return abs(actual - expected) <= opts.atol + opts.rtol * abs(expected)


def _compare_text(actual: Any, expected: str, where: str, opts: _Options) -> None:
    if not isinstance(actual, str):
        raise AssertionError(f"{where}: got {_show(actual)}, expected the string {_show(expected)}")
    if opts.text_threshold is None:
        if actual != expected:
            raise AssertionError(f"{where}: got {_show(actual)}, expected {_show(expected)}")
        return
    ratio = difflib.SequenceMatcher(None, actual, expected, autojunk=False).ratio()
    if ratio < opts.text_threshold:
        raise AssertionError(
            f"{where}: text similarity {ratio:.3f} is below {opts.text_threshold:g}: got {_show(actual)}, "
            f"expected {_show(expected)}"
        )


def _compare_dicts(actual: Any, expected: dict[Any, Any], where: str, opts: _Options) -> None:
    if not isinstance(actual, dict):
        raise AssertionError(f"{where}: got {_show(actual)}, expected a dict")
    missing = [k for k in expected if k not in actual]
    extra = [k for k in actual if k not in expected]
    if missing or extra:
        raise AssertionError(f"{where}: keys differ (missing {missing!r}, unexpected {extra!r})")
    for key, value in expected.items():
        _compare(actual[key], value, f"{where}[{key!r}]", opts)


def _compare_sequences(actual: Any, expected: Any, where: str, opts: _Options) -> None:
    if not isinstance(actual, list | tuple):
        raise AssertionError(f"{where}: got {_show(actual)}, expected a {type(expected).__name__}")
    if opts.exact and type(actual) is not type(expected):
        raise AssertionError(f"{where}: got a {type(actual).__name__}, expected a {type(expected).__name__}")
    if len(actual) != len(expected):
        raise AssertionError(f"{where}: {len(actual)} items, expected {len(expected)}")
    for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
        _compare(a, e, f"{where}[{i}]", opts)


def _compare_sets(actual: Any, expected: Any, where: str, opts: _Options) -> None:
    if not isinstance(actual, set | frozenset) or len(actual) != len(expected):
        raise AssertionError(f"{where}: got {_show(actual)}, expected {_show(expected)}")
    unused = list(actual)
    for item in expected:
        match = next((i for i, a in enumerate(unused) if _matches(a, item, opts)), None)
        if match is None:
            raise AssertionError(f"{where}: no item matches {_show(item)} ({opts.tolerance()})")
        unused.pop(match)


def _compare_arrays(actual: np.ndarray, expected: np.ndarray, where: str, opts: _Options) -> None:
    if actual.shape != expected.shape:
        raise AssertionError(f"{where}: shape {list(actual.shape)}, expected {list(expected.shape)}")
    if actual.dtype != expected.dtype:
        raise AssertionError(f"{where}: dtype {actual.dtype.name}, expected {expected.dtype.name}")
    if expected.dtype.kind in "fc":
        nan_a, nan_e = np.isnan(actual), np.isnan(expected)
        if opts.exact:
            ok = (actual == expected) | (nan_a & nan_e)
        else:
            ok = np.isclose(actual, expected, rtol=opts.rtol, atol=opts.atol, equal_nan=True)
    elif expected.dtype.kind in "iub" or expected.dtype.names is None:
        ok = np.asarray(actual == expected)
    else:
        ok = np.asarray([a == e for a, e in zip(actual.ravel(), expected.ravel(), strict=True)]).reshape(
            actual.shape
        )
    if ok.all():
        return
    bad = int(ok.size - np.count_nonzero(ok))
    if expected.dtype.kind in "fciu" and expected.dtype.kind != "b":
        diff = np.abs(actual.astype(np.complex128 if expected.dtype.kind == "c" else np.float64) - expected)
        diff = np.where(ok, 0, np.nan_to_num(diff, nan=np.inf))
        at = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim else ()
    else:
        at = np.unravel_index(int(np.argmin(ok)), ok.shape) if ok.ndim else ()
    got, want = actual[at], expected[at]
    index = tuple(int(i) for i in at)
    raise AssertionError(
        f"{where}: {bad} of {ok.size} values differ; at index {index} got {got!r}, expected {want!r} "
        f"({opts.tolerance()})"
    )


def _compare_tensor(actual: Any, expected: Any, where: str, opts: _Options) -> None:
    if not _is_tensor(actual):
        raise AssertionError(f"{where}: expected {_show(expected)}, got {_show(actual)}")
    if tuple(actual.shape) != tuple(expected.shape):
        raise AssertionError(f"{where}: shape {list(actual.shape)}, expected {list(expected.shape)}")
    if actual.dtype != expected.dtype:
        raise AssertionError(f"{where}: dtype {actual.dtype}, expected {expected.dtype}")
    _compare_arrays(_tensor_array(actual), _tensor_array(expected), where, opts)


def _tensor_array(tensor: Any) -> np.ndarray:
    import torch

    data = tensor.detach().cpu()
    if data.dtype == torch.bfloat16:
        data = data.float()
    return data.numpy()


def _is_pandas(value: Any) -> bool:
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(value, pd.DataFrame | pd.Series)


def _compare_pandas(actual: Any, expected: Any, where: str, opts: _Options) -> None:
    import pandas as pd

    if type(actual) is not type(expected):
        raise AssertionError(f"{where}: got {_show(actual)}, expected a {type(expected).__name__}")
    check = (
        pd.testing.assert_frame_equal
        if isinstance(expected, pd.DataFrame)
        else pd.testing.assert_series_equal
    )
    try:
        if opts.exact:
            check(actual, expected, check_exact=True)
        else:
            check(actual, expected, check_exact=False, rtol=opts.rtol, atol=opts.atol)
    except AssertionError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "values differ"
        raise AssertionError(f"{where}: {first}") from None
