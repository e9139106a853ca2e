"""Whether the golden result of a recorded call depends on how the ties among its inputs are broken: where it does
not (an argmax of logits plus noise, whose logits tie), no tie is excused in the case (``ties_settled``), and a
correct program gets no licence to break them otherwise. Shipped for ``lmrbench_record``.
"""

from __future__ import annotations

import sys
from typing import Any

__tracebackhide__ = True


def decides(rerun: Any, result: Any, value: Any, tol: dict[str, Any]) -> bool:
    """Whether breaking the ties of the argument ``value`` either way moves the golden result (``rerun(swap)``
    calls again with ``swap`` applied to the positional and keyword arguments and the state) beyond the test's
    tolerance ``tol``. True when it cannot be told (not a numpy array, a call that fails, the argument changed in
    place so it is no longer found)."""
    import lmrbench_checkers as lc

    try:
        for first_up in (True, False):
            moved = untie(value, first_up)
            if moved is None:
                return True
            swapped: list[bool] = []

            def swap(x: Any, moved: Any = moved, swapped: list[bool] = swapped) -> Any:
                def one(v: Any) -> Any:
                    if type(v) is type(value) and v.shape == value.shape and bool((v == value).all()):
                        swapped.append(True)
                        return moved
                    return v

                return {k: one(v) for k, v in x.items()} if isinstance(x, dict) else [one(v) for v in x]

            again = rerun(swap)
            if not swapped:
                return True
            lc.assert_close(again, result, **tol)
    except Exception:  # noqa: BLE001 - moved beyond the tolerance, or cannot tell: the tie may decide
        return True
    return False


def untie(value: Any, first_up: bool) -> Any:
    """A float numpy array with the ties along its last axis broken by a few units (in its dtype) of its largest
    magnitude (the later of equal entries up, or the earlier ones), or None for anything else or no tie."""
    np = sys.modules.get("numpy")
    if np is None or not isinstance(value, np.ndarray) or value.dtype.kind != "f" or value.ndim == 0:
        return None
    rows = value.reshape(-1, value.shape[-1])
    order = np.argsort(rows, axis=-1, kind="stable")
    ranked = np.take_along_axis(rows, order, axis=-1)
    start = np.concatenate([np.ones((rows.shape[0], 1), bool), ranked[:, 1:] != ranked[:, :-1]], axis=-1)
    index = np.broadcast_to(np.arange(rows.shape[1]), rows.shape)
    rank = index - np.maximum.accumulate(np.where(start, index, 0), axis=-1)
    step = np.empty_like(rows)
    np.put_along_axis(step, order, rank if first_up else -rank, axis=-1)
    finite = rows[np.isfinite(rows)]
    top = np.asarray(max(float(np.abs(finite).max()) if finite.size else 1.0, 1.0), dtype=value.dtype)
    moved = np.where(np.isfinite(rows), rows + step * (4 * np.spacing(top)), rows).astype(value.dtype)
    return None if np.array_equal(moved, rows) else moved.reshape(value.shape)
