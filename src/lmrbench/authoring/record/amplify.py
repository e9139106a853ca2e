"""What recorded calls tell apart: the scalar parameters they vary or never vary, the values to vary a parameter
over, and the special values a call holds (masked targets, zeros, empty batches).

A parameter the recording never varies (``beta`` always 0.1) lets a wrong answer that ignores it pass; the
recording then adds cases with the parameter varied (``lmrbench_probe`` runs them on the golden code).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lmrbench.authoring.record.case_files import read_case
from lmrbench.authoring.record.recorded_call import RecordedCall, Scalar
from lmrbench.runtime import lmrbench_leaves as ll

MAX_VALUES = 4
"""Most new values of one parameter."""
MAX_INT_VALUES = 5
"""Most new values of one int parameter (a sign change, zero, a value inside its array's range, +-1)."""


def _scalar(node: Any) -> bool:
    return type(node) in (bool, int, float)


def _under(path: str, reads: Collection[str]) -> bool:
    """True when the body reads ``path`` or a path it lies under (``self.cfg`` passed whole)."""
    return path in reads or any(path.startswith(r) and path[len(r)] in ".[" for r in reads if len(path) > len(r))


def scalar_arguments(path: Path | str, also: Collection[str] = ()) -> dict[str, Scalar]:
    """The arguments of a case file that are plain bools, ints or floats, by name; the text ones named in
    ``also`` (a mode the body compares with literals); and the leaves at any depth of the arguments and of
    ``self`` that ``also`` reads (``self.beta``, ``self.cfg.loss.gamma``, ``cfg["beta"]``: ``lmrbench_leaves``)."""
    case, arrays = read_case(path)
    top = {a["name"] for a in case["arguments"]}
    out: dict[str, Scalar] = {}
    for name, value in ll.leaves(case, arrays).items():
        if name in top:
            if _scalar(value) or (name in also and type(value) is str):
                out[name] = value
        elif _under(name, also):
            out[name] = value
    return out


def leaf_values(calls: Sequence[RecordedCall | Path]) -> dict[str, list[Scalar]]:
    """Every scalar, text and flag leaf of the calls' arguments and recorded ``self`` state, at any depth, by its
    access path as written in Python (``gamma``, ``self.cfg.loss.gamma``, ``self.config["beta"]``), with its
    distinct values over the calls in the order first seen: what mutants may pin and notes name (``calls``:
    recorded calls, or their case files)."""
    seen: dict[str, list[Scalar]] = {}
    for call in calls:
        case, arrays = read_case(call if isinstance(call, Path) else call.path)
        for name, value in ll.leaves(case, arrays).items():
            known = seen.setdefault(name, [])
            if not any(type(v) is type(value) and v == value for v in known):
                known.append(value)
    return seen


def parameter_values(paths: list[Path], also: Collection[str] = ()) -> dict[str, list[Scalar]]:
    """Each scalar parameter's distinct values over the calls, in the order first seen (``also``: as for
    ``scalar_arguments``)."""
    seen: dict[str, list[Scalar]] = {}
    for path in paths:
        for name, value in scalar_arguments(path, also).items():
            known = seen.setdefault(name, [])
            if not any(type(v) is type(value) and v == value for v in known):
                known.append(value)
    return seen


def value_text(value: Scalar | None) -> str:
    """A value as Python source (``0.1``, ``True``, ``-100``)."""
    return repr(value)


def _round(x: float) -> float:
    return float(f"{x:.6g}")


def varied_values(value: Scalar, inside: Collection[int] = ()) -> list[Scalar]:
    """Values to vary a parameter over, around the one value the recording used.

    A flag: its opposite. An int: the values ``inside`` the range of an array that holds it (``ignore_index``
    among the class ids), its sign changed, zero, one more and one less, one. A float ``v``: ``v/2, 2v, 3v, 5v``
    (beta 0.1 gives 0.05-0.5), kept below 1 when ``v`` is (a probability, a smoothing), with 0.1-0.3 for 0.0,
    and 1e4, 1 and 0 of its sign for an infinite one (a filter value, a cap left off).
    Text: nothing (its values come from the literals the body compares it with).
    """
    if type(value) is bool:
        return [not value]
    if type(value) is str:
        return []
    if type(value) is int:
        out: list[Scalar] = []
        for x in (*inside, -value if value else 1, 0, value + 1, value - 1, 1):
            if x != value and x not in out:
                out.append(x)
        return out[:MAX_INT_VALUES]
    v = float(value)
    if v == 0.0:
        return [0.1, 0.2, 0.3]
    if not math.isfinite(v):  # a sentinel (``filter_value=-inf``, no cap at ``inf``): finite values of its sign
        return [0.0] if math.isnan(v) else [math.copysign(1e4, v), math.copysign(1.0, v), 0.0]
    floats = [_round(v / 2), _round(2 * v), _round(3 * v), _round(5 * v)]
    if abs(v) < 1:
        floats = [x for x in floats if abs(x) < 1]
        if len(floats) < 2:
            floats.append(_round((v + (1 if v > 0 else -1)) / 2))
    return list(floats[:MAX_VALUES])


def recorded_text(param: str, recorded: list[Scalar]) -> str:
    """``beta was always 0.1``, ``mode took 'mean', 'max'``: what the recording gave a parameter."""
    if len(recorded) == 1:
        return f"{param} was always {value_text(recorded[0])}"
    return f"{param} took {', '.join(value_text(v) for v in recorded)}"


def range_text(values_: list[Scalar]) -> str:
    """``0.05-0.5``, ``True``, ``-99, -101``; a value tried on several calls is named once."""
    if all(type(v) is float for v in values_) and len(values_) > 2:
        return f"{min(values_)}-{max(values_)}"  # type: ignore[type-var]
    return ", ".join(dict.fromkeys(value_text(v) for v in values_))


def _arrays_of(node: Any, arrays: dict[str, np.ndarray]) -> np.ndarray | None:
    if isinstance(node, dict) and node.get("$") in ("ndarray", "tensor") and node.get("key") in arrays:
        return arrays[node["key"]]
    return None


def special_values(path: Path | str) -> list[str]:
    """What is special in a call's array arguments: an empty batch, all zeros, entries equal to an int
    argument or an int leaf of ``self`` at any depth (``targets holds ignore_index``, ``labels holds
    self.ignore_index``), negative ids, a boolean mask that leaves entries out."""
    case, arrays = read_case(path)
    ints = {name: value for name, value in ll.leaves(case, arrays).items() if type(value) is int}
    out: list[str] = []
    for a in case["arguments"]:
        arr = _arrays_of(a["value"], arrays)
        if arr is None:
            continue
        name = a["name"]
        if arr.size == 0:
            out.append(f"{name} is empty")
            continue
        if arr.dtype == np.bool_:
            if not arr.all():
                out.append(f"{name} leaves entries out")
            continue
        if np.issubdtype(arr.dtype, np.number) and not np.any(arr):
            out.append(f"{name} is all zeros")
        if np.issubdtype(arr.dtype, np.integer):
            hits = [p for p, v in ints.items() if np.any(arr == v)]
            if hits:
                out += [f"{name} holds {p}" for p in hits]
            elif np.any(arr < 0):
                out.append(f"{name} has negative entries")
    return out


def inside_values(paths: list[Path], holder_names: list[str], param: str) -> list[int]:
    """A value inside the range of the arrays that hold an int parameter's value (the middle one of their other
    entries): ``ignore_index`` 2 among class ids 0-4, so that ``targets < 0`` is not the same as the answer."""
    found: set[int] = set()
    for path in paths:
        case, arrays = read_case(path)
        value = ll.get(case, arrays, param)
        for a in case["arguments"]:
            arr = _arrays_of(a["value"], arrays) if a["name"] in holder_names else None
            if arr is not None and np.issubdtype(arr.dtype, np.integer):
                found.update(int(v) for v in np.unique(arr) if v != value)
    ordered = sorted(found)
    return [ordered[len(ordered) // 2]] if ordered else []


def holders(paths: list[Path], param: str) -> list[str]:
    """Array arguments that hold an int parameter's value in some call (``targets`` holds ``ignore_index``):
    varying the parameter varies those entries with it."""
    suffix = f" holds {param}"
    found = {s.removesuffix(suffix) for p in paths for s in special_values(p) if s.endswith(suffix)}
    return sorted(found)


MAX_PAIRS = 4
"""Most added cases that combine a flag with another parameter's value."""


def missing_pairs(paths: list[Path]) -> list[tuple[str, Scalar, dict[str, Scalar]]]:
    """(param, value, {flag: flag value}): a flag the calls set away from its first value, never together with a
    value another parameter takes elsewhere (``reference_free=True`` only with ``label_smoothing=0.0``, though
    0.2 was tried too): a case combining them is worth adding."""
    calls = [scalar_arguments(p) for p in paths]
    seen = parameter_values(paths)
    out: list[tuple[str, Scalar, dict[str, Scalar]]] = []
    for flag, flag_values in seen.items():
        if len(flag_values) < 2 or type(flag_values[0]) is not bool:
            continue
        other = flag_values[1]
        for param, values_ in seen.items():
            if param == flag or len(values_) < 2:
                continue
            for value in values_[1:]:
                if not any(c.get(flag) == other and c.get(param) == value for c in calls) and len(out) < MAX_PAIRS:
                    out.append((param, value, {flag: other}))
    return out


def varying_guidance(params: list[str]) -> str:
    """What makes hand-written cases tell right from wrong (a scaffold's header): every parameter varied,
    special values included."""
    vary = ", ".join(f"`{n}`" for n in dict.fromkeys(params))
    return (
        f"Make the cases tell right from wrong: give every parameter ({vary}) at least two values over the "
        "cases, so that an answer that ignores one or pins it to its usual value fails; include the special "
        "values the function handles (masked or ignored targets, zeros, an empty batch, each flag both ways). "
        "`lmrbench validate` runs mutants shaped like such mistakes (a parameter pinned, a mask dropped, a mean "
        "for a sum, a branch removed) and calls the tests weak when one that pins a parameter survives."
    )


def tied_to_shapes(paths: list[Path], names: Collection[str]) -> set[str]:
    """Of ``names`` (parameters, ``self.<attr>``, paths), those whose recorded value is an int above 1 that equals
    a dimension of an input array (an argument or an attribute) of the same call in every recorded case
    (``n_heads``, ``self.num_classes``): tied to the arrays' shapes, so no case can vary it alone (a varied head
    count against arrays of the recorded heads is a call no caller makes), and naming it as unvaried helps no
    one."""

    tied = set(names)
    for path in paths:
        if not tied:
            break
        try:
            case, arrays = read_case(path)
            values = scalar_arguments(path, [n for n in tied if "." in n or "[" in n])
        except (OSError, ValueError, KeyError):
            return set()
        inputs = _array_keys([case.get("arguments"), case.get("self")])
        dims = {d for key, a in arrays.items() if key in inputs for d in getattr(a, "shape", ())}
        tied = {n for n in tied if _dimension(values.get(n), dims)}
    return tied if paths else set()


def _array_keys(node: object) -> set[str]:
    """The keys of the arrays a case's JSON nodes refer to (the inputs' arrays, not the expected result's)."""
    if isinstance(node, dict):
        own = {node["key"]} if node.get("$") in ("ndarray", "tensor") and isinstance(node.get("key"), str) else set()
        return own.union(*(_array_keys(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_array_keys(v) for v in node))
    return set()


def _dimension(value: object, dims: set[int]) -> bool:
    return type(value) is int and value > 1 and value in dims
