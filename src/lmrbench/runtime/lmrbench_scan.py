"""Inputs a recorded driver never gives, tried on the golden code after amplification whatever mutants live
(``lmrbench_probe`` runs the scan; the search only looks where a mutant lives): the plan's leaf values on which
the golden code refuses the call by a ``raise`` of its own file (an unknown mode: a case that
expects the exception, ``lmrbench_raising``), and the recorded arrays with their padding moved to the other end
(``flipped``: a driver pads one way only, and a program that finds the last token by counting passes on it);
where the body calls ``exp`` and its result does not move when they shift (a softmax, a normalisation), shifted
far from zero (``shifted``: where an unguarded ``exp`` overflows; each float array alone first, since an
upstream gradient or a weight beside the logits changes the result when it shifts; a shift that changes the
result would test another function, where a correct program may lose precision the golden code keeps); where
the body guards a value, with a spread below an ``eps`` (``close``: where a guard that compares with ``eps``
instead of zero differs), and where the guard binds (``zeros``, ``same``, ``distinct``, ``lone``, ``repeated``,
``one_zero``: a count of zero, no pair of equal labels, no other label, one label alone, collapsed embeddings, a
class without samples; the guard says the function takes such inputs, and answers that drop it fail whether or
not a mutant lives). Each array is
varied alone first, then all at once. Where the body calls a form that stays finite at large magnitudes
(``log1p``, ``logaddexp``), float arrays scaled to magnitudes of 60 and of 1e4, in each mode; where it checks for
non-finite values (``isfinite``), one entry nan, and one inf. Last, the shapes and mixes a
driver never gives (``_reshaped``). Each is kept when the golden result is finite, keeps to the recorded arrays'
domain and is no knife edge.
"""

from __future__ import annotations

from typing import Any

import lmrbench_checkers as lc
import lmrbench_input_text as lit
import lmrbench_search as ls
import lmrbench_values as lv
import lmrbench_variations as lvar
from lmrbench_raising import deliberate, last_traceback, raising_case

MAX_CALLS = 40
"""Most golden calls the scan for refusals makes per goal function."""


def scan(golden: Any, t: dict[str, Any], cases: list[tuple[str, Any, Any]], out: str,
         index: int) -> list[dict[str, Any]]:
    """Write the cases of the scan (``scan-<t>-<k>.npz`` in ``out``); their entries (kind ``scan``)."""
    bases = ls.recorded_bases(cases)
    recorded = ls.recorded_calls(cases)
    allowed = ls.allowed_nonfinite(t, recorded)  # decoded once, not per input
    made = _refusals(golden, t, bases, out, index)
    plan = t.get("search") or {}
    guarded = bool(plan.get("guarded"))
    modes = lvar.modes(plan.get("leaves") or {})
    named = [s for s in modes if "unknown" not in s.values()]  # the modes the body names, not its fallback
    hows = [("flipped", {}), *((("shifted", {}),) if plan.get("exponentiates") else ()),
            *(((h, s) for h in ("scaled", "huge") for s in [{}, *modes]) if plan.get("stable") else ()),
            *(((h, {}) for h in ("nan", "inf")) if plan.get("checks_finite") else ()),
            *((("neginf", {}),) if plan.get("banned") else ()),
            *((h, {}) for h in (("close", "zeros", "same", "distinct", "lone", "repeated", "one_zero") if guarded
                                else ())),
            # a count made zero in each mode (a norm by the longest response, where none is left; a last timestep
            # of 0 where only the large variance shows its noise)
            *((h, s) for h in ("zeros", "one_zero") for s in (named if guarded else []))]
    for how, sets in hows:
        # a nan or an inf from every recorded call in turn: the first ones of a run may have overflowed already
        for name, case, arrays in recorded if how in ("nan", "inf") else bases:
            # each array alone, then all at once (logits shift where an upstream gradient may not; embeddings all
            # equal while the labels still pair them)
            alone = [a["name"] for a in case["arguments"] if lvar.array_key(case, a["name"], arrays) is not None]
            if how in ("zeros", "one_zero") and sets:  # in a mode: the masks and counts, not the logits
                alone = [n for n in alone if _counts(arrays[lvar.array_key(case, n, arrays)])]
            entry = None
            for only in (*alone, None):
                spec = {"base": name, "arrays": how, "kind": "arrays", "set": sets, "guarded": guarded, "only": only}
                entry = _varied(golden, spec, case, arrays, out, f"scan-{index}-{len(made)}.npz", allowed)
                if entry is not None:
                    break
            if entry is not None:
                made.append(entry)
                break
    made += _reshaped(golden, t, bases, cases, allowed, out, index, len(made))
    return made


def _counts(arr: Any) -> bool:
    """True for an int or bool array, or a float one of zeros and ones only: a mask or a count."""
    import numpy as np

    return isinstance(arr, np.ndarray) and (not np.issubdtype(arr.dtype, np.floating) or lvar.is_mask(arr))


def _reshaped(golden: Any, t: dict[str, Any], bases: list[tuple[str, Any, Any]],
              all_cases: list[tuple[str, Any, Any]], allowed: set[str], out: str, index: int,
              start: int) -> list[dict[str, Any]]:
    """One case per shape or mix the recorded calls never vary: the shape-tied leaves of one value (a head count)
    one lower and 1, their arrays cut with them; each shape tuple one axis longer (``lvar.shape_tuples``); an int array
    that is one value in every call (a timestep for the whole batch) mixing the values of ``all_cases``; an array
    whose rank the body reads given one more axis; a bool array the body converts to numbers given as 0/1 ints;
    text arguments with their spaces doubled, where the body splits text on runs of whitespace (``str.split()``);
    one item of the batch without its batch axis, where the docstring names such a form (``[T, B] (or [T] for one
    environment)``) and the golden code gives what the batch gave that item; a setting given under the legacy key
    the body falls back to (``type`` for ``rope_type``).
    From the first recorded call where each applies."""
    made: list[dict[str, Any]] = []
    plan = t.get("search") or {}
    tied = list(plan.get("tied", []))
    done: set[str] = set()
    for name, case, arrays in bases:
        specs = [{"base": name, "resize": paths, "to": to, "kind": "resize"}  # one lower, and one (one head)
                 for size, paths in lvar.tied_groups(case, arrays, tied).items() for to in dict.fromkeys([size - 1, 1])]
        specs += [{"base": name, "grow": path, "kind": "grow"} for path in lvar.shape_tuples(case, arrays)]
        specs += [{"base": name, "mix": arg, "values": values, "kind": "mix"}
                  for arg, values in lvar.mixed(case, arrays, all_cases).items()]
        specs += [{"base": name, "rank": arg, "kind": "rank"} for arg in plan.get("any_rank", [])]
        specs += [{"base": name, "retype": arg, "kind": "retype"}
                  for arg in plan.get("converts", [])]
        specs += [{"base": name, "spaced": True, "kind": "spaced"}] if plan.get("splits") else []
        specs += [{"base": name, "rename": pair, "kind": "rename"}
                  for pair in plan.get("renames", [])]
        specs += [{"base": name, "unbatch": axis, "kind": "unbatch"}
                  for axis in ((-1, 0) if plan.get("unbatched") else ())]
        for spec in specs:
            what = lit.input_text(spec)
            if what in done:
                continue
            entry = _varied(golden, spec, case, arrays, out, f"scan-{index}-{start + len(made)}.npz", allowed)
            if entry is not None:
                made.append(entry)
                done.add(what)
    return made


def _continuous(golden: Any, spec: dict[str, Any], case: dict[str, Any], arrays: dict[str, Any],
                result: Any) -> bool:
    """True when the golden code gives on the arrays made all equal (``spec``) what it gave (``result``) on them
    within a millionth of equal: a spread below an ``eps`` changes nothing a guard decides."""
    built = lvar.build(spec, case, arrays)
    if built is None:
        return True
    try:
        flat, _, _ = golden.call(*built)
    except (Exception, ls.Timeout):  # noqa: BLE001 - refused: the close case tells
        return False
    return _close(golden, result, flat, lv.Case(*built))


def _close(golden: Any, result: Any, expected: Any, case: Any) -> bool:
    """True when ``result`` matches ``expected`` within the tolerance the test gives ``case``."""
    try:
        lc.assert_close(result, expected, **ls.tolerance(golden.checker, case))
    except (Exception, ls.Timeout):  # noqa: BLE001 - another result, or one the comparison cannot take
        return False
    return True


def _varied(golden: Any, spec: dict[str, Any], case: dict[str, Any], arrays: dict[str, Any], out: str,
            file: str, allowed: set[str]) -> dict[str, Any] | None:
    """The entry of the case of one array variation, or None when it does not apply, the golden code fails or
    gives a kind of non-finite value outside ``allowed`` (those the recorded results hold), or the case is a knife
    edge."""
    built = lvar.build(spec, case, arrays)
    if built is None or lvar.departs(case, arrays, built[1]):
        return None  # outside what the recorded calls pass (probabilities no longer summing to 1)
    try:
        result, new, new_arrays, _ = ls.golden_case(golden, *built)
        if ls.outside(result, allowed):
            return None
        if ls.unstable(golden, new, new_arrays, result, lv.Case(new, new_arrays)):
            return None
        if spec.get("arrays") == "close" and _continuous(golden, {**spec, "arrays": "same"}, case, arrays, result):
            return None
        base = lv.Case(case, arrays)
        if spec.get("arrays") == "shifted" and not _close(golden, result, base.expected, base):
            return None  # the shift changes what the function computes: only its numerics are tested here
        if "unbatch" in spec:  # one item alone gives what the batch gave it, or it is no form the function takes
            axis = int(spec["unbatch"])
            size = lvar.batch_size(case, arrays, axis)
            if not _close(golden, result, lvar.unbatched(base.expected, axis, size), base):
                return None
    except (Exception, ls.Timeout):  # noqa: BLE001 - an input the golden code refuses is no case here
        return None
    return ls.saved_case(out, file, new, new_arrays, spec, "scan")


def _refusals(golden: Any, t: dict[str, Any], bases: list[tuple[str, Any, Any]], out: str,
              index: int) -> list[dict[str, Any]]:
    """Try the plan's leaf values (no array changed) on the golden code; write one case per distinct exception
    and raising line . Returns their entries, as ``lmrbench_search.search`` makes them."""
    by_name = {name: (case, arrays) for name, case, arrays in bases}
    made: list[dict[str, Any]] = []
    seen: set[tuple[str, int]] = set()
    calls = 0
    for spec in lvar.inputs(t.get("search") or {}, bases):
        if set(spec) - {"base", "set", "kind"} or spec.get("kind", "value") != "value" or calls >= MAX_CALLS:
            continue
        built = lvar.build(spec, *by_name[spec["base"]])
        if built is None:
            continue
        calls += 1
        try:
            golden.call(*built)
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            name = deliberate(exc, golden.func)
            tb = last_traceback(exc)
            where = (name, tb.tb_lineno if tb is not None else 0)
            if not name or where in seen:
                continue
            seen.add(where)
            new, new_arrays = raising_case(built[0], built[1], name)
            made.append(ls.saved_case(out, f"scan-{index}-{len(made)}.npz", new, new_arrays, spec, "scan"))
    return made
