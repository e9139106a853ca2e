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

import math
import os
import sys
from typing import Any

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
