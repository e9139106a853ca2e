"""How far a correct re-implementation may differ from the recorded value: tolerances by dtype and magnitude.

This module is copied into a task's ``unit_test/`` folder beside the checkers and runs where lmrbench is not
installed (standard library; numpy and torch when the values hold them).

A correct rewrite of a numeric function (another order of operations, rewards before logits, a sum taken in
another order) rounds differently. How much depends on the dtype it computes in and on how large its intermediate
values are, which are about as large as its inputs: a float32 DPO loss over log-probs near -1000 differs by up to
3e-5 relative between two correct programs, 7e-6 near -200. So a value's tolerance, when a test names none, is
its dtype's row of ``TOLERANCES`` with the absolute tolerance widened to the inputs' rounding unit (``scale``).

``lmrbench validate`` checks the tolerances by re-running the golden code on the recorded inputs in float64
(``LMRBENCH_TOLERANCE_PROBE``): the checkers then measure how much of each tolerance the re-run used (the margin)
instead of judging.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from typing import Any

__tracebackhide__ = True  # pytest leaves this module's frames out of a failing test's traceback: the reader sees
# the test's line and the message, and pytest parses no source of this file per failure

TOLERANCES = {
    "float64": (1e-5, 1e-8),
    "complex128": (1e-5, 1e-8),
    "float32": (3e-5, 1e-6),
    "complex64": (3e-5, 1e-6),
    "float16": (4e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
}
"""dtype -> (rtol, atol) when a test names no tolerance: about 256 units in the last place for float32 (a sum
taken in another order), 4 for float16 and 2 for bfloat16. float64 keeps 1e-5: a Python float or float64 value
often carries float32 work (``loss.item()``). Integers and text compare exactly."""
EPS = {"float64": 2.220446049250313e-16, "float32": 1.1920929e-07, "float16": 9.765625e-04, "bfloat16": 7.8125e-03}
"""Machine epsilon of each floating dtype."""
MAX_INPUT_SHARE = 1e-3
"""The inputs' rounding unit widens atol to at most this share of the recorded value's largest magnitude: an
attention mask of -1e9 among the inputs must not let a result off by 1% pass."""
PROBE_ENV = "LMRBENCH_TOLERANCE_PROBE"
"""Set (by ``lmrbench validate``) to re-run the golden code in float64 and measure the margins."""
PROBE_MARK = "lmrbench-tolerance-margin"
"""How a probing run's checker reports: ``lmrbench-tolerance-margin 0.012 at result[0]``."""


def tolerance_for(dtype: str, scale: float = 0.0, magnitude: float = 0.0) -> tuple[float, float]:
    """(rtol, atol) of a value of ``dtype`` (``float32``, ``bfloat16``; ``float64`` for a Python float) when
    the test names none: the dtype's row of ``TOLERANCES``, atol widened to ``scale`` (the inputs' rounding
    unit, ``Case.scale``) but to at most ``MAX_INPUT_SHARE`` of ``magnitude`` (the recorded value's largest).

    Why atol: a rewrite's intermediate values are as large as its inputs, so its rounding error is absolute, a
    few units of the inputs' last place, whatever the size of the result. A float32 DPO reward near 0 computed as
    ``beta * chosen - beta * ref`` from log-probs near -1000 is off by 3e-5 from ``beta * (chosen - ref)``.
    """
    rtol, atol = TOLERANCES.get(dtype, TOLERANCES["float64"])
    widened = min(float(scale or 0.0), MAX_INPUT_SHARE * float(magnitude or 0.0))
    return rtol, max(atol, widened)


def probing() -> bool:
    """True in a run that measures the tolerances' margins (``PROBE_ENV`` set)."""
    return bool(os.environ.get(PROBE_ENV))


def rounding_scale(value: Any) -> float:
    """The largest rounding unit among the floating values inside ``value``: the eps of each one's dtype times
    its largest finite magnitude (lists, tuples, dicts, attributes, a module's parameters and buffers)."""
    best = 0.0
    stack, seen = [value], 0
    while stack and seen < 100_000:
        v = stack.pop()
        seen += 1
        if type(v) is float:
            if math.isfinite(v):
                best = max(best, EPS["float64"] * abs(v))
        elif isinstance(v, list | tuple | set | frozenset):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        else:
            best = max(best, _array_scale(v, stack))
    return best


def _array_scale(v: Any, stack: list[Any]) -> float:
    np, torch = sys.modules.get("numpy"), sys.modules.get("torch")
    if torch is not None and isinstance(v, torch.nn.Module):
        stack.extend(v.state_dict().values())
        return 0.0
    if torch is not None and isinstance(v, torch.Tensor):
        if not v.is_floating_point() or v.numel() == 0:
            return 0.0
        finite = v.detach()[torch.isfinite(v.detach())]
        name = str(v.dtype).removeprefix("torch.")
        return EPS.get(name, 0.0) * float(finite.abs().max()) if finite.numel() else 0.0
    if np is not None and isinstance(v, np.ndarray | np.floating) and np.asarray(v).dtype.kind == "f":
        a = np.asarray(v)
        finite = a[np.isfinite(a)]
        return EPS.get(a.dtype.name, 0.0) * float(np.abs(finite).max()) if finite.size else 0.0
    fields = getattr(v, "__dict__", None)
    if isinstance(fields, dict) and not isinstance(v, type):
        stack.extend(fields.values())
    return 0.0


def scalar_promotion(value: Any) -> str | None:
    """The float dtype of the floating arrays inside ``value`` (a case's inputs) when a numpy floating scalar
    among them is wider: ``self.kl_ctl.value``, a numpy float64 once a controller has updated it, times float32
    log-probs gives float64 only through that scalar, and a correct ``float(self.kl_ctl.value)`` keeps float32.
    A result wider than this dtype then compares at it (the checkers). None when the arrays have no single float
    dtype or no scalar is wider."""
    np = sys.modules.get("numpy")
    if np is None:
        return None
    arrays: set[Any] = set()
    scalars: set[Any] = set()
    stack, seen = [value], 0
    while stack and seen < 100_000:
        v = stack.pop()
        seen += 1
        if isinstance(v, list | tuple | set | frozenset):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, np.ndarray):
            if v.dtype.kind == "f":
                (arrays if v.ndim else scalars).add(v.dtype)
        elif isinstance(v, np.floating):
            scalars.add(v.dtype)
        elif not isinstance(v, type | str | bytes | int | float | complex):
            fields = getattr(v, "__dict__", None)
            if isinstance(fields, dict):
                stack.extend(fields.values())
            names = getattr(v, "__lmrbench_fields__", None)  # a dataclass decoded as a record, apart from its class
            if isinstance(names, tuple):
                stack.extend(getattr(v, n, None) for n in names)
    if len(arrays) != 1:
        return None
    base = next(iter(arrays))
    return str(base.name) if any(s.itemsize > base.itemsize for s in scalars) else None


def upcast(value: Any) -> Any:
    """``value`` with its floating arrays, tensors and modules in float64 (for a probing re-run of the golden
    code); everything else as it is. Modules are changed in place."""
    np, torch = sys.modules.get("numpy"), sys.modules.get("torch")
    if type(value) is list:
        return [upcast(v) for v in value]
    if type(value) is tuple:
        return tuple(upcast(v) for v in value)
    if type(value) is dict:
        return {k: upcast(v) for k, v in value.items()}
    if torch is not None and isinstance(value, torch.nn.Module):
        return value.double()
    if torch is not None and isinstance(value, torch.Tensor) and value.is_floating_point():
        wide = value.detach().double()
        if isinstance(value, torch.nn.Parameter):
            return torch.nn.Parameter(wide, requires_grad=value.requires_grad)
        return wide.requires_grad_(value.requires_grad)
    if np is not None and isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value.astype(np.float64)
    if np is not None and isinstance(value, np.floating):
        return np.float64(value)
    return value


# ------------------------------------------------------------------------------------ precision across devices
#
# A case recorded by a torch program carries the precision it was made in (``case["precision"]``, written by the
# recorder; absent in cases recorded before; numpy programs, which have no such modes, get the probes alone):
#
# - ``context``: the device, torch's float32 matmul precision and TF32 flags, the autocast dtype and the
#   deterministic-algorithm flags (``capture_context``);
# - ``grown``: per result leaf (``result``, ``result[0]``, ``result['loss']``), the key of a float32 array of the
#   atol of each row (the last axis) as the float64 probes measured it: ``RECORDED_GROWTH`` times the recording's
#   own rounding error (against a float64 re-run), or ``NOISE_GROWTH`` times what rounding-sized noise on the
#   inputs does to the result (a long accumulation: a cumulative sum, a large reduction), whichever is larger;
# - ``matmul``: per result leaf, the key of an array of how far each row's values move (the most in the row) when
#   the inputs of every matrix product are rounded to TF32's 10 mantissa bits (``TF32_BITS``), measured in full
#   float32. When the coarser of the recorded and the grading precision rounds matmul inputs (TF32 on a GPU,
#   bfloat16 or float16 autocast), the checker's atol grows to ``MATMUL_GROWTH`` times it, scaled by that
#   precision's rounding unit over TF32's.
#
# ``case["ties"]`` names the arguments whose values tie along their last axis (equal logits): a result derived from
# their order (sort, argsort, top-k, a nucleus mask, argmax) may break a tie either way (``ties_explain``).

TF32_BITS = 10
"""Explicit mantissa bits of TF32 (float32 has 23, bfloat16 7, float16 10)."""
UNITS = {"float32": 2.0**-24, "tf32": 2.0**-11, "float16": 2.0**-11, "bfloat16": 2.0**-8}
"""Unit roundoff of the precision a float32 matmul's inputs are rounded to."""
RECORDED_GROWTH = 4.0
"""atol of a value = at least this many times the recording's own rounding error (its distance from a float64
re-run): another device's or library's order of operations rounds within a few times the same."""
NOISE_GROWTH = 16.0
"""... and at least this many times how far the value moves when each input moves by its rounding unit (a float64
re-run on jittered inputs): an accumulation (a cumulative sum over 100,000 values, a large reduction) rounds its
partial sums as it goes, which a GPU's parallel scan and a CPU's loop do in different orders. A wrong formula (a
result off by 0.1%) stays far outside."""
MATMUL_GROWTH = 6.0
"""atol of a value = at least this many times how far TF32 rounding of the matmul inputs moved it (scaled by the
precision's unit over TF32's): two devices round the same products in another order."""
DISCRETE_SHARE = 1e-3
"""A probe's deviation larger than this share of the leaf's largest magnitude is a discrete jump (a branch taken
the other way, a tie broken), not rounding, and widens nothing."""


def capture_context(values: Any = None) -> dict[str, Any] | None:
    """The precision torch computes in now, and on which device ``values`` (tensors, nested) live; None without
    torch (numpy programs need none)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    device = _device_of(values, torch)
    ctx: dict[str, Any] = {"device": device}
    backends = torch.backends
    reads = {
        "float32_matmul_precision": lambda: str(torch.get_float32_matmul_precision()),
        "tf32_matmul": lambda: bool(backends.cuda.matmul.allow_tf32),
        "tf32_cudnn": lambda: bool(backends.cudnn.allow_tf32),
        "cuda_matmul_fp32": lambda: str(backends.cuda.matmul.fp32_precision),  # torch 2.9's spelling
        "cpu_matmul_fp32": lambda: str(backends.mkldnn.matmul.fp32_precision),
        "deterministic": lambda: bool(torch.are_deterministic_algorithms_enabled()),
        "cudnn_deterministic": lambda: bool(backends.cudnn.deterministic),
        "cudnn_benchmark": lambda: bool(backends.cudnn.benchmark),
    }
    for name, read in reads.items():
        try:  # each on its own: an old torch lacks some, a new one refuses legacy reads after new-style writes
            ctx[name] = read()
        except Exception:
            continue
    ctx["autocast"] = _autocast_dtype(torch, device)
    if device.startswith("cuda"):
        with contextlib.suppress(Exception):
            ctx["gpu"] = str(torch.cuda.get_device_name(torch.device(device)))
    return ctx


def _device_of(values: Any, torch: Any) -> str:
    stack, seen = [values], 0
    while stack and seen < 10_000:
        v = stack.pop()
        seen += 1
        if isinstance(v, torch.Tensor):
            if v.device.type != "cpu":
                return str(v.device)
        elif isinstance(v, list | tuple):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, torch.nn.Module):
            stack.extend(v.state_dict().values())
    return "cpu"


def _autocast_dtype(torch: Any, device: str) -> str | None:
    kind = device.partition(":")[0]
    try:
        if not torch.is_autocast_enabled(kind):
            return None
        return str(torch.get_autocast_dtype(kind)).removeprefix("torch.")
    except Exception:  # torch before 2.4 names them apart
        try:
            if kind == "cuda" and torch.is_autocast_enabled():
                return str(torch.get_autocast_gpu_dtype()).removeprefix("torch.")
            if kind == "cpu" and torch.is_autocast_cpu_enabled():
                return str(torch.get_autocast_cpu_dtype()).removeprefix("torch.")
        except Exception:
            pass
    return None


def matmul_unit(ctx: dict[str, Any] | None) -> float:
    """The unit roundoff a float32 matrix product's inputs get in ``ctx``: float32's, TF32's on a GPU with TF32
    on (``allow_tf32`` or a float32 matmul precision of ``high``), bfloat16's with ``medium`` or bfloat16
    autocast, float16's with float16 autocast. 0.0 for no context (numpy)."""
    if not ctx:
        return 0.0
    unit = UNITS["float32"]
    precision = ctx.get("float32_matmul_precision", "highest")
    if str(ctx.get("device", "cpu")).startswith("cuda"):
        if ctx.get("tf32_matmul") or precision == "high" or ctx.get("cuda_matmul_fp32") == "tf32":
            unit = max(unit, UNITS["tf32"])
        if precision == "medium":
            unit = max(unit, UNITS["bfloat16"])
    else:  # oneDNN on a CPU that has the instructions
        unit = max(unit, {"tf32": UNITS["tf32"], "bf16": UNITS["bfloat16"]}.get(ctx.get("cpu_matmul_fp32", ""), 0.0))
    autocast = ctx.get("autocast")
    if autocast in ("bfloat16", "float16"):
        unit = max(unit, UNITS[autocast])
    return unit


def describe_context(ctx: dict[str, Any] | None) -> str:
    """``cuda:0 (NVIDIA H200), TF32 matmuls`` / ``cpu, float32`` / ``no torch``."""
    if not ctx:
        return "no torch"
    where = str(ctx.get("device", "cpu")) + (f" ({ctx['gpu']})" if ctx.get("gpu") else "")
    unit = matmul_unit(ctx)
    mode = {UNITS["tf32"]: "TF32 matmuls", UNITS["bfloat16"]: "bfloat16 matmuls"}.get(unit, "float32 matmuls")
    if ctx.get("autocast"):
        mode = f"{ctx['autocast']} autocast"
    return f"{where}, {mode}"


class Scale(float):
    """A case's rounding scale (a float, as the generated tests pass it: ``scale=case.scale``) that also carries
    what the recording knows of its precision: the recorded context, the probes' per-value deviations and the
    inputs whose values tie. A plain float (a case recorded before) keeps the old behaviour."""

    context: dict[str, Any] | None = None
    grown: dict[str, Any] | None = None
    matmul: dict[str, Any] | None = None
    tied: list[Any] | None = None
    promoted: str | None = None
    """The inputs' array dtype when only a wider numpy scalar among them made the result wider
    (``scalar_promotion``)."""

    def __new__(cls, value: float, **notes: Any) -> Scale:
        obj = super().__new__(cls, value)
        for name, note in notes.items():
            setattr(obj, name, note)
        return obj


def widening(scale: Any, where: str, actual: Any = None) -> Any:
    """The extra absolute tolerance (a float or an array like the value at ``where``) that a case's probes and
    precision give the value at ``where``; 0.0 when the scale carries none."""
    extra: Any = 0.0
    grown = (getattr(scale, "grown", None) or {}).get(where)
    if grown is not None:
        extra = grown
    matmul = (getattr(scale, "matmul", None) or {}).get(where)
    if matmul is not None:
        unit = max(matmul_unit(getattr(scale, "context", None)), matmul_unit(grading_context(actual)))
        if unit > UNITS["float32"]:
            np = sys.modules["numpy"]
            extra = np.maximum(extra, MATMUL_GROWTH * matmul * (unit / UNITS["tf32"]))
    return extra


def grading_context(actual: Any = None) -> dict[str, Any] | None:
    """The precision of the run being graded: this process's torch settings, on the device ``actual`` lives on
    (a GPU when the candidate's tensors came back from one)."""
    return capture_context(actual)


# ---------------------------------------------------------------------------------------------------- ties


def has_ties(value: Any) -> bool:
    """True when a floating array or tensor holds equal finite values along its last axis (equal logits)."""
    a = as_float_array(value)
    if a is None or a.ndim == 0 or a.shape[-1] < 2 or a.size > 50_000_000:
        return False
    np = sys.modules["numpy"]
    s = np.sort(a.reshape(-1, a.shape[-1]), axis=-1)
    same = (s[:, 1:] == s[:, :-1]) & np.isfinite(s[:, 1:])
    return bool(same.any())


def as_float_array(value: Any) -> Any:
    """A floating numpy array or tensor as a float64 numpy array (None for anything else)."""
    np, torch = sys.modules.get("numpy"), sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        if not value.is_floating_point():
            return None
        return value.detach().cpu().double().numpy()
    if np is not None and isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value.astype(np.float64)
    return None


def ties_explain(actual: Any, expected: Any, tied: Any, rtol: float, atol: Any) -> bool:
    """True when ``actual`` differs from ``expected`` (numpy arrays) only by breaking ties of ``tied`` (the
    inputs, float64, order along the last axis) the other way: indices (argmax, argsort, top-k) that point at
    equal values, or a mask or filtered copy of the same shape whose values agree within each run of equal
    inputs. Any other difference (a wrong cutoff, argmin for argmax) is not explained."""
    np = sys.modules["numpy"]
    x = tied
    if actual.shape != expected.shape:
        return False
    if actual.dtype.kind in "iu" and expected.dtype.kind in "iu":
        return _indices_tie(actual, expected, x, np)
    if actual.shape != x.shape or x.ndim == 0:
        return False
    n = x.shape[-1]
    xs, a2, e2 = x.reshape(-1, n), actual.reshape(-1, n), expected.reshape(-1, n)
    if expected.dtype.kind in "fc":
        atol_rows = np.broadcast_to(np.asarray(atol, dtype=np.float64), actual.shape).reshape(-1, n)
        close = np.isclose(a2, e2, rtol=rtol, atol=atol_rows, equal_nan=True)
    else:
        close = a2 == e2
    for r in np.nonzero(~close.all(axis=1))[0]:
        xr, ar, er = xs[r], a2[r], e2[r]
        for v in np.unique(xr[~close[r]]):
            group = xr == v
            if int(group.sum()) < 2:
                return False
            ga, ge = np.sort(ar[group]), np.sort(er[group])
            same = np.isclose(ga, ge, rtol=rtol, atol=0.0, equal_nan=True) if ga.dtype.kind in "fc" else ga == ge
            if not bool(np.all(same)):
                return False
    return True


def _indices_tie(actual: Any, expected: Any, x: Any, np: Any) -> bool:
    if x.ndim == 0:
        return False
    n = x.shape[-1]
    if actual.ndim == 0 or x.ndim == 1 and actual.shape == ():
        flat = x.ravel()
        if not (0 <= int(actual) < flat.size and 0 <= int(expected) < flat.size):
            return False
        return bool(flat[int(actual)] == flat[int(expected)])
    if actual.min() < 0 or actual.max() >= n or expected.min() < 0 or expected.max() >= n:
        return False
    if actual.shape == x.shape[:-1]:  # argmax / argmin along the last axis
        va = np.take_along_axis(x, actual[..., None].astype(np.int64), -1)
        ve = np.take_along_axis(x, expected[..., None].astype(np.int64), -1)
        return bool(np.array_equal(va, ve))
    if actual.ndim == x.ndim and actual.shape[:-1] == x.shape[:-1]:  # argsort, top-k indices
        va = np.take_along_axis(x, actual.astype(np.int64), -1)
        ve = np.take_along_axis(x, expected.astype(np.int64), -1)
        if not np.array_equal(va, ve):
            return False
        s = np.sort(actual, axis=-1)
        return not bool((s[..., 1:] == s[..., :-1]).any())
    return False


# --------------------------------------------------------------------------------------- emulated precision


def round_mantissa(a: Any, bits: int) -> Any:
    """``a`` (float32) rounded to nearest-even with ``bits`` explicit mantissa bits, kept in float32: TF32 is 10,
    bfloat16 7. What a GPU's TF32 or bfloat16 matmul does to its inputs."""
    np = sys.modules["numpy"]
    a = np.ascontiguousarray(a, dtype=np.float32)
    drop = 23 - bits
    i = a.view(np.uint32).astype(np.uint64)
    half = (1 << (drop - 1)) - 1
    lsb = (i >> drop) & 1
    rounded = ((i + half + lsb) >> drop) << drop
    out = (rounded & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(a), out, a)


_EMULATED: dict[int, Any] = {}


def emulated_matmul(bits: int) -> Any:
    """A numpy ndarray subclass whose matrix products (``@``, ``np.matmul``, ``np.dot``, ``np.einsum``,
    ``np.tensordot``, ``np.inner``) round their float32 inputs to ``bits`` mantissa bits first, as TF32 (10) or
    bfloat16 (7) matmuls on a GPU do: ``x.view(emulated_matmul(10))``. Other operations keep the subclass."""
    np = sys.modules["numpy"]

    class Emulated(np.ndarray):  # type: ignore[name-defined,misc]
        def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
            plain = [_plain(v, np) for v in inputs]
            if ufunc is np.matmul and method == "__call__":
                plain = [_rounded(v, bits, np) for v in plain]
            if "out" in kwargs:
                kwargs["out"] = tuple(_plain(v, np) for v in kwargs["out"])
            result = getattr(ufunc, method)(*plain, **kwargs)
            return _wrapped(result, Emulated, np)

        def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
            products = (np.dot, np.einsum, np.tensordot, np.inner, np.vdot, np.matmul)
            plain = _unwrap(args, np)
            kwargs = {k: _unwrap(v, np) for k, v in kwargs.items()}
            if func in products:
                plain = _unwrap(plain, np, lambda v: _rounded(v, bits, np))
            return _wrapped(func(*plain, **kwargs), Emulated, np)

    return _EMULATED.setdefault(bits, Emulated)


def _plain(v: Any, np: Any) -> Any:
    return v.view(np.ndarray) if isinstance(v, np.ndarray) and type(v) is not np.ndarray else v


def _rounded(v: Any, bits: int, np: Any) -> Any:
    if isinstance(v, np.ndarray) and v.dtype == np.float32:
        return round_mantissa(v, bits)
    return v


def _unwrap(v: Any, np: Any, also: Any = None) -> Any:
    if isinstance(v, list | tuple):
        return type(v)(_unwrap(x, np, also) for x in v)
    v = _plain(v, np)
    return also(v) if also is not None else v


def _wrapped(result: Any, cls: Any, np: Any) -> Any:
    if isinstance(result, tuple):
        return tuple(_wrapped(r, cls, np) for r in result)
    if isinstance(result, np.ndarray) and type(result) is np.ndarray:
        return result.view(cls)
    return result


# --------------------------------------------------------------------------------------------- the probes


def leaves(value: Any, where: str = "result") -> dict[str, Any]:
    """The floating arrays inside ``value`` (numpy, float64) by the name the checkers give their place:
    ``result``, ``result[0]``, ``result['loss']``, ``result.chosen``; Python floats as 0-d arrays."""
    return _walk(value, where, _float_leaf)


def outcomes(value: Any, where: str = "result") -> dict[str, Any]:
    """The discrete part of each array inside ``value``, by place (as ``leaves``): integer and boolean arrays,
    tensors and Python ints as they are (indices, masks, counts), and of a floating one which entries are finite
    (what a filter keeps: a nucleus filter fills what it drops with -inf)."""
    return _walk(value, where, _discrete_leaf)


def _walk(value: Any, where: str, pick: Any) -> dict[str, Any]:
    torch = sys.modules.get("torch")
    found: dict[str, Any] = {}
    arr = pick(value)
    if arr is not None:
        found[where] = arr
    elif isinstance(value, tuple) and hasattr(value, "_fields"):
        for name in getattr(value, "_fields"):  # noqa: B009  # a namedtuple, by its field names
            found.update(_walk(getattr(value, name), f"{where}.{name}", pick))
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            found.update(_walk(v, f"{where}[{i}]", pick))
    elif isinstance(value, dict):
        for k, v in value.items():
            found.update(_walk(v, f"{where}[{k!r}]", pick))
    elif torch is not None and isinstance(value, torch.nn.Module):
        for k, v in value.state_dict().items():
            found.update(_walk(v, f"{where}.{k}", pick))
    return found


def _float_leaf(value: Any) -> Any:
    np = sys.modules.get("numpy")
    arr = as_float_array(value)
    if arr is None and np is not None and isinstance(value, float | np.floating) and not isinstance(value, bool):
        arr = np.asarray(float(value), dtype=np.float64)
    return arr


def _discrete_leaf(value: Any) -> Any:
    np, torch = sys.modules.get("numpy"), sys.modules.get("torch")
    if np is None:
        return None
    if torch is not None and isinstance(value, torch.Tensor):
        if value.is_floating_point():
            return np.isfinite(as_float_array(value))
        if value.is_complex():
            return None
        return value.detach().cpu().numpy()
    if isinstance(value, np.ndarray | np.generic):
        kind = np.asarray(value).dtype.kind
        if kind == "f":
            return np.isfinite(np.asarray(value))
        return np.asarray(value) if kind in "iub" else None
    if isinstance(value, bool | int):
        return np.asarray(value)
    return None


def deviation(recorded: dict[str, Any], rerun: dict[str, Any]) -> dict[str, Any]:
    """Per leaf, |rerun - recorded| of each value (float64), discrete jumps (a branch or tie the other way,
    a non-finite value on one side) left out."""
    np = sys.modules["numpy"]
    out: dict[str, Any] = {}
    for where, rec in recorded.items():
        other = rerun.get(where)
        if other is None or other.shape != rec.shape:
            continue
        with np.errstate(invalid="ignore", over="ignore"):
            d = np.abs(other - rec)
        finite = np.isfinite(rec) & np.isfinite(other)
        size = float(np.abs(rec[finite]).max()) if finite.any() else 0.0
        d = np.where(finite & (d <= DISCRETE_SHARE * size), d, 0.0)
        out[where] = d
    return out


def noisy(value: Any, seed: int = 0) -> Any:
    """``value`` (already float64, from ``upcast``) with every floating value moved by up to its original
    dtype's unit roundoff (float32's at most): the rounding a float32 computation adds at each input."""
    np, torch = sys.modules["numpy"], sys.modules.get("torch")
    rng = np.random.default_rng(seed)
    if type(value) is list:
        return [noisy(v, seed + i + 1) for i, v in enumerate(value)]
    if type(value) is tuple:
        return tuple(noisy(v, seed + i + 1) for i, v in enumerate(value))
    if type(value) is dict:
        return {k: noisy(v, seed + i + 1) for i, (k, v) in enumerate(value.items())}
    if torch is not None and isinstance(value, torch.Tensor) and value.is_floating_point():
        jitter = torch.from_numpy(rng.uniform(-1, 1, tuple(value.shape))).to(value.device, value.dtype)
        moved = value.detach() * (1 + UNITS["float32"] * jitter)
        return moved.requires_grad_(value.requires_grad)
    if np is not None and isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value * (1 + UNITS["float32"] * rng.uniform(-1, 1, value.shape))
    return value


_CAPTURE: Any = object()


def probe_call(
    rerun: Any, result: Any, inputs: Any = None, context: Any = _CAPTURE
) -> tuple[dict[str, Any], dict[str, Any]]:
    """What a recording notes of its precision: ``(notes, arrays)`` for ``case["precision"]`` and the case's
    arrays (see the section's comment). ``rerun(transform)`` calls the golden function again on fresh copies of
    the recorded inputs passed through ``transform`` (None: as recorded) and returns its result; ``inputs`` are
    the recorded inputs (for the device); ``context`` the precision the result was made in (by default torch's
    now, None without torch). Never raises: a re-run that fails measures nothing."""
    np = sys.modules.get("numpy")
    recorded = leaves(result)
    context = capture_context([inputs, result]) if context is _CAPTURE else context
    notes: dict[str, Any] = {"context": context} if context is not None else {}
    arrays: dict[str, Any] = {}
    if np is None or not (recorded or outcomes(result)):
        return notes, arrays
    grown: dict[str, Any] = {}
    tied = [as_float_array(v) for v in (inputs if isinstance(inputs, list | tuple) else [inputs]) if has_ties(v)]
    try:
        exact_value = rerun(upcast)
        exact = leaves(exact_value)
        sensitive = outcome_change(result, exact_value, tied, _computed_in(inputs, result), "float64")
        jitter = deviation(exact, leaves(rerun(lambda v: noisy(upcast(v)))))
        for where, d in deviation(recorded, exact).items():
            grown[where] = np.maximum(RECORDED_GROWTH * d, NOISE_GROWTH * jitter.get(where, 0.0))
    except Exception:
        grown, sensitive = {}, ""
    _keep(notes, arrays, "grown", grown, recorded, np, 1.0)
    torch = sys.modules.get("torch")
    if context is not None:
        try:
            if torch is not None:
                with _full_float32(torch, context):
                    full_value = rerun(None)
                    with _RoundMatmuls(torch, TF32_BITS):
                        rounded_value = rerun(None)
            else:  # numpy code: its products on arrays that round their inputs
                full_value, rounded_value = rerun(None), rerun(lambda v: with_emulated_matmuls(v, TF32_BITS))
            full, rounded = leaves(full_value), leaves(rounded_value)
            _keep(notes, arrays, "matmul", deviation(full, rounded), recorded, np, MATMUL_GROWTH * 8)
            sensitive = sensitive or outcome_change(full_value, rounded_value, tied, "float32", "TF32 matmuls")
            if context.get("autocast"):  # which ops autocast runs in float32 differs between devices
                sensitive = sensitive or outcome_change(
                    result, full_value, tied, f"{context['autocast']} autocast", "its inputs' dtypes")
        except Exception:
            pass
    if sensitive:
        notes["sensitive"] = sensitive
    return notes, arrays


def outcome_change(recorded: Any, other: Any, tied: list[Any], was: str, now: str) -> str:
    """Empty when the discrete outcomes of ``other`` (``outcomes``: indices, masks, which entries a filter keeps)
    agree with ``recorded``'s, or differ only by ties of ``tied`` (the inputs that tie) broken the other way;
    else what changed, for a case computed in ``was`` re-run in ``now``: ``result: the cutoff moves by up to 46
    entries a row (1684 kept in bfloat16, 1638 in float64)``. Such a case is precision-sensitive: the rounding
    of its own precision decides a threshold or an order, which another device or a correct rewrite rounds
    otherwise, while a wrong cutoff differs by one entry, so no tolerance tells the two apart."""
    np = sys.modules["numpy"]
    theirs = outcomes(other)
    for where, rec in outcomes(recorded).items():
        alt = theirs.get(where)
        if alt is None or alt.shape != rec.shape or np.array_equal(rec, alt):
            continue
        explained = False
        for x in tied:
            try:
                explained = explained or ties_explain(alt, rec, x, 0.0, 0.0)
            except (ValueError, TypeError, IndexError):
                continue
        if not explained:
            return f"{where}: {_what_moved(rec, alt, was, now)}"
    return ""


def _what_moved(rec: Any, alt: Any, was: str, now: str) -> str:
    np = sys.modules["numpy"]
    if rec.dtype.kind == "b" and rec.ndim:
        kept, other = rec.reshape(-1, rec.shape[-1]).sum(-1), alt.reshape(-1, rec.shape[-1]).sum(-1)
        row = int(np.argmax(np.abs(kept - other)))
        if kept[row] != other[row]:
            moved = abs(int(kept[row]) - int(other[row]))
            return (f"the cutoff moves by up to {moved} {'entry' if moved == 1 else 'entries'} a row "
                    f"({int(kept[row])} kept in {was}, {int(other[row])} in {now})")
    differ = int(np.count_nonzero(rec != alt))
    return f"{differ} of {rec.size} {'indices' if rec.dtype.kind in 'iu' else 'entries'} differ in {now} from {was}"


def _computed_in(inputs: Any, result: Any) -> str:
    """The coarsest floating dtype among the recorded inputs and the result (``float32``, ``bfloat16``)."""
    known = [n for n in _walk([inputs, result], "", _dtype_name).values() if n in EPS]
    return max(known, key=EPS.__getitem__) if known else "float32"


def _dtype_name(value: Any) -> Any:
    np, torch = sys.modules.get("numpy"), sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor) and value.is_floating_point():
        return str(value.dtype).removeprefix("torch.")
    if np is not None and isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value.dtype.name
    return None


def with_emulated_matmuls(value: Any, bits: int) -> Any:
    """``value`` with its float32 numpy arrays (in lists, tuples and dicts) viewed as ``emulated_matmul(bits)``."""
    np = sys.modules["numpy"]
    if type(value) is list:
        return [with_emulated_matmuls(v, bits) for v in value]
    if type(value) is tuple:
        return tuple(with_emulated_matmuls(v, bits) for v in value)
    if type(value) is dict:
        return {k: with_emulated_matmuls(v, bits) for k, v in value.items()}
    if isinstance(value, np.ndarray) and value.dtype == np.float32:
        return value.view(emulated_matmul(bits))
    return value


def _keep(notes: dict[str, Any], arrays: dict[str, Any], name: str, found: dict[str, Any], recorded: dict[str, Any],
          np: Any, growth: float) -> None:
    """Keep the arrays that could matter: where ``growth`` times some value passes float32's own tolerance
    (``growth``: the most a precision can multiply it by)."""
    kept: dict[str, str] = {}
    for where, d in found.items():
        if not d.size or not bool((growth * d > TOLERANCES["float32"][0] * np.abs(recorded[where])).any()):
            continue
        if d.ndim:  # one value per row: where one value's rounding happened to cancel, its neighbours' did not
            d = d.max(axis=-1, keepdims=True)
        key = f"precision-{name}-{len(arrays)}"
        arrays[key] = d.astype(np.float32)
        kept[where] = key
    if kept:
        notes[name] = kept


class _full_float32:  # noqa: N801  # a context manager, named as one
    """TF32 off, float32 matmul precision ``highest`` and autocast off, for the duration."""

    def __init__(self, torch: Any, context: dict[str, Any]) -> None:
        self.torch, self.kind = torch, str(context.get("device", "cpu")).partition(":")[0]

    def __enter__(self) -> None:
        t = self.torch
        self.saved = (t.backends.cuda.matmul.allow_tf32, t.backends.cudnn.allow_tf32, t.get_float32_matmul_precision())
        t.backends.cuda.matmul.allow_tf32 = False
        t.backends.cudnn.allow_tf32 = False
        t.set_float32_matmul_precision("highest")
        self.autocast = t.autocast(self.kind, enabled=False)
        self.autocast.__enter__()

    def __exit__(self, *exc: Any) -> None:
        t = self.torch
        self.autocast.__exit__(*exc)
        t.backends.cuda.matmul.allow_tf32, t.backends.cudnn.allow_tf32, precision = self.saved
        t.set_float32_matmul_precision(precision)


def _round_tensor(torch: Any, t: Any, bits: int) -> Any:
    if not isinstance(t, torch.Tensor) or t.dtype != torch.float32:
        return t
    drop = 23 - bits
    i = t.detach().contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    lsb = (i >> drop) & 1
    rounded = (((i + (1 << (drop - 1)) - 1 + lsb) >> drop) << drop) & 0xFFFFFFFF
    rounded = torch.where(rounded >= 2**31, rounded - 2**32, rounded).to(torch.int32).view(torch.float32)
    return torch.where(torch.isfinite(t), rounded, t.detach())


def _RoundMatmuls(torch: Any, bits: int) -> Any:  # noqa: N802  # builds a mode class where torch is loaded
    """A torch function mode in which the float32 inputs of matrix products are rounded to ``bits`` mantissa
    bits first (TF32: 10): the CPU's or a full-float32 GPU's emulation of a TF32 matmul."""
    F = torch.nn.functional
    products = {
        torch.matmul, torch.mm, torch.bmm, torch.einsum, torch.tensordot, torch.addmm, torch.baddbmm,
        torch.addbmm, torch.inner, torch.Tensor.matmul, torch.Tensor.__matmul__, torch.Tensor.__rmatmul__,
        torch.Tensor.mm, torch.Tensor.bmm, F.linear, F.bilinear, F.conv1d, F.conv2d, F.conv3d,
        getattr(F, "scaled_dot_product_attention", torch.matmul),
    }

    class Mode(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            if func in products:
                args = tuple(_round_tensor(torch, a, bits) for a in args)
                if func is torch.einsum and args and isinstance(args[-1], list | tuple):
                    args = (*args[:-1], [_round_tensor(torch, a, bits) for a in args[-1]])
            return func(*args, **kwargs)

    return Mode()
