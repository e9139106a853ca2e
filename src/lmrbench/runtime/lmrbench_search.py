"""Calls of the golden code and of its mutants on recorded and varied inputs, compared exactly as the generated
test compares, and the search for an input that kills a mutant the kept cases miss (``lmrbench_probe`` runs it).

The search (``search``) varies the recorded calls by the host's plan (``"search"`` of a probe target): each
scalar leaf alone (``self.cfg.loss.gamma``), pairs of leaves, boundary values the body compares with
(``w - 1, w, w + 1``), a default the driver never leaves (``labels=None``), int and bool arrays made all zero,
all equal or all distinct (a count that becomes zero), and random inputs of the recorded shapes. An input kills
a mutant when the golden code runs on it and the mutant's result fails the test's comparison (or raises); it
becomes a case only when it is stable: a one-ulp move of its float inputs, and breaking the ties among their
equal entries either way, leave the golden result within the test's tolerance (a correct program that breaks a
tie otherwise must pass). A mutant no input separates is live; it is equivalent only when the random inputs
were tried too.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import time
import types
from typing import Any

import lmrbench_checkers as lc
import lmrbench_leaves as ll
import lmrbench_values as lv

MAX_TRIED = 120
"""Most inputs the search tries per goal function."""
RANDOM_TRIES = 3
"""Random inputs of the recorded shapes tried per base call."""


class Timeout(Exception):
    """A call ran past its limit."""


def on_alarm(signum: int, frame: Any) -> None:
    raise Timeout()


class Target:
    """One goal function as the probe calls it: the function, its class, how it is bound, the factory of its
    instance, the limit of one call and the test's checker."""

    def __init__(self, func: Any, owner: Any, binding: str, factory: Any, timeout: float,
                 checker: dict[str, Any]) -> None:
        self.func, self.owner, self.binding, self.factory = func, owner, binding, factory
        self.timeout, self.checker = timeout, checker

    def with_func(self, func: Any, owner: Any) -> Target:
        return Target(func, owner, self.binding, self.factory, self.timeout, self.checker)

    def call(self, case: dict[str, Any], arrays: dict[str, Any]) -> tuple[Any, Any, Any]:
        """Call on a fresh decoding of the case: (result, decoded case, instance)."""
        decoded = lv.Case(case, arrays)
        if decoded.random_state:
            decoded.restore_random_state()
        obj = None
        signal.setitimer(signal.ITIMER_REAL, self.timeout)
        try:
            if self.binding == "method":
                obj = decoded.instance(self.owner, self.factory)
                result = self.func(obj, *decoded.args, **decoded.kwargs)
            elif self.binding == "classmethod":
                result = self.func(self.owner, *decoded.args, **decoded.kwargs)
            else:
                result = self.func(*decoded.args, **decoded.kwargs)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        return result, decoded, obj

    def same(self, result: Any, decoded: Any, obj: Any, want: Any = None) -> bool:
        """``same`` with this target's checker."""
        return same(self.checker, result, decoded, obj, want)


def tolerance(checker: dict[str, Any], decoded: Any) -> dict[str, Any]:
    """The tolerance arguments the generated test passes: RTOL/ATOL as written, or the case's scale."""
    if checker.get("tolerance", "explicit") == "explicit":
        return {"rtol": checker.get("rtol", 1e-5), "atol": checker.get("atol", 1e-8)}
    return {"scale": decoded.scale}


def same(checker: dict[str, Any], result: Any, decoded: Any, obj: Any, want: Any = None) -> bool:
    """True when the result (and what the call changed) matches the case ``want`` (default ``decoded``) exactly
    as the generated test compares: the task's checker with its tolerance on the result, the same tolerance on
    the arguments changed in place and on ``self``."""
    want = decoded if want is None else want
    kind = checker.get("kind", "numeric")
    tol = tolerance(checker, want)
    side = lc.assert_equal if kind == "exact" else functools.partial(lc.assert_close, **tol)
    try:
        if kind == "exact":
            lc.assert_equal(result, want.expected)
        elif kind == "unordered":
            lc.assert_unordered(result, want.expected, **tol)
        elif kind == "text":
            lc.assert_similar_text(result, want.expected, threshold=checker.get("text_threshold", 0.9), **tol)
        else:
            lc.assert_close(result, want.expected, **tol)
        for name, expected in want.changed.items():
            side(decoded.argument(name), expected, where=f"argument `{name}`")
        if want.state_after is not None and obj is not None:
            side(want.attributes_of(obj), want.state_after, where="self")
    except AssertionError:
        return False
    return True


def array_key(case: dict[str, Any], name: str, arrays: dict[str, Any]) -> str | None:
    """The array key of an argument (or leaf) that is an array, else None."""
    found = ll.node(case, name)
    if isinstance(found, dict) and found.get("$") in ("ndarray", "tensor") and found.get("key") in arrays:
        return str(found["key"])
    return None


def float_keys(case: dict[str, Any], arrays: dict[str, Any]) -> list[str]:
    """The keys of the floating numpy array arguments of a case."""
    import numpy as np

    keys = [array_key(case, a["name"], arrays) for a in case["arguments"]]
    return [k for k in keys if k is not None and isinstance(arrays[k], np.ndarray)
            and np.issubdtype(arrays[k].dtype, np.floating)]


def nudged(array: Any, up: bool) -> Any:
    """``array`` with every entry but 0, +-1 and non-finite ones moved one ulp, all the same way: equal entries
    stay equal and the order stays (a tie is no knife edge)."""
    import numpy as np

    flat = array.ravel()
    steady = (flat == 0) | (np.abs(flat) == 1) | ~np.isfinite(flat)
    moved = np.nextafter(flat, np.array(np.inf if up else -np.inf, dtype=array.dtype))
    return np.where(steady, flat, moved).reshape(array.shape).astype(array.dtype)


def untied(array: Any, first_up: bool) -> Any:
    """``array`` with the ties among its equal finite entries broken by a few ulps (the later ones up, or the
    earlier ones), or None when it has none. Zeros and +-1 stay unless the whole array is one other value
    (all-equal logits are a tie; a 0/1 mask, all zeros or all ones included, is not)."""
    import numpy as np

    flat = array.ravel().astype(array.dtype)
    if flat.size < 2:
        return None
    constant = bool(np.all(flat == flat[0])) and flat[0] != 0 and abs(flat[0]) != 1  # all zeros: a mask, no tie
    order = np.argsort(flat, kind="stable")
    ranked = flat[order]
    start = np.r_[True, ranked[1:] != ranked[:-1]]
    rank = np.arange(flat.size) - np.maximum.accumulate(np.where(start, np.arange(flat.size), 0))
    if not rank.any():
        return None
    step = np.empty_like(flat)
    step[order] = rank if first_up else -rank
    movable = np.isfinite(flat) & (constant | ((flat != 0) & (np.abs(flat) != 1)))
    unit = np.spacing(np.maximum(np.abs(flat), np.finfo(flat.dtype).eps)).astype(flat.dtype)
    out = np.where(movable, flat + step * unit * 4, flat).astype(array.dtype)
    return None if np.array_equal(out, flat) else out.reshape(array.shape)


def unstable(target: Target, case: dict[str, Any], arrays: dict[str, Any], result: Any, obj_case: Any) -> str:
    """Why a case whose golden result is ``result`` is no fair test ('' when it is fair): a one-ulp move of its
    float inputs, or breaking the ties among their equal entries, changes the golden result beyond the test's
    tolerance."""
    keys = float_keys(case, arrays)
    moves: list[tuple[str, dict[str, Any]]] = []
    for up in (True, False):
        moves.append(("a one-ulp move of its float inputs", {k: nudged(arrays[k], up) for k in keys}))
    for first in (True, False):
        broken = {k: b for k in keys if (b := untied(arrays[k], first)) is not None}
        if broken:
            moves.append(("breaking a tie among equal inputs", broken))
    for why, changed in moves:
        if not changed:
            continue
        try:
            moved, decoded, obj = target.call(case, {**arrays, **changed})
        except (Exception, Timeout):  # noqa: BLE001 - a move that raises is as unstable as one that changes
            return why
        if not target.same(moved, decoded, obj, obj_case):
            return why
    return ""


def golden_case(target: Target, case: dict[str, Any], arrays: dict[str, Any]) -> tuple[Any, Any, Any, Any]:
    """(result, the case with the golden code's expected values, their arrays, the instance after the call);
    raises when the golden code fails on it or is not repeatable. The arguments it changes and ``self`` after
    it are kept like a recorded call's."""
    result, decoded, obj = target.call(case, arrays)
    again, _, _ = target.call(case, arrays)
    lc.assert_equal(again, result)
    enc = lv.Encoder("out")
    new = {**case, "expected": enc.encode(result, "the return value")}
    if case.get("changed"):
        new["changed"] = {n: enc.encode(decoded.argument(n), n) for n in case["changed"]}
    if case.get("self_after") is not None and obj is not None:
        names = list(lv.Case(case, arrays).state_after or {})
        new["self_after"] = enc.encode({n: getattr(obj, n) for n in names if hasattr(obj, n)}, "self")
    inputs = {k: a for k, a in arrays.items() if not k.startswith("out")}
    return result, new, {**inputs, **enc.arrays}, obj


def mutant_module(name: str, path: str, source: str) -> Any:
    """A fresh module ``name`` run from ``source`` (not put in ``sys.modules``)."""
    module = types.ModuleType(name)
    module.__file__ = path
    module.__package__ = name.rpartition(".")[0] if not path.endswith("__init__.py") else name
    exec(compile(source, path, "exec"), module.__dict__)
    return module


def resolve(module: Any, qualname: str) -> tuple[Any, Any]:
    """(the plain function, its class or None) of ``qualname`` in ``module``."""
    parts = qualname.split(".")
    owner: Any = module
    for part in parts[:-1]:
        owner = getattr(owner, part)
    raw = owner.__dict__[parts[-1]] if owner is not module else getattr(module, parts[-1])
    func = raw.__func__ if isinstance(raw, staticmethod | classmethod) else raw
    return func, (owner if owner is not module else None)


# ------------------------------------------------------------------------------------------------ the search


def _is_mask(arr: Any) -> bool:
    """A float array of 0s and 1s only (a mask or one-hot targets)."""
    import numpy as np

    finite = arr[np.isfinite(arr)]
    return finite.size > 2 and bool(np.isin(finite, (0.0, 1.0)).all())


def _arrays_filled(case: dict[str, Any], arrays: dict[str, Any], how: str, guarded: bool) -> dict[str, Any]:
    """Int and bool array arguments made all zero, all equal to their first entry, or all distinct; where the
    body guards a value (``guarded``), float ones too: a 0/1 mask all zero (a count of zero), any float array
    all equal (a spread of zero) or within a millionth of its first entry (a spread below an ``eps``), its first
    row zero (a norm of zero)."""
    import numpy as np

    out = {}
    for a in case["arguments"]:
        key = array_key(case, a["name"], arrays)
        if key is None or not isinstance(arrays[key], np.ndarray) or arrays[key].size == 0:
            continue
        arr = arrays[key]
        if arr.dtype == np.bool_ or np.issubdtype(arr.dtype, np.integer):
            if how == "zeros":
                out[key] = np.zeros_like(arr)
            elif how == "same":
                out[key] = np.full_like(arr, arr.ravel()[0])
            elif how == "distinct" and np.issubdtype(arr.dtype, np.integer):
                out[key] = np.arange(arr.size, dtype=arr.dtype).reshape(arr.shape) + arr.min()
        elif guarded and np.issubdtype(arr.dtype, np.floating) and np.isfinite(arr).all():
            first = arr.ravel()[0]
            if how == "zeros" and _is_mask(arr):
                out[key] = np.zeros_like(arr)
            elif how == "zeros":  # one row of zeros: a norm of zero
                out[key] = arr.copy()
                out[key][0] = 0
            elif how == "same":
                out[key] = np.full_like(arr, first)
            elif how == "close" and not _is_mask(arr):
                out[key] = (first + (arr - first) * 1e-6).astype(arr.dtype)
    return out


def _random_arrays(case: dict[str, Any], arrays: dict[str, Any], seed: int) -> dict[str, Any]:
    """The float array arguments drawn anew (normal, at their recorded scale and wider; a float mask of 0s and 1s
    stays one: a mask of other weights would fail correct answers that rely on what every caller gives), bool
    ones at random."""
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
            if _is_mask(arr):  # a float mask stays a mask
                out[key] = np.asarray(rng.random(arr.shape) < 0.5).astype(arr.dtype)
                continue
            scale = float(np.abs(finite).max()) if finite.size else 1.0
            wider = (1.0, 4.0, 16.0)[seed % 3]  # past the recorded range too: where a clamp or a bound binds
            out[key] = np.asarray(rng.normal(size=arr.shape) * (scale or 1.0) * wider).astype(arr.dtype)
        elif arr.dtype == np.bool_:
            out[key] = rng.random(arr.shape) < 0.5
    return out


def _inputs(plan: dict[str, Any], bases: list[tuple[str, Any, Any]]) -> list[dict[str, Any]]:
    """The inputs to try, in order: per base call each leaf alone, the defaults, arrays that zero a count,
    random arrays; then pairs of leaves."""
    out: list[dict[str, Any]] = []
    leaves = plan.get("leaves", {})
    for name, case, _ in bases:
        for path, values in leaves.items():
            out += [{"base": name, "set": {path: v}} for v in values]
        out += [{"base": name, "set": {p: v}, "kind": "default"} for p, v in plan.get("defaults", {}).items()]
        zeros = [{p: v} for p, values in leaves.items() for v in values if type(v) in (int, float) and v == 0]
        for how in ("zeros", "same", "distinct", *(("close",) if plan.get("guarded") else ())):
            # alone, and with each leaf at zero (a spread of zero meets ``eps=0``)
            out += [{"base": name, "arrays": how, "kind": "arrays", "set": s, "guarded": bool(plan.get("guarded"))}
                    for s in [{}, *zeros]]
        out += [{"base": name, "random": seed, "kind": "random"} for seed in range(RANDOM_TRIES)]
        fills = ("random", "ones", *(("zeros",) if plan.get("guarded") else ()))
        for arg, like in _unset(case):  # with each default too (``labels=None`` where a mask replaces labels)
            out += [{"base": name, "fill": arg, "like": like, "kind": "fill", "set": s, "with": value}
                    for value in fills
                    for s in [{}, *({p: v} for p, v in plan.get("defaults", {}).items() if p != arg)]]
    for name, _, _ in bases:
        for p, q in plan.get("pairs", []):
            for v in leaves.get(p, [])[:2]:
                out += [{"base": name, "set": {p: v, q: w}} for w in leaves.get(q, [])[:2]]
    return out


def _unset(case: dict[str, Any]) -> list[tuple[str, str]]:
    """(argument recorded as None, an array argument whose shape to try for it): an optional array the driver
    never passes (``mask=None``)."""
    arrays = [a["name"] for a in case["arguments"] if isinstance(a["value"], dict)
              and a["value"].get("$") == "ndarray"]
    return [(a["name"], like) for a in case["arguments"] if a["value"] is None for like in [*arrays, "square"]]


def _filled(new: dict[str, Any], inputs: dict[str, Any], arg: str, like: str, value: str = "random") -> bool:
    """Give the None argument ``arg`` a 0/1 array (``value``: random, all ones or all zeros) shaped like argument
    ``like`` (or square, as long as the first array's first axis)."""
    import numpy as np

    shapes = [inputs[k].shape for a in new["arguments"] if (k := array_key(new, a["name"], inputs)) is not None]
    if not shapes or not shapes[0]:
        return False
    shape = (shapes[0][0], shapes[0][0]) if like == "square" else inputs[array_key(new, like, inputs) or ""].shape
    key = f"fill{len(inputs)}"
    inputs[key] = np.full(shape, float(value == "ones")) if value != "random" else \
        (np.random.default_rng(0).random(shape) < 0.5).astype(np.float64)
    return ll.put(new, inputs, arg, {"$": "ndarray", "key": key})


def _build(spec: dict[str, Any], case: dict[str, Any], arrays: dict[str, Any]) -> tuple[Any, Any] | None:
    new = json.loads(json.dumps(case))
    inputs = {k: a for k, a in arrays.items() if not k.startswith("out")}
    for path, value in spec.get("set", {}).items():
        if not ll.put(new, inputs, path, value):
            return None
    if "arrays" in spec:
        filled = _arrays_filled(new, inputs, spec["arrays"], bool(spec.get("guarded")))
        if not filled:
            return None
        inputs.update(filled)
    if "fill" in spec and (spec["like"] != "square" and array_key(new, spec["like"], inputs) is None
                           or not _filled(new, inputs, spec["fill"], spec["like"], spec.get("with", "random"))):
        return None
    if "random" in spec:
        drawn = _random_arrays(new, inputs, int(spec["random"]))
        if not drawn:
            return None
        inputs.update(drawn)
    return new, {**arrays, **inputs}


def input_text(spec: dict[str, Any]) -> str:
    """What an input set: ``gamma=0.5``, ``labels=None``, ``int arrays all zero``, ``random inputs``."""
    also = "".join(f", {k}={v!r}" for k, v in spec.get("set", {}).items())
    if "random" in spec:
        return "random inputs of the recorded shapes"
    if "fill" in spec:
        entries = {"random": "0/1 entries", "ones": "all ones", "zeros": "all zeros"}[spec.get("with", "random")]
        return f"{spec['fill']} given ({entries} shaped like {spec['like']}){also}"
    if "arrays" in spec:
        return {"zeros": "int, bool and 0/1 arrays all zero (a row of a float one)", "same": "arrays all equal",
                "distinct": "int arrays all distinct", "close": "float arrays within a millionth of their first "
                "entry"}[spec["arrays"]] + also
    return ", ".join(f"{k}={v!r}" for k, v in spec.get("set", {}).items())


def _finite(value: Any) -> bool:
    """True when no float in ``value`` (through lists, tuples and dicts) is nan or infinite."""
    import math

    import numpy as np

    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, np.ndarray | np.generic) and np.issubdtype(np.asarray(value).dtype, np.floating):
        return bool(np.isfinite(value).all())
    if isinstance(value, list | tuple):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    return True


def search(golden: Target, t: dict[str, Any], alive: list[dict[str, Any]], cases: list[tuple[str, Any, Any]],
           out: str, index: int, deadline: float) -> dict[str, Any]:
    """Look for a stable input that kills each mutant of ``alive``; write each such input as a case
    (``srch-<t>-<k>.npz`` in ``out``). The report: ``made`` (case entries), ``killed`` (mutant id -> case file),
    ``equivalent`` (ids no input separated, random ones included), ``live`` (the others), ``tried`` (inputs run),
    ``what`` (the kinds of inputs tried), ``edges`` (ids separated only by unstable inputs)."""
    plan = t.get("search") or {}
    bases = [c for c in cases if not c[0].startswith(("amp-", "srch-"))][:2]
    report: dict[str, Any] = {"made": [], "killed": {}, "equivalent": [], "live": [], "tried": 0, "what": [],
                              "edges": []}
    if not alive or not bases:
        report["live"] = [m["id"] for m in alive]
        return report
    path = os.path.join(os.getcwd(), t["file"])
    mutants: dict[str, Target | None] = {}
    for m in alive:
        try:
            module = mutant_module(t["module"], path, m["source"])
            mutants[m["id"]] = golden.with_func(*resolve(module, t["qualname"]))
        except (Exception, Timeout):  # noqa: BLE001 - the kept cases kill a mutant that cannot load
            mutants[m["id"]] = None
    left = [i for i, mt in mutants.items() if mt is not None]
    by_name = {name: (case, arrays) for name, case, arrays in bases}
    finite_base = {name: lv.Case(case, arrays).expected for name, case, arrays in bases}
    random_ok = False
    what: list[str] = []
    for spec in _inputs(plan, bases):
        if not left or report["tried"] >= MAX_TRIED or time.monotonic() > deadline:
            break
        case, arrays = by_name[spec["base"]]
        built = _build(spec, case, arrays)
        if built is None:
            continue
        try:
            result, new, new_arrays, _ = golden_case(golden, *built)
        except (Exception, Timeout):  # noqa: BLE001 - an input the golden code refuses is no case
            continue
        if _finite(finite_base[spec["base"]]) and not _finite(result):
            continue  # an input outside the function's domain (nan where the recorded calls had none) is no case
        report["tried"] += 1
        kind = spec.get("kind", "value")
        text = input_text(spec)
        if text not in what:
            what.append(text)
        random_ok = random_ok or kind == "random"
        want = lv.Case(new, new_arrays)
        killed = []
        for mid in left:
            try:
                got, decoded, obj = mutants[mid].call(new, new_arrays)  # type: ignore[union-attr]
                differs = not mutants[mid].same(got, decoded, obj, want)  # type: ignore[union-attr]
            except (Exception, Timeout):  # noqa: BLE001
                differs = True
            if differs:
                killed.append(mid)
        if not killed:
            continue
        if unstable(golden, new, new_arrays, result, want):
            report["edges"] += [k for k in killed if k not in report["edges"]]
            continue
        file = f"srch-{index}-{len(report['made'])}.npz"
        with open(os.path.join(out, file), "wb") as fh:
            fh.write(lv.write_case(new, new_arrays))
        sets = {k: v for k, v in spec.get("set", {}).items() if type(v) in (bool, int, float, str)}
        report["made"].append({"file": file, "param": text, "value": None, "set": sets, "kind": "search",
                               "fill": [], "noise": {}, "base": spec["base"], "when": {}, "effective": []})
        for mid in killed:
            report["killed"][mid] = file
        left = [i for i in left if i not in killed]
    report["what"] = what
    unset = any(_unset(case) for _, case, _ in bases)  # an argument never given: no input covers its use
    for mid in left:
        equivalent = random_ok and not unset and mid not in report["edges"]
        report["equivalent" if equivalent else "live"].append(mid)
    return report
