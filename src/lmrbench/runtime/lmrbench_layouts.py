"""Where the arrays of a case are and how they are laid out, for the search's variations: the array key of an
argument, the axes an int leaf may index or name, and arrays with an axis moved. No lmrbench import: this file
ships to sandboxes."""

from __future__ import annotations

from typing import Any

import lmrbench_leaves as ll


def array_key(case: dict[str, Any], name: str, arrays: dict[str, Any]) -> str | None:
    """The array key of an argument (or leaf) that is an array, else None."""
    found = ll.node(case, name)
    if isinstance(found, dict) and found.get("$") in ("ndarray", "tensor") and found.get("key") in arrays:
        return str(found["key"])
    return None


def _leaf(case: dict[str, Any], arrays: dict[str, Any], path: str) -> Any:
    """The value of a leaf of the case, None where it has none."""
    return None if ll.node(case, path) is None else ll.get(case, arrays, path)


def by_dims(case: dict[str, Any], arrays: dict[str, Any], path: str) -> list[int]:
    """For an int leaf, one less than each length of an axis of the call's arrays, shortest first: an index
    (a ring's pointer) at the end of an axis, where what it starts wraps round."""
    import numpy as np

    mine = _leaf(case, arrays, path)
    if type(mine) is not int:
        return []
    dims = {d for k, a in arrays.items() if isinstance(a, np.ndarray) and not k.startswith("out") for d in a.shape}
    return [d - 1 for d in sorted(dims) if d > 2 and d - 1 != mine][:4]


def other_axes(case: dict[str, Any], arrays: dict[str, Any], path: str) -> list[tuple[int, int]]:
    """(recorded axis, another) for an int leaf used as an axis: each other axis of the array arguments."""
    was = _leaf(case, arrays, path)
    ranks = [getattr(arrays.get(array_key(case, a["name"], arrays) or ""), "ndim", 0) for a in case["arguments"]]
    if type(was) is not int or was < 0:
        return []
    return [(was, to) for to in range(max(ranks, default=0)) if to != was]


def moved(new: dict[str, Any], inputs: dict[str, Any], was: int, to: int) -> bool:
    """Move axis ``was`` of every array argument that has it to ``to`` (``np.moveaxis``): the same data, laid out
    as a caller passing the other axis gives it."""
    import numpy as np

    done = False
    for a in new["arguments"]:
        k = array_key(new, a["name"], inputs)
        arr = inputs.get(k) if k is not None else None
        if isinstance(arr, np.ndarray) and arr.ndim > max(was, to):
            inputs[str(k)], done = np.ascontiguousarray(np.moveaxis(arr, was, to)), True
    return done
