"""The inputs the search (``lmrbench_search``) tries: variations of a recorded call, as specs the host never
sees, built into a case and its arrays here.

Per base call: each scalar leaf alone, the defaults the driver never leaves, array arguments filled (int and bool
ones all zero, all equal, all distinct; reversed along their last axis, so a right-padded mask or label row
becomes a left-padded one and a padded first column moves to the end; float ones shifted by a large constant, the
magnitudes where an unguarded ``exp`` overflows; where the body guards a value, float ones all equal, all one,
within a millionth of their first entry, a row of zeros), random arrays of the recorded shapes, arguments never
given filled; then pairs of leaves; random arrays with each leaf varied; last, arrays of 0s and 1s given values
between them (soft targets). Every input keeps to the ``domain`` of the recorded arrays (masks stay masks,
probabilities stay distributions); one that leaves it (``departs``) may name a mutant live, it makes no case (a
correct program may rely on what every caller passes).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import lmrbench_leaves as ll
from lmrbench_layouts import array_key, by_dims, moved, other_axes

RANDOM_TRIES = 3
"""Random inputs of the recorded shapes tried per base call."""
SHIFT = 1000.0
"""The constant (times the array's largest magnitude, at least 1) added to float arrays by the ``shifted``
variation: far past where ``exp`` of an unshifted value overflows."""


LARGE = 60.0
"""The largest magnitude of a float array in the ``scaled`` variation: a sigmoid rounds to 1 and ``1 - p`` to 0
in float64, while ``exp`` stays finite in float32."""
HUGE = 1e4
"""The largest magnitude in the ``huge`` variation, for a body whose docstring promises any size: past 709, where
``exp`` overflows in float64 and a log of a sigmoid computed directly is -inf."""


def mixed(case: dict[str, Any], arrays: dict[str, Any], cases: list[tuple[str, Any, Any]]) -> dict[str, list[int]]:
    """Int array arguments of ``case`` whose entries are all equal (one timestep for the whole batch), by name,
    with the values they took in ``cases`` (largest first) when there are several: ``_mixed`` gives each entry
    one of them, so that a call mixes what the recorded calls had one at a time."""
    import numpy as np

    out: dict[str, list[int]] = {}
    for a in case["arguments"]:
        key = array_key(case, a["name"], arrays)
        arr = arrays.get(key) if key is not None else None
        if not isinstance(arr, np.ndarray) or not np.issubdtype(arr.dtype, np.integer) or arr.size < 2 \
                or not (arr == arr.flat[0]).all():
            continue
        seen = set()
        for _, other, other_arrays in cases:
            k = array_key(other, a["name"], other_arrays)
            got = other_arrays.get(k) if k is not None else None
            if isinstance(got, np.ndarray) and got.size and (got == got.flat[0]).all():
                seen.add(int(got.flat[0]))
        if len(seen) > 1:
            out[a["name"]] = sorted(seen, reverse=True)
    return out


def _mixed(new: dict[str, Any], inputs: dict[str, Any], name: str, values: list[int]) -> bool:
    import numpy as np

    key = array_key(new, name, inputs)
    if key is None:
        return False
    arr = inputs[key]
    inputs[key] = np.resize(np.asarray(values, dtype=arr.dtype), arr.shape)
    return True


def _ranked(new: dict[str, Any], inputs: dict[str, Any], name: str) -> bool:
    """Give the array argument ``name`` and every array argument of its shape one more trailing axis of 3
    (floats that are no mask spread along it, others repeated): the body reads its rank, so takes any."""
    import numpy as np

    key = array_key(new, name, inputs)
    if key is None or not getattr(inputs[key], "ndim", 0):
        return False
    shape = inputs[key].shape
    rng = np.random.default_rng(11)
    for a in new["arguments"]:
        k = array_key(new, a["name"], inputs)
        arr = inputs.get(k) if k is not None else None
        if not isinstance(arr, np.ndarray) or arr.shape != shape:
            continue
        wide = np.repeat(arr[..., None], 3, axis=-1)
        if np.issubdtype(arr.dtype, np.floating) and not is_mask(arr):
            finite = arr[np.isfinite(arr)]
            scale = float(np.abs(finite).max()) if finite.size else 1.0
            wide = wide + 0.5 * (scale or 1.0) * rng.normal(size=wide.shape)
        inputs[str(k)] = np.ascontiguousarray(wide.astype(arr.dtype))
    return True


def _retyped(new: dict[str, Any], inputs: dict[str, Any], name: str) -> bool:
    """Give the bool array argument ``name`` as 0/1 ints (the body converts it to numbers: its callers may pass
    either); False when it is no bool array."""
    import numpy as np

    key = array_key(new, name, inputs)
    if key is None or getattr(inputs[key], "dtype", None) != np.bool_:
        return False
    inputs[str(key)] = inputs[key].astype(np.int64)
    return True


def batch_size(case: dict[str, Any], arrays: dict[str, Any], axis: int) -> int:
    """The size every array argument has at ``axis`` (a batch axis, first or last), when it is at least 2 and one
    of them has another axis too; else 0."""
    import numpy as np

    given = [arrays[k] for a in case["arguments"] if (k := array_key(case, a["name"], arrays)) is not None
             and isinstance(arrays[k], np.ndarray)]
    if not given or not all(g.ndim for g in given) or not any(g.ndim >= 2 for g in given):
        return 0
    sizes = {g.shape[axis] for g in given}
    return sizes.pop() if len(sizes) == 1 and min(sizes) >= 2 else 0


def unbatched(value: Any, axis: int, size: int) -> Any:
    """``value`` (a result, through tuples and lists) with its arrays of ``size`` entries at ``axis`` cut to their
    first entry there: what the function gives for one item of the batch."""
    import numpy as np

    if isinstance(value, tuple | list):
        return type(value)(unbatched(v, axis, size) for v in value)
    if isinstance(value, np.ndarray) and value.ndim and value.shape[axis] == size:
        return value.take(0, axis=axis)
    return value


def _unbatch(new: dict[str, Any], inputs: dict[str, Any], axis: int) -> bool:
    """Give every array argument its first entry along ``axis`` only (a batch of one, without its axis: ``[T]``
    for ``[T, B]``); False when the arrays share no batch axis there."""
    size = batch_size(new, inputs, axis)
    if not size:
        return False
    for a in new["arguments"]:
        key = array_key(new, a["name"], inputs)
        if key is not None:
            inputs[str(key)] = inputs[key].take(0, axis=axis)
    return True


def _spaced_text(node: Any) -> tuple[Any, bool]:
    """``node`` with every text in it (through lists and tuples) given doubled spaces and a trailing one, and
    whether any had a space."""
    if isinstance(node, str):
        return (node.replace(" ", "  ") + " ", True) if " " in node.strip() else (node, False)
    if isinstance(node, list):
        done = [_spaced_text(item) for item in node]
        return [d[0] for d in done], any(d[1] for d in done)
    if isinstance(node, dict) and node.get("$") == "tuple":
        items, changed = _spaced_text(node["items"])
        return {**node, "items": items}, changed
    return node, False


def _spaced(new: dict[str, Any]) -> bool:
    """Give the text arguments (and texts in list and tuple arguments) doubled spaces and a trailing one, for a
    body that splits on runs of whitespace (``str.split()``: the same tokens, where ``split(" ")`` finds empty
    ones); False when no argument holds text with a space."""
    changed = False
    for arg in new["arguments"]:
        arg["value"], hit = _spaced_text(arg["value"])
        changed = changed or hit
    return changed


def is_mask(arr: Any) -> bool:
    """A float array of 0s and 1s only, some of them 1 (a mask or one-hot targets; all zeros say nothing: the
    first logits of a run)."""
    import numpy as np

    finite = arr[np.isfinite(arr)]
    return finite.size > 2 and bool(np.isin(finite, (0.0, 1.0)).all()) and bool(finite.any())


def _padded(arr: Any) -> bool:
    """True when, along the last axis, some value sits only at the ends of the rows (a prefix, a suffix or both:
    the other entries of each row are one block), in some rows but not everywhere: padding, a masked-out prompt."""
    import numpy as np

    if arr.ndim == 0 or arr.shape[-1] < 2:
        return False
    rows = arr.reshape(-1, arr.shape[-1])
    width = rows.shape[1]
    for value in {*np.unique(rows[:, 0]).tolist(), *np.unique(rows[:, -1]).tolist()}:
        other = rows != value
        if other.all() or not other.any():
            continue
        count = other.sum(axis=1)
        first = np.argmax(other, axis=1)
        last = width - 1 - np.argmax(other[:, ::-1], axis=1)
        if ((count == 0) | (last - first + 1 == count)).all():
            return True
    return False


def _lengths(node: Any) -> set[int]:
    """The lengths of the lists in a case's JSON nodes (a replay buffer's ``storage``)."""
    if isinstance(node, list):
        return {len(node)}.union(*(_lengths(v) for v in node))
    return set().union(*(_lengths(v) for v in node.values())) if isinstance(node, dict) else set()


def arrays_filled(case: dict[str, Any], arrays: dict[str, Any], how: str, guarded: bool,
                  only: str | None = None) -> dict[str, Any]:
    """Array arguments varied by ``how``: int and bool ones all zero (``zeros``), all equal to their first entry
    (``same``) or all distinct (``distinct``); padded int, bool and 0/1 float ones (``_padded``) reversed along
    their last axis (``flipped``: right padding becomes left padding); float ones shifted by ``SHIFT`` times
    their magnitude (``shifted``: where an unshifted ``exp`` overflows); float ones with every other entry exactly
    zero (``sparse``, list items too); every argument of the most common first-axis length cut to none along it
    (``empty``: a batch of no item, where the body guards one); float ones negated (``negated``: an embedding
    turned away from its class, a cosine near -1); what a body must refuse: int ones with one entry
    -1 (``negative``) or at the smallest length above them of the call's axes and lists (``past``), one argument
    shorter by an item (``mismatch``, ``only``). Where the body guards a value
    (``guarded``), float ones too: a 0/1 mask all zero (a count of zero), any float array all equal (a spread
    of zero), all one (a spread of zero that no tie-break moves), within a millionth of its first entry (a
    spread below an ``eps``), its first row zero (a norm of zero), every row a near copy of the first
    (``repeated``: collapsed embeddings a billionth apart, whose squared distances from a Gram matrix round below
    zero); one entry nan, or inf (``nan``, ``inf``: arrays in a list argument too). ``only``: that argument
    alone."""
    import numpy as np

    out: dict[str, Any] = {}
    names = [a["name"] for a in case["arguments"]]
    if how in ("nan", "inf", "sparse"):  # an overflowed (or a zero) gradient among a list of them (``grads``)
        names += [f"{a['name']}[{i}]" for a in case["arguments"] if isinstance(a["value"], list)
                  and len(a["value"]) <= ll.MAX_ITEMS for i in range(len(a["value"]))]
        given = [arrays[k] for n in names if (k := array_key(case, n, arrays)) is not None]
        if how != "sparse" and any(isinstance(g, np.ndarray) and np.issubdtype(g.dtype, np.floating)
                                   and not np.isfinite(g).all() for g in given):
            return out  # a call that already overflowed shows nothing new: the next recorded call is tried
    if how == "one_zero":  # a class without samples among the counts an instance holds (``self.cls_num_list``)
        names += [f"self.{k}" for k, _ in ll.self_items(case) or [] if isinstance(k, str)]
    if how == "past":  # an index at a length it may index (``len(self.storage)``): one above its largest
        lengths = _lengths([case.get("arguments"), case.get("self")]) | {d for a in arrays.values()
                                                                        if isinstance(a, np.ndarray) for d in a.shape}
    if how == "empty":  # a batch of no item: the arguments' first axes of the most common length cut to 0
        held = [k for n in names if (k := array_key(case, n, arrays)) is not None
                and isinstance(arrays[k], np.ndarray) and arrays[k].ndim and arrays[k].size]
        firsts = [arrays[k].shape[0] for k in held]
        return {k: arrays[k][:0] for k in held if arrays[k].shape[0] == max(firsts, key=firsts.count)}
    for name in names:
        if only is not None and name != only:
            continue
        key = array_key(case, name, arrays)
        if key is None or not isinstance(arrays[key], np.ndarray) or arrays[key].size == 0:
            continue
        arr = arrays[key]
        discrete = arr.dtype == np.bool_ or np.issubdtype(arr.dtype, np.integer)
        floating = np.issubdtype(arr.dtype, np.floating) and bool(np.isfinite(arr).all())
        if how in ("negative", "past") and np.issubdtype(arr.dtype, np.integer) and bool((arr >= 0).all()):
            above = sorted(d for d in lengths if d > arr.max()) if how == "past" else [-1]
            if above:  # one entry out of range: an index the body must refuse
                out[key] = arr.copy()
                out[key].flat[arr.size // 2] = above[0]
        elif how == "mismatch" and arr.ndim and arr.shape[0] > 1:
            out[key] = arr[:-1]  # one item shorter than the arguments it goes with
        elif how == "flipped":
            if (discrete or floating and is_mask(arr)) and _padded(arr):
                out[key] = np.ascontiguousarray(arr[..., ::-1])
        elif how == "negated":
            if floating and not is_mask(arr) and bool(arr.any()):  # every sign turned: a cosine near -1
                out[key] = -arr
        elif how == "shifted":
            if floating and not is_mask(arr):
                out[key] = (arr + SHIFT * max(float(np.abs(arr).max()), 1.0)).astype(arr.dtype)
        elif how in ("scaled", "huge"):
            if floating and not is_mask(arr) and np.abs(arr).max() > 0:
                top = LARGE if how == "scaled" else HUGE
                out[key] = (arr * (top / float(np.abs(arr).max()))).astype(arr.dtype)
        elif how in ("nan", "inf"):
            if floating and arr.size > 1:  # one entry not finite: an overflowed gradient, where the body checks
                out[key] = arr.copy()
                out[key].flat[arr.size // 2] = np.nan if how == "nan" else np.inf
        elif how == "sparse":
            if floating and arr.size > 1 and not is_mask(arr):  # exact zeros: a unit that never fired, no gradient
                out[key] = arr.copy()
                out[key].flat[::2] = 0
        elif how == "neginf":
            if floating and arr.size > 1 and not is_mask(arr):  # a banned token among the logits
                out[key] = arr.copy()
                out[key].flat[arr.size // 2] = -np.inf
        elif how == "one_zero":
            if np.issubdtype(arr.dtype, np.integer) and arr.ndim == 1 and arr.size > 1 and bool((arr > 0).all()):
                out[key] = arr.copy()  # one count of zero among positive ones: a class without samples
                out[key][-1] = 0
        elif discrete:
            if how == "zeros":
                out[key] = np.zeros_like(arr)
            elif how == "same":
                out[key] = np.full_like(arr, arr.ravel()[0])
            elif how == "distinct" and np.issubdtype(arr.dtype, np.integer):
                out[key] = np.arange(arr.size, dtype=arr.dtype).reshape(arr.shape) + arr.min()
            elif how == "lone" and guarded and np.issubdtype(arr.dtype, np.integer) and arr.size > 2:
                out[key] = arr.copy()  # one entry unlike every other: a label with no partner
                out[key].flat[0] = arr.max() + 1
        elif guarded and floating:
            first = arr.ravel()[0]
            if how == "zeros" and is_mask(arr):
                out[key] = np.zeros_like(arr)
            elif how == "zeros":  # one row of zeros: a norm of zero
                out[key] = arr.copy()
                out[key][0] = 0
            elif how == "same":
                out[key] = np.full_like(arr, first)
            elif how == "ones" and not is_mask(arr):
                out[key] = np.ones_like(arr)
            elif how == "close" and not is_mask(arr):
                out[key] = (first + (arr - first) * 1e-6).astype(arr.dtype)
            elif how == "repeated" and arr.ndim == 2 and len(arr) > 1 and not is_mask(arr):
                jitter = 1e-9 * np.random.default_rng(5).normal(size=arr.shape)  # collapsed embeddings
                out[key] = (arr[0] * (1.0 + jitter)).astype(arr.dtype)
    return out


DISTRIBUTIONS = "rows that sum to 1"
"""The domain of a float array whose recorded rows (along the last axis) are probability distributions."""


def domain(arr: Any) -> list[str]:
    """What every recorded value of a float array keeps to by construction, and a correct program may rely on:
    ``0s and 1s`` (a mask, one-hot targets) and ``rows that sum to 1`` (probabilities along the last axis); the
    order of its columns (boxes) is ``ordered_columns``. A range the values kept by chance (all positive, all
    below 1) is no domain: where the golden code cannot take a value outside it, its result is not finite and the
    input is no case anyway."""
    import numpy as np

    finite = arr[np.isfinite(arr)]
    if finite.size < 2 or not bool((finite >= 0).all()):
        return []
    out = ["0s and 1s"] if is_mask(arr) else []
    if arr.ndim >= 1 and arr.shape[-1] > 1 and np.isfinite(arr).all() and \
            np.allclose(arr.sum(axis=-1), 1.0, rtol=1e-5, atol=1e-6):
        out.append(DISTRIBUTIONS)
    return out


def ordered_columns(arr: Any) -> list[tuple[int, int]]:
    """(i, j): columns of the last axis where every recorded row has ``row[j] >= row[i]`` and some ``>`` (boxes
    as x1, y1, x2, y2; sorted edges), for a float array of at least 4 rows of 2 to 8 columns that is no mask."""
    import numpy as np

    if arr.ndim < 2 or not 2 <= arr.shape[-1] <= 8 or is_mask(arr) or not np.isfinite(arr).all():
        return []
    rows = arr.reshape(-1, arr.shape[-1])
    if len(rows) < 4:
        return []
    n = rows.shape[1]
    return [(i, j) for i in range(n) for j in range(n) if i != j
            and bool((rows[:, j] >= rows[:, i]).all()) and bool((rows[:, j] > rows[:, i]).any())]


def departs(case: dict[str, Any], arrays: dict[str, Any], new_arrays: dict[str, Any]) -> str:
    """How an input leaves the domain of the recorded arrays it varies (``target without its 0s and 1s``), or ''
    when it keeps to it. Such an input may name a mutant; it makes no case, since a correct program may rely on
    what every caller passes."""
    import numpy as np

    for a in case["arguments"]:
        key = array_key(case, a["name"], arrays)
        old, new = arrays.get(key) if key else None, new_arrays.get(key) if key else None
        if not isinstance(old, np.ndarray) or not isinstance(new, np.ndarray) or new is old or old.shape != new.shape:
            continue
        if np.issubdtype(old.dtype, np.integer):  # binary labels stay binary (class ids may take any value)
            if old.size > 2 and bool(np.isin(old, (0, 1)).all()) and bool(old.any()) and \
                    not bool(np.isin(new, (0, 1)).all()):
                return f"{a['name']} without its 0s and 1s"
            continue
        if not np.issubdtype(old.dtype, np.floating):
            continue
        if is_mask(old):  # a mask stays one; its one-hot rows may become all zero (no class: a background anchor)
            lost = [] if bool(np.isin(new[np.isfinite(new)], (0.0, 1.0)).all()) else ["0s and 1s"]
        else:
            kept = domain(new)
            lost = [d for d in domain(old) if d not in kept]
            lost += [f"column {j} at least column {i}" for i, j in ordered_columns(old)
                     if not bool((new[..., j] >= new[..., i]).all())]  # equal columns keep the order
        if lost:
            return f"{a['name']} without its {lost[0]}"
    return ""


def _drawn(rng: Any, arr: Any, scale: float) -> Any:
    """A float array drawn anew in the domain of ``arr``: normal at ``scale``; rows that sum to 1 drawn as
    distributions; ordered columns put in order (each pair's smaller value first, pass after pass)."""
    import numpy as np

    if DISTRIBUTIONS in domain(arr):
        raw = rng.random(arr.shape) + 1e-3
        return raw / raw.sum(axis=-1, keepdims=True)
    drawn = rng.normal(size=arr.shape) * scale
    pairs = ordered_columns(arr)
    for _ in range(arr.shape[-1] if pairs else 0):
        for i, j in pairs:
            low, high = np.minimum(drawn[..., i], drawn[..., j]), np.maximum(drawn[..., i], drawn[..., j])
            drawn[..., i], drawn[..., j] = low, high
    return drawn


def _random_arrays(case: dict[str, Any], arrays: dict[str, Any], seed: int) -> dict[str, Any]:
    """The float array arguments drawn anew (normal, at their recorded scale and wider, within their ``domain``;
    a float mask of 0s and 1s stays one, one-hot rows stay one-hot: a mask of other weights would fail correct
    answers that rely on what every caller gives), bool ones at random."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {}
    for a in case["arguments"]:
        key = array_key(case, a["name"], arrays)
        arr = arrays.get(key) if key is not None else None
        if key is None or not isinstance(arr, np.ndarray) or arr.size == 0:
            continue
        if np.issubdtype(arr.dtype, np.floating):
            finite = arr[np.isfinite(arr)]
            if is_mask(arr) and DISTRIBUTIONS in domain(arr):  # one-hot rows stay one-hot
                hot = rng.integers(0, arr.shape[-1], size=arr.shape[:-1])
                out[key] = np.eye(arr.shape[-1], dtype=arr.dtype)[hot]
                continue
            if is_mask(arr):  # a float mask stays a mask
                out[key] = np.asarray(rng.random(arr.shape) < 0.5).astype(arr.dtype)
                continue
            scale = float(np.abs(finite).max()) if finite.size else 1.0
            wider = (1.0, 4.0, 16.0)[seed % 3]  # past the recorded range too: where a clamp or a bound binds
            out[key] = np.asarray(_drawn(rng, arr, (scale or 1.0) * wider)).astype(arr.dtype)
        elif arr.dtype == np.bool_:
            out[key] = rng.random(arr.shape) < 0.5
    return out


def _softened(case: dict[str, Any], arrays: dict[str, Any]) -> dict[str, Any]:
    """The float arguments of 0s and 1s only (one-hot targets, masks) given values strictly between 0 and 1: an
    input outside what the recorded calls pass (``kind`` ``soft``: it names a mutant, it never makes a case)."""
    import numpy as np

    rng = np.random.default_rng(7)
    out: dict[str, Any] = {}
    for a in case["arguments"]:
        key = array_key(case, a["name"], arrays)
        arr = arrays.get(key) if key is not None else None
        if key is not None and isinstance(arr, np.ndarray) and np.issubdtype(arr.dtype, np.floating) \
                and is_mask(arr):
            out[key] = np.asarray(rng.uniform(0.05, 0.95, size=arr.shape)).astype(arr.dtype)
    return out


def modes(leaves: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Each text value of the plan's ``leaves`` to try, as a setting (``{"var_type": "fixed_large"}``)."""
    return [{p: v} for p, values in leaves.items() for v in values if type(v) is str]


def near(case: dict[str, Any], arrays: dict[str, Any], path: str, rel: dict[str, Any]) -> list[Any]:
    """Values for the leaf ``path`` near the leaves it meets in the body (``rel["to"]``), as this call holds
    them: ``w - 1, w, w + 1`` for an int, ``w/2, 3w/2`` for a float (either side, never the knife edge), of
    its type and its sign (a leaf left None: of the other's), not below ``rel["low"]``."""
    import math

    mine = None if ll.node(case, path) is None else ll.get(case, arrays, path)
    if type(mine) not in (int, float, type(None)):
        return []
    out: list[Any] = []
    for other in rel.get("to", []):
        w = ll.get(case, arrays, other)
        if type(w) not in (int, float) or not math.isfinite(w):
            continue
        like = w if mine is None else mine  # a leaf left None takes a value of the kind it stands in for
        if type(like) is int:
            tries: list[Any] = [int(w) - 1, int(w), int(w) + 1] if float(w).is_integer() else \
                [math.floor(w), math.ceil(w)]
        else:
            tries = [w / 2, 1.5 * w] if w else []
        low = rel.get("low")
        out += [x for x in tries if x != mine and x not in out and (low is None or x >= low)
                and (type(like) is int or not (like > 0 and x <= 0 or like >= 0 and x < 0))]
    return out


def inputs(plan: dict[str, Any], bases: list[tuple[str, Any, Any]],
           more: list[tuple[str, Any, Any]] | None = None) -> list[dict[str, Any]]:
    """The inputs to try, in order: on each base call and on ``more`` (calls that take other paths), taking
    turns, each leaf alone, near the leaves it meets, and the defaults; then per base call arrays that zero a
    count, random arrays and the arguments never given; then pairs of leaves."""
    out: list[dict[str, Any]] = []
    leaves = plan.get("leaves", {})

    def alone(name: str, case: dict[str, Any], arrays: dict[str, Any]) -> list[dict[str, Any]]:
        specs = [{"base": name, "set": {path: v}} for path, values in leaves.items() for v in values]
        specs += [{"base": name, "set": {path: v}, "blocks": arg, "kind": "blocks"}
                  for path, values in leaves.items() for v in values for arg in blocked(case, arrays, path, v)]
        specs += [{"base": name, "set": {path: v}, "kind": "near"}
                  for path, rel in (plan.get("relative") or {}).items() for v in near(case, arrays, path, rel)]
        specs += [{"base": name, "set": {path: v}, "kind": "dims"}
                  for path in leaves for v in by_dims(case, arrays, path)]
        specs += [{"base": name, "set": {path: to}, "move": [was, to], "kind": "axis"}
                  for path in plan.get("axes") or [] for was, to in other_axes(case, arrays, path)]
        return specs + [{"base": name, "set": {p: v}, "kind": "default"} for p, v in plan.get("defaults", {}).items()]

    # the calls take turns, so that a path only a later call takes (a growth step) is reached within the budget
    blocks = [alone(name, case, arrays) for name, case, arrays in [*bases, *(more or [])]]
    out += [spec for turn in itertools.zip_longest(*blocks) for spec in turn if spec is not None]
    for name, case, arrays in bases:
        # what the body must refuse: an index below zero or at a length, one argument shorter than the others
        out += [{"base": name, "arrays": how, "kind": "refusal"} for how in ("negative", "past")]
        out += [{"base": name, "arrays": "mismatch", "only": a["name"], "kind": "refusal"} for a in case["arguments"]
                if array_key(case, a["name"], arrays) is not None]
        zeros = [{p: v} for p, values in leaves.items() for v in values if type(v) in (int, float) and v == 0]
        for how in (*(("one_zero",) if plan.get("guarded") else ()), "zeros", "sparse", "same", "distinct", "empty",
                    "flipped", "negated", "shifted", *(("ones", "close", "repeated") if plan.get("guarded") else ())):
            # alone, with each leaf at zero (a spread of zero meets ``eps=0``) and in each mode (a timestep of
            # zero whose noise only the large variance shows)
            out += [{"base": name, "arrays": how, "kind": "arrays", "set": s, "guarded": bool(plan.get("guarded"))}
                    for s in [{}, *zeros, *modes(leaves)]]
        out += [{"base": name, "random": seed, "kind": "random"} for seed in range(RANDOM_TRIES)]
        fills = [{"with": w, "bool": b} for b in (False, True)
                 for w in ("random", "ones", *(("zeros",) if plan.get("guarded") else ()))]
        fills += [{"with": "random", "bool": True, "ignore": side} for side in (True, False)]
        for arg, like in unset(case):  # with each default too (``labels=None`` where a mask replaces labels)
            out += [{"base": name, "fill": arg, "like": like, "kind": "fill", "set": s, **fill}
                    for fill in fills
                    for s in [{}, *({p: v} for p, v in plan.get("defaults", {}).items() if p != arg)]]
        out += [{"base": name, "names": a["name"], "kind": "fill"} for a in case["arguments"] if a["value"] is None]
        out += [{"base": name, "none_item": arg, "kind": "none", **drop} for arg in plan.get("none_items") or []
                for drop in ({}, {"drop": True})]
    for name, case, arrays in bases:  # a head count one lower with its arrays, as recorded and drawn anew
        for size, paths in tied_groups(case, arrays, plan.get("tied", [])).items():
            out += [{"base": name, "resize": paths, "to": size - 1, "kind": "resize", **extra}
                    for extra in [{}, *({"random": seed} for seed in range(RANDOM_TRIES))]]
    for name, _, _ in bases:
        for p, q in plan.get("pairs", []):
            for v in leaves.get(p, [])[:2]:
                out += [{"base": name, "set": {p: v, q: w}} for w in leaves.get(q, [])[:2]]
    for name, case, arrays in bases:  # random arrays with each leaf varied (a flag the driver never sets, a clip
        # range left None given one, on data whose ratios reach it)
        out += [{"base": name, "random": 0, "kind": "random", "set": {p: v}}
                for p, values in leaves.items() for v in values]  # every value: the first may be refused
        out += [{"base": name, "random": 0, "kind": "random", "set": {p: v}}
                for p, rel in (plan.get("relative") or {}).items() for v in near(case, arrays, p, rel)[:2]]
    for name, _, _ in bases:  # outside the recorded values: alone and with each flag or option leaf varied
        out += [{"base": name, "soft": True, "kind": "soft", "set": s}
                for s in [{}, *({p: v} for p, values in leaves.items() for v in values[:1])]]
    return out


def unset(case: dict[str, Any]) -> list[tuple[str, str]]:
    """(argument recorded as None, an array argument whose shape to try for it): an optional array the driver
    never passes (``mask=None``)."""
    arrays = [a["name"] for a in case["arguments"] if isinstance(a["value"], dict)
              and a["value"].get("$") == "ndarray"]
    return [(a["name"], like) for a in case["arguments"] if a["value"] is None
            for like in ["rows", "leading", *arrays, "square"]]


IGNORED = -100
"""What the ``ignore`` fill writes into the int arrays where a filled mask leaves entries out: the ignore index
that padded targets carry in research code (any value may sit there; this one is out of every range)."""


def _filled(new: dict[str, Any], inputs: dict[str, Any], arg: str, like: str, spec: dict[str, Any]) -> bool:
    """Give the None argument ``arg`` a 0/1 array (``spec["with"]``: random, all ones or all zeros; of bools
    when ``spec["bool"]``) shaped like argument ``like``, or one entry per row of the first array (``rows``:
    per-sample weights), or per position of the first array's leading axes (``leading``: a padding mask of
    ``(batch, seq, dim)`` vectors), or square (as long as the first array's first axis: a pairwise mask). With
    ``spec["ignore"]`` (True or False), the int arrays of its shape get ``IGNORED`` where the mask holds that
    value: targets a padding mask leaves out, which the function must not read."""
    import numpy as np

    shapes = [inputs[k].shape for a in new["arguments"] if (k := array_key(new, a["name"], inputs)) is not None]
    if not shapes or not shapes[0]:
        return False
    if like == "leading" and len(shapes[0]) < 3:
        return False  # of a matrix, its rows
    shape = (shapes[0][0], shapes[0][0]) if like == "square" else (shapes[0][0],) if like == "rows" else \
        shapes[0][:-1] if like == "leading" else inputs[array_key(new, like, inputs) or ""].shape
    value = spec.get("with", "random")
    filled = np.full(shape, value == "ones") if value != "random" else np.random.default_rng(0).random(shape) < 0.5
    if "ignore" in spec:
        left = filled == bool(spec["ignore"])
        targets = [k for a in new["arguments"] if (k := array_key(new, a["name"], inputs)) is not None
                   and np.issubdtype(inputs[k].dtype, np.integer) and inputs[k].shape == shape]
        if not targets or not left.any():
            return False
        for k in targets:
            inputs[k] = np.where(left, IGNORED, inputs[k]).astype(inputs[k].dtype)
    key = f"fill{len(inputs)}"
    inputs[key] = filled if spec.get("bool") else filled.astype(np.float64)
    return ll.put(new, inputs, arg, {"$": "ndarray", "key": key})


def tied_groups(case: dict[str, Any], arrays: dict[str, Any], tied: list[str]) -> dict[int, list[str]]:
    """The shape-tied int leaves ``tied`` (a head count) by their value in ``case``: the leaves ``_resized``
    changes together."""
    groups: dict[int, list[str]] = {}
    for path in tied:
        value = ll.get(case, arrays, path)
        if type(value) is int:
            groups.setdefault(value, []).append(path)
    return groups


def shape_tuples(case: dict[str, Any], arrays: dict[str, Any]) -> list[str]:
    """Paths of the tuples of ints among the arguments and ``self`` (``self.normalized_shape``) that equal the
    trailing shape of an input array with more axes before them, one of them longer than 1: a shape the driver
    gives at one length only, which ``grown`` lengthens by that axis."""
    inputs = {k: a for k, a in arrays.items() if not k.startswith("out")}
    out = []
    for path in dict.fromkeys(p.rpartition("[")[0] for p in ll.leaves(case, arrays) if p.endswith("]")):
        found = ll.node(case, path)
        items = found.get("items") if isinstance(found, dict) and found.get("$") == "tuple" else None
        if items and all(type(x) is int for x in items) and _longer(inputs, tuple(items)):
            out.append(path)
    return out


def _longer(inputs: dict[str, Any], shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The trailing shapes one axis longer than ``shape`` of the input arrays whose trailing shape it is, that
    axis longer than 1 (``(5, 8)`` for ``(8,)`` of a ``(2, 5, 8)`` input)."""
    return [tuple(a.shape[-len(shape) - 1:]) for a in inputs.values() if shape and getattr(a, "ndim", 0) > len(shape)
            and tuple(a.shape[-len(shape):]) == shape and a.shape[-len(shape) - 1] > 1]


def _grown(new: dict[str, Any], inputs: dict[str, Any], path: str) -> bool:
    """Lengthen the shape tuple at ``path`` by the axis before it in an input array it describes (``(8,)`` of
    an ``(2, 5, 8)`` input becomes ``(5, 8)``), and give the arrays of the old shape (a scale, a shift) the new
    one, their copies along the new axis made unlike each other; False when nothing fits."""
    import numpy as np

    found = ll.node(new, path)
    old = tuple(found["items"]) if isinstance(found, dict) and found.get("$") == "tuple" else ()
    longer = _longer(inputs, old)
    if not longer:
        return False
    found["items"] = list(longer[0])
    rng = np.random.default_rng(3)
    for key, a in list(inputs.items()):
        if isinstance(a, np.ndarray) and a.shape == old:
            spread = rng.normal(size=longer[0]) * 0.1 * max(float(np.abs(a).max()), 1.0) \
                if np.issubdtype(a.dtype, np.floating) else 0
            inputs[key] = (np.broadcast_to(a, longer[0]) + spread).astype(a.dtype)
    return True


def blocked(case: dict[str, Any], arrays: dict[str, Any], path: str, value: Any) -> list[str]:
    """The array arguments whose rows come in blocks of the int leaf ``path`` (rows = crops x batch, the
    leaf's recorded value dividing their first axis), where ``value`` is a smaller count of blocks: each is cut to
    that many blocks in its own input (``_blocks``), the call a caller with fewer crops makes. None where the
    smaller count falls below another int leaf the call held it above (fewer crops than global crops)."""
    import numpy as np

    old = ll.get(case, arrays, path)
    if type(old) is not int or type(value) is not int or not 1 <= value < old:
        return []
    if any(type(v) is int and old > v > value for p, v in ll.leaves(case, arrays).items() if p != path):
        return []  # fewer crops than global crops: a count below another that the call held it above
    out = []
    for a in case["arguments"]:
        key = array_key(case, a["name"], arrays)
        arr = arrays.get(key) if key is not None else None
        if isinstance(arr, np.ndarray) and arr.ndim and arr.shape[0] > old and arr.shape[0] % old == 0:
            out.append(a["name"])
    return out


def _blocks(new: dict[str, Any], inputs: dict[str, Any], arg: str, old: Any, size: int) -> bool:
    """Cut the rows of ``arg`` from ``old`` blocks to ``size``."""
    key = array_key(new, arg, inputs)
    arr = inputs.get(key) if key is not None else None
    if type(old) is not int or key is None or arr is None or arr.shape[0] % old:
        return False
    inputs[key] = arr[: arr.shape[0] // old * size].copy()
    return True


def _resized(new: dict[str, Any], inputs: dict[str, Any], paths: list[str], size: int) -> bool:
    """Set the shape-tied int leaves ``paths`` (one value, a head count) to ``size``, below it, and cut every
    input array's axes of their old length to ``size`` (rows that summed to 1 made to again): the call a caller
    with fewer heads makes. False when the leaves differ or no array has such an axis."""
    import numpy as np

    olds = {ll.get(new, inputs, p) for p in paths}
    old = olds.pop() if len(olds) == 1 else None
    if type(old) is not int or not 1 <= size < old:
        return False
    cut = False
    for key, a in list(inputs.items()):
        if isinstance(a, np.ndarray) and old in a.shape:
            was = domain(a) if np.issubdtype(a.dtype, np.floating) else []
            a = a[tuple(slice(0, size) if d == old else slice(None) for d in a.shape)]
            if DISTRIBUTIONS in was and a.shape[-1] > 0:
                a = a / a.sum(axis=-1, keepdims=True)
            inputs[key] = np.ascontiguousarray(a)
            cut = True
    return cut and all(ll.put(new, inputs, p, size) for p in paths)


def _named(new: dict[str, Any], arg: str) -> bool:
    """Give the None argument ``arg`` a list of the first key of each dict argument keyed by text: names the body
    may leave out or treat apart (``exclude=["fc1.weight"]`` beside ``params``)."""
    keys = [items[0][0] for a in new["arguments"] if (items := ll.dict_items(a["value"]))
            and isinstance(items[0][0], str)]
    spot = [a for a in new["arguments"] if a["name"] == arg and a["value"] is None]
    if keys and spot:
        spot[0]["value"] = keys
    return bool(keys and spot)


def _none_item(new: dict[str, Any], arg: str, drop: bool = False) -> bool:
    """The first item of the list argument ``arg`` (or value of the dict) made None: a parameter with no gradient;
    with ``drop``, the dict's first key left out instead (a gradient missing from ``grads``)."""
    for value in (a["value"] for a in new["arguments"] if a["name"] == arg):
        items = ll.dict_items(value) or value
        if isinstance(items, list) and len(items) > 1 and (items is not value or not drop):
            if drop:  # nor is anything held there any more
                key = items.pop(0)[0]
                new["held"] = [e for e in new.get("held") or [] if e["path"][:2] != [arg, key]]
            else:
                items[0] = None if items is value else [items[0][0], None]
            return True
    return False


def build(spec: dict[str, Any], case: dict[str, Any], arrays: dict[str, Any]) -> tuple[Any, Any] | None:
    new = json.loads(json.dumps(case))
    inputs = {k: a for k, a in arrays.items() if not k.startswith("out")}
    for path, value in spec.get("set", {}).items():
        if not ll.put(new, inputs, path, value):
            return None
    if "blocks" in spec:  # ``case`` still holds the count the rows came in
        path, value = next(iter(spec["set"].items()))
        if not _blocks(new, inputs, spec["blocks"], ll.get(case, arrays, path), int(value)):
            return None
    if "resize" in spec and not _resized(new, inputs, spec["resize"], int(spec["to"])):
        return None
    if "grow" in spec and not _grown(new, inputs, spec["grow"]):
        return None
    if "mix" in spec and not _mixed(new, inputs, spec["mix"], spec["values"]):
        return None
    if "move" in spec and not moved(new, inputs, *spec["move"]):
        return None
    if "rank" in spec and not _ranked(new, inputs, spec["rank"]):
        return None
    if "retype" in spec and not _retyped(new, inputs, spec["retype"]):
        return None
    if "names" in spec and not _named(new, spec["names"]):
        return None
    if "none_item" in spec and not _none_item(new, spec["none_item"], bool(spec.get("drop"))):
        return None
    if spec.get("spaced") and not _spaced(new):
        return None
    if "unbatch" in spec and not _unbatch(new, inputs, int(spec["unbatch"])):
        return None
    if "rename" in spec:
        value = ll.get(new, inputs, spec["rename"][0])
        if value is ll.MISSING or not ll.remove(new, spec["rename"][0]) or not ll.put(new, inputs,
                                                                                      spec["rename"][1], value):
            return None
    if "arrays" in spec:
        filled = arrays_filled(new, inputs, spec["arrays"], bool(spec.get("guarded")), spec.get("only"))
        if not filled:
            return None
        inputs.update(filled)
    if "fill" in spec and (spec["like"] not in ("square", "rows", "leading")
                           and array_key(new, spec["like"], inputs) is None
                           or not _filled(new, inputs, spec["fill"], spec["like"], spec)):
        return None
    if "soft" in spec:
        softened = _softened(new, inputs)
        if not softened:
            return None
        inputs.update(softened)
    if "random" in spec:
        drawn = _random_arrays(new, inputs, int(spec["random"]))
        if not drawn:
            return None
        inputs.update(drawn)
    return new, {**arrays, **inputs}
