"""Compare what a candidate returned with what the reference code returned, with a clear message on failure.

This module is copied into a task's ``unit_test/`` folder (with ``lmrbench_reply``, whose records it compares)
and runs where lmrbench is not installed: it needs the standard library and numpy only; torch tensors, modules
and pandas objects are compared when the values hold them.

Four checkers, each raising ``AssertionError`` naming the first place that differs (``result[1]['loss']``):

- ``assert_equal``: exact (same types, shapes, dtypes and values; NaN equals NaN);
- ``assert_close``: numbers, arrays and tensors within ``rtol``/``atol`` (shape, dtype and a recorded
  ``requires_grad`` checked first, NaN only matches NaN), through lists, tuples, dicts, sets, namedtuples and
  dataclasses (by field names and values), modules (by state_dict); everything else exact. Without ``rtol`` and
  ``atol`` the tolerance follows each value's dtype and magnitude and the inputs' (``tolerance_for``);
- ``assert_unordered``: like ``assert_close`` but the items of the outer collection may come in any order;
- ``assert_similar_text``: strings whose similarity ratio (difflib) is at least ``threshold``, numbers close.
"""

from __future__ import annotations

import cmath
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

try:  # inside lmrbench
    from . import lmrbench_precision as _precision
    from . import lmrbench_reply as _reply
except ImportError:  # shipped beside this file
    import lmrbench_precision as _precision  # type: ignore[no-redef]
    import lmrbench_reply as _reply  # type: ignore[no-redef]

__tracebackhide__ = True  # pytest leaves this module's frames out of a failing test's traceback: the reader sees
# the test's line and the message, and pytest parses no source of this file per failure

tolerance_for = _precision.tolerance_for

__all__ = ["assert_close", "assert_equal", "assert_raises", "assert_similar_text", "assert_unordered", "tolerance_for"]


class _Options:
    def __init__(
        self, exact: bool, rtol: float | None = None, atol: float | None = None,
        text_threshold: float | None = None, scale: float = 0.0,
    ):
        self.exact = exact
        self.rtol = rtol
        self.atol = atol
        self.text_threshold = text_threshold
        self.scale = scale
        self.probe = _precision.probing() and not exact
        self.margin = 0.0
        self.margin_at = ""
        self.actual_value: Any = None
        """The tensor being compared (its device tells where the graded run computed)."""

    def tol(self, dtype: str, magnitude: float = 0.0) -> tuple[float, float]:
        """(rtol, atol) for a value of ``dtype`` whose largest magnitude is ``magnitude``: as the test named
        them, else by dtype (``lmrbench_precision.tolerance_for``)."""
        if self.rtol is not None and self.atol is not None:
            return self.rtol, self.atol
        rtol, atol = tolerance_for(dtype, self.scale, magnitude)
        return (rtol if self.rtol is None else self.rtol), (atol if self.atol is None else self.atol)

    def tolerance(self, dtype: str = "float64", magnitude: float = 0.0) -> str:
        if self.exact:
            return "exact"
        rtol, atol = self.tol(dtype, magnitude)
        named = self.rtol is not None and self.atol is not None
        return f"rtol={rtol:g}, atol={atol:g}" + ("" if named else f" for {dtype}")

    def measured(self, margin: float, where: str) -> None:
        """A probing run: remember the largest share of the tolerance a difference used."""
        if margin > self.margin or not self.margin_at:
            self.margin, self.margin_at = max(margin, self.margin), where

    def report(self) -> None:
        """A probing run ends every comparison with the margin it measured (the test fails by design)."""
        if self.probe:
            raise AssertionError(f"{_precision.PROBE_MARK} {self.margin:.6g} at {self.margin_at or 'result'}")


def assert_equal(actual: Any, expected: Any, *, where: str = "result") -> None:
    """Fail unless ``actual`` is exactly ``expected``."""
    _compare(actual, expected, where, _Options(exact=True))


def assert_close(
    actual: Any, expected: Any, *, rtol: float | None = None, atol: float | None = None, where: str = "result",
    scale: float = 0.0,
) -> None:
    """Fail unless ``actual`` matches ``expected`` within the tolerances, through any nesting. Without
    ``rtol``/``atol``, each value's tolerance follows its dtype and ``scale`` (``tolerance_for``)."""
    opts = _Options(exact=False, rtol=rtol, atol=atol, scale=scale)
    _compare(actual, expected, where, opts)
    opts.report()


def assert_unordered(
    actual: Any, expected: Any, *, rtol: float | None = None, atol: float | None = None, scale: float = 0.0
) -> None:
    """Fail unless the items of ``actual`` match those of ``expected`` in some order."""
    opts = _Options(exact=False, rtol=rtol, atol=atol, scale=scale)
    opts.probe = False  # an unordered match cannot say which item a margin belongs to
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
    actual: Any, expected: Any, *, threshold: float = 0.9, rtol: float | None = None, atol: float | None = None,
    scale: float = 0.0,
) -> None:
    """Fail unless every string is at least ``threshold`` similar to the expected one (numbers: close)."""
    opts = _Options(exact=False, rtol=rtol, atol=atol, text_threshold=threshold, scale=scale)
    _compare(actual, expected, "result", opts)
    opts.report()


class assert_raises:  # noqa: N801 - used as ``with assert_raises(case.raises):``, like pytest.raises
    """Passes when the block raises the builtin exception named ``name`` (or one derived from it), as the
    reference code did on this call; fails when it returns or raises another."""

    def __init__(self, name: str) -> None:
        import builtins

        self.name = name
        cls = getattr(builtins, name, None)
        if not (isinstance(cls, type) and issubclass(cls, Exception)):
            raise ValueError(f"{name!r} is not a builtin exception")
        self.cls: type[Exception] = cls

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        if kind is None:
            raise AssertionError(f"the reference code raised {self.name} on this call; this one returned")
        if issubclass(kind, self.cls):
            return True
        raise AssertionError(f"the reference code raised {self.name} on this call; this one raised "
                             f"{kind.__name__}: {exc}") from exc


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
        _compare_arrays(actual, expected, where, opts, expected.dtype.name)
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
    elif _is_module(expected):
        _compare_modules(actual, expected, where, opts)
    elif _reply.fields_of(expected) is not None:
        _compare_records(actual, expected, where, opts)
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
    elif _is_pandas(expected):
        _compare_pandas(actual, expected, where, opts)
    elif actual != expected:
        raise AssertionError(f"{where}: got {_show(actual)}, expected {_show(expected)}")


def _compare_records(actual: Any, expected: Any, where: str, opts: _Options) -> None:
    """A namedtuple or a dataclass (or a record of one from the candidate's process) matches one of the same
    kind with the same field names, in order, whose values match; the class itself is not compared (a split
    run's trusted side may not have it, and two correct programs may define it apart)."""
    kind, names = _reply.fields_of(expected)  # type: ignore[misc]
    got = _reply.fields_of(actual)
    if got is None or got[0] != kind:
        raise AssertionError(f"{where}: got {_show(actual)}, expected a {kind} {_show(expected)}")
    if got[1] != names:
        raise AssertionError(f"{where}: fields {list(got[1])}, expected {list(names)}")
    for name in names:
        _compare(getattr(actual, name), getattr(expected, name), f"{where}.{name}", opts)


def _is_module(value: Any) -> bool:
    torch = sys.modules.get("torch")
    if isinstance(value, _reply.ModuleRecord):
        return True
    return torch is not None and isinstance(value, torch.nn.Module)


def _compare_modules(actual: Any, expected: Any, where: str, opts: _Options) -> None:
    """Modules match by their state_dict (parameter and buffer names, then each tensor) and training flag. The
    names' order is not compared: a module that went through a recording's JSON (written with sorted keys)
    comes back with its parameters in name order (``bias`` before ``weight``)."""
    if not _is_module(actual):
        raise AssertionError(f"{where}: got {_show(actual)}, expected a module")
    got, want = actual.state_dict(), expected.state_dict()
    if sorted(got) != sorted(want):
        raise AssertionError(f"{where}: state_dict keys {sorted(got)}, expected {sorted(want)}")
    for name in want:
        _compare(got[name], want[name], f"{where}.{name}", opts)
    if bool(actual.training) != bool(expected.training):
        raise AssertionError(f"{where}: training={actual.training}, expected {expected.training}")


def _compare_numbers(actual: Any, expected: Any, where: str, opts: _Options) -> None:
    if not _is_number(actual):
        raise AssertionError(f"{where}: got {_show(actual)}, expected the number {expected!r}")
    if opts.exact and isinstance(expected, np.generic) and getattr(actual, "dtype", None) != expected.dtype:
        raise AssertionError(f"{where}: got {_show(actual)}, expected {expected!r}")
    dtype, size = _number_dtype(expected), _size(expected)
    if isinstance(actual, np.generic) and isinstance(expected, np.generic) and _scalar_promoted(actual, expected, opts):
        dtype = actual.dtype.name
    if not _NUMPY:
        if _python_same(actual, expected, opts, dtype):
            return
        raise AssertionError(f"{where}: got {actual!r}, expected {expected!r} ({opts.tolerance(dtype, size)})")
    a, e = np.asarray(actual), np.asarray(expected)
    if opts.exact:
        same = bool(a == e) or (e.dtype.kind in "fc" and bool(np.isnan(a)) and bool(np.isnan(e)))
    elif opts.probe and e.dtype.kind in "fc":
        _probe(a, e, where, opts, dtype)
        return
    else:
        rtol, atol = opts.tol(dtype, size)
        atol = _widened(atol, opts, where, actual, e.shape)
        same = bool(np.all(np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)))
    if not same:
        raise AssertionError(f"{where}: got {actual!r}, expected {expected!r} ({opts.tolerance(dtype, size)})")


def _size(value: Any) -> float:
    """The largest finite magnitude in a number or array (0 when none is finite)."""
    if isinstance(value, np.ndarray | np.generic):
        a = np.abs(np.asarray(value))
        finite = a[np.isfinite(a)] if a.dtype.kind in "fc" else a
        return float(finite.max()) if finite.size and finite.dtype.kind in "fciu" else 0.0
    try:
        size = abs(value)
        return float(size) if cmath.isfinite(size) else 0.0
    except TypeError:
        return 0.0


def _number_dtype(value: Any) -> str:
    if isinstance(value, np.generic):
        return str(value.dtype.name)
    return "complex128" if isinstance(value, complex) else "float64"


def _probe(actual: Any, expected: Any, where: str, opts: _Options, dtype: str) -> None:
    """Measure (not judge) how much of the tolerance a re-run in float64 used: max |a - e| / (atol + rtol|e|)."""
    rtol, atol = opts.tol(dtype, _size(expected))
    a = np.asarray(actual).astype(np.complex128 if np.iscomplexobj(actual) else np.float64)
    e = np.asarray(expected).astype(a.dtype if np.iscomplexobj(expected) else np.float64)
    if a.shape != e.shape:
        raise AssertionError(f"{where}: shape {list(a.shape)}, expected {list(e.shape)}")
    atol = _widened(atol, opts, where, actual, e.shape)
    both_nan = np.isnan(a) & np.isnan(e)
    with np.errstate(invalid="ignore", over="ignore"):
        ratio = np.abs(a - e) / (atol + rtol * np.abs(e))
    ratio = np.where(both_nan | (a == e), 0.0, np.nan_to_num(ratio, nan=np.inf))
    if (ratio > 1).any() and np.isrealobj(a) and _ties_explain(a, e, opts, rtol, atol):
        ratio = np.where(ratio > 1, 0.0, ratio)  # a tie broken the other way is no rounding: it uses no tolerance
    if ratio.size:
        opts.measured(float(ratio.max()), where)


def _python_same(actual: Any, expected: Any, opts: _Options, dtype: str) -> bool:
    """numpy.isclose's rule (|a - e| <= atol + rtol * |e|, NaN equal to NaN) in plain Python."""
    nan_a = isinstance(actual, float | complex) and cmath.isnan(actual)
    nan_e = isinstance(expected, float | complex) and cmath.isnan(expected)
    if nan_a or nan_e:
        return nan_a and nan_e
    if opts.exact:
        return bool(actual == expected)
    if cmath.isinf(expected) or cmath.isinf(actual):
        return bool(actual == expected)
    rtol, atol = opts.tol(dtype, abs(expected))
    return abs(actual - expected) <= atol + rtol * abs(expected)


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
    if any(_by_identity(k) for k in expected):  # an optimiser's state, keyed by its parameters: in their order
        if len(actual) != len(expected):
            raise AssertionError(f"{where}: {len(actual)} entries, expected {len(expected)}")
        for i, ((ka, va), (ke, ve)) in enumerate(zip(actual.items(), expected.items(), strict=True)):
            _compare(ka, ke, f"{where} key {i}", opts)
            _compare(va, ve, f"{where}[key {i}]", opts)
        return
    missing = [k for k in expected if k not in actual]
    extra = [k for k in actual if k not in expected]
    if missing or extra:
        raise AssertionError(f"{where}: keys differ (missing {missing!r}, unexpected {extra!r})")
    for key, value in expected.items():
        _compare(actual[key], value, f"{where}[{key!r}]", opts)


def _by_identity(key: Any) -> bool:
    """A dict key that hashes by identity, not value (a torch tensor): two runs' keys are never equal."""
    return type(key).__module__.partition(".")[0] == "torch"


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


def _compare_arrays(actual: np.ndarray, expected: np.ndarray, where: str, opts: _Options, dtype: str) -> None:
    if actual.shape != expected.shape:
        raise AssertionError(f"{where}: shape {list(actual.shape)}, expected {list(expected.shape)}")
    if opts.probe and expected.dtype.kind in "fc" and actual.dtype.kind in "fc":
        _probe(actual, expected, where, opts, dtype)  # a float64 re-run against a float32 recording
        return
    if actual.dtype != expected.dtype:
        if not _scalar_promoted(actual, expected, opts):
            raise AssertionError(f"{where}: dtype {actual.dtype.name}, expected {expected.dtype.name}")
        dtype = actual.dtype.name
    size = _size(expected) if expected.dtype.kind in "fc" else 0.0
    rtol, atol = opts.tol(dtype, size)
    if expected.dtype.kind in "fc":
        nan_a, nan_e = np.isnan(actual), np.isnan(expected)
        if opts.exact:
            ok = (actual == expected) | (nan_a & nan_e)
        else:
            atol = _widened(atol, opts, where, opts.actual_value, expected.shape)
            ok = np.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    elif expected.dtype.kind in "iub" or expected.dtype.names is None:
        ok = np.asarray(actual == expected)
    else:
        ok = np.asarray([a == e for a, e in zip(actual.ravel(), expected.ravel(), strict=True)]).reshape(
            actual.shape
        )
    if ok.all() or (not opts.exact and _ties_explain(actual, expected, opts, rtol, atol)):
        return
    bad = int(ok.size - np.count_nonzero(ok))
    if expected.dtype.kind in "fciu" and expected.dtype.kind != "b":
        with np.errstate(invalid="ignore", over="ignore"):  # inf - inf where one side filtered a value out
            diff = np.abs(actual.astype(np.complex128 if expected.dtype.kind == "c" else np.float64) - expected)
        diff = np.where(ok, 0, np.nan_to_num(diff, nan=np.inf))
        at = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim else ()
    else:
        at = np.unravel_index(int(np.argmin(ok)), ok.shape) if ok.ndim else ()
    got, want = actual[at], expected[at]
    index = tuple(int(i) for i in at)
    raise AssertionError(
        f"{where}: {bad} of {ok.size} values differ; at index {index} got {got!r}, expected {want!r} "
        f"({opts.tolerance(dtype, size)}){_precision_note(actual, expected, opts, rtol, atol)}"
    )


def _compare_tensor(actual: Any, expected: Any, where: str, opts: _Options) -> None:
    if not _is_tensor(actual):
        raise AssertionError(f"{where}: expected {_show(expected)}, got {_show(actual)}")
    if tuple(actual.shape) != tuple(expected.shape):
        raise AssertionError(f"{where}: shape {list(actual.shape)}, expected {list(expected.shape)}")
    dtype = str(expected.dtype).removeprefix("torch.")
    autocast = False
    if actual.dtype != expected.dtype and not (opts.probe and expected.is_floating_point()):
        autocast = _under_autocast(actual, expected, opts)
        if not autocast:
            raise AssertionError(f"{where}: dtype {actual.dtype}, expected {expected.dtype}")
        dtype = max((dtype, str(actual.dtype).removeprefix("torch.")), key=lambda d: _precision.EPS.get(d, 0.0))
    if expected.requires_grad and not actual.requires_grad:
        raise AssertionError(
            f"{where}: requires_grad=False, expected True (the result is cut off from the autograd graph, "
            "e.g. by .detach() or torch.no_grad())"
        )
    opts.actual_value = actual
    want = _tensor_array(expected)
    got = _tensor_array(actual).astype(want.dtype) if autocast else _tensor_array(actual)
    try:
        _compare_arrays(got, want, where, opts, dtype)
    finally:
        opts.actual_value = None


def _scalar_promoted(actual: Any, expected: Any, opts: _Options) -> bool:
    """True when ``expected`` (numpy) is a wider float than ``actual`` only because a numpy scalar among the case's
    inputs promoted the golden result (``lmrbench_precision.scalar_promotion``) and ``actual`` has the inputs'
    array dtype: they compare at that coarser dtype."""
    base = getattr(opts.scale, "promoted", None)
    return (not opts.exact and base is not None and actual.dtype.kind == "f" and expected.dtype.kind == "f"
            and actual.dtype.name == base and expected.dtype.itemsize > actual.dtype.itemsize)


def _under_autocast(actual: Any, expected: Any, opts: _Options) -> bool:
    """True when two floating tensors' dtypes differ because autocast was on where one of them was made: a GPU's
    autocast runs LayerNorm in float32 where a CPU's keeps bfloat16. They compare at the coarser dtype."""
    if not (actual.is_floating_point() and expected.is_floating_point()) or not hasattr(opts.scale, "tied"):
        return False
    recorded = getattr(opts.scale, "context", None) or {}
    graded = _precision.grading_context(actual) or {}
    return bool(recorded.get("autocast") or graded.get("autocast"))


def _widened(atol: Any, opts: _Options, where: str, actual: Any, shape: tuple[int, ...]) -> Any:
    """``atol`` grown by what the case's probes measured at ``where`` and the coarser of the recorded and the
    grading precision (``lmrbench_precision.widening``); as it was for a case that notes neither."""
    if opts.exact or not hasattr(opts.scale, "tied"):  # a plain float: a case from before
        return atol
    extra = _precision.widening(opts.scale, where, actual)
    if np.shape(extra) not in ((), tuple(shape), (*shape[:-1], 1)):
        return atol
    return np.maximum(atol, np.broadcast_to(extra, shape))


def _ties_explain(actual: np.ndarray, expected: np.ndarray, opts: _Options, rtol: float, atol: Any) -> bool:
    """True when the differences are only ties of the case's inputs broken the other way (``ties_explain``)."""
    for tied in getattr(opts.scale, "tied", None) or []:
        try:
            if _precision.ties_explain(actual, expected, tied, rtol, atol):
                return True
        except (ValueError, TypeError, IndexError):
            continue
    return False


def _precision_note(actual: np.ndarray, expected: np.ndarray, opts: _Options, rtol: float, atol: Any) -> str:
    """For a case that knows the precision it was recorded in: where it was recorded and graded, and how many
    times its tolerance the largest difference is (validate names a golden run failing so precision-sensitive)."""
    recorded = getattr(opts.scale, "context", None)
    if recorded is None or expected.dtype.kind not in "fc":
        return ""
    graded = _precision.grading_context(opts.actual_value)
    with np.errstate(invalid="ignore", over="ignore"):
        ratio = np.abs(actual.astype(np.float64) - expected) / (atol + rtol * np.abs(expected))
    ratio = np.where(np.isnan(actual) & np.isnan(expected), 0.0, np.nan_to_num(ratio, nan=np.inf))
    margin = float(ratio.max()) if ratio.size else 0.0
    widest = float(np.max(atol)) if np.size(atol) else 0.0
    return (f"; precision: recorded on {_precision.describe_context(recorded)}, graded on "
            f"{_precision.describe_context(graded)}; atol up to {widest:.3g} by the case's probes; the largest "
            f"difference is {margin:.3g} times its tolerance")


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
            rtol, atol = opts.tol("float64")
            check(actual, expected, check_exact=False, rtol=rtol, atol=atol)
    except AssertionError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "values differ"
        raise AssertionError(f"{where}: {first}") from None
