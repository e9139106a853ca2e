"""Calls of the golden code and of its mutants on recorded and varied inputs, compared exactly as the generated
test compares, and the search for an input that kills a mutant the kept cases miss (``lmrbench_probe`` runs it).

The search (``search``) varies the first two recorded calls by the host's plan (``"search"`` of a probe target),
and each leaf alone on up to three more kept calls that run lines of the golden file the calls before them do not
(``other_paths``: a growth step where the first calls overflow): each scalar leaf alone (``self.cfg.loss.gamma``),
near the leaves it meets (``good_steps`` at ``growth_interval - 1``), an int leaf at the end of each axis of the
call's arrays (a ring's pointer, where what it starts wraps round), pairs of leaves, boundary values the body
compares with (``w - 1, w, w + 1``), a default the driver never leaves (``labels=None``), arrays made all zero, all
equal or all distinct (a count that becomes zero), float arrays with every other entry exactly zero (a sign of
zero), an item of a list left None where the body tests its items for None (a parameter with no gradient),
padding moved to the other end, far from zero, and random inputs of the recorded shapes (``lmrbench_variations``
makes them; ``lmrbench_input_text`` names them). An input kills a mutant when the golden code runs on
it and the mutant's outcome is another as the test compares (another result, or raising where the golden code
returned, or not raising the builtin exception it raised: ``Target.differs``); it becomes a case only when it is
stable: a one-ulp move of its float inputs, and breaking the ties among their equal entries either way, leave the
golden result within the test's tolerance (a correct program that breaks a tie otherwise must pass). A mutant no
input separates is live; it is equivalent only when the random inputs were tried too, every scalar leaf the
lines it changes read was varied by some input tried (``focus`` of the mutant), and no input outside the
domain of the recorded arrays (``lmrbench_variations.departs``: a 0/1 array given values between 0 and 1,
probabilities with a row of zeros) separates it either: such an input is named with the live mutant, never made a
case. A mutant that moves a comparison's boundary is equivalent only when some input met that boundary
(``lmrbench_edges``: the golden code run with its comparisons tapped, and inputs made to meet them).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import math
import os
import signal
import sys
import time
import types
from typing import Any

import lmrbench_checkers as lc
import lmrbench_edges as le
import lmrbench_input_text as lit
import lmrbench_leaves as ll
import lmrbench_values as lv
import lmrbench_variations as lvar
from lmrbench_raising import deliberate, raised_as, raising_case
from lmrbench_variations import array_key

MAX_TRIED = 240
"""Most inputs the search tries per goal function."""


class Timeout(Exception):
    """A call ran past its limit."""


def on_alarm(signum: int, frame: Any) -> None:
    raise Timeout()


_TEMPLATES: dict[int, tuple[dict[str, Any], dict[str, Any], lv.Case]] = {}


def template(case: dict[str, Any], arrays: dict[str, Any]) -> lv.Case:
    """A decoding of the case kept for its expected values and scale, which every call of it shares (a case is
    called once per mutant). Never passed to a call itself, so nothing changes it."""
    hit = _TEMPLATES.get(id(case))
    if hit is not None and hit[0] is case and hit[1] is arrays:
        return hit[2]
    if len(_TEMPLATES) >= 256:
        _TEMPLATES.clear()
    made = lv.Case(case, arrays)
    _TEMPLATES[id(case)] = (case, arrays, made)
    return made


class Target:
    """One goal function as the probe calls it: the function, its class, how it is bound, the factory of its
    instance, the limit of one call and the test's checker."""

    def __init__(self, func: Any, owner: Any, binding: str, factory: Any, timeout: float,
                 checker: dict[str, Any]) -> None:
        self.func, self.owner, self.binding, self.factory = func, owner, binding, factory
        self.timeout, self.checker = timeout, checker
        self.hung = False
        """Set when a call of ``differs`` ran past the limit (a mutant that loops for ever)."""

    def with_func(self, func: Any, owner: Any) -> Target:
        return Target(func, owner, self.binding, self.factory, self.timeout, self.checker)

    def call(self, case: dict[str, Any], arrays: dict[str, Any]) -> tuple[Any, Any, Any]:
        """Call on a fresh decoding of the case's inputs: (result, decoded case, instance)."""
        decoded, obj = self._prepared(case, arrays)
        return self._invoke(decoded, obj), decoded, obj

    def _prepared(self, case: dict[str, Any], arrays: dict[str, Any]) -> tuple[Any, Any]:
        """A fresh decoding of the case's inputs, the random generators put back, and the instance for a method."""
        decoded = lv.Case(case, arrays, like=template(case, arrays))
        if decoded.random_state:
            decoded.restore_random_state()
        return decoded, decoded.instance(self.owner, self.factory) if self.binding == "method" else None

    def _invoke(self, decoded: Any, obj: Any) -> Any:
        signal.setitimer(signal.ITIMER_REAL, self.timeout)
        try:
            if self.binding == "method":
                return self.func(obj, *decoded.args, **decoded.kwargs)
            if self.binding == "classmethod":
                return self.func(self.owner, *decoded.args, **decoded.kwargs)
            return self.func(*decoded.args, **decoded.kwargs)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def replaced(self, case: dict[str, Any], arrays: dict[str, Any]) -> set[str]:
        """Where ``self`` held an array before the call and holds another object after it (``self.u``,
        ``self.params["w"]``): arrays replaced rather than changed in place. Empty for a function, or where the
        call raises."""
        if self.binding != "method":
            return set()
        decoded, obj = self._prepared(case, arrays)

        def leaves() -> dict[str, Any]:
            return {lv.held_label(p): a for name, value in vars(obj).items()
                    for p, a in lv.array_leaves(value, ["self", name])}

        before = leaves()
        try:
            self._invoke(decoded, obj)
        except (Exception, Timeout):  # noqa: BLE001 - a call that raises replaces nothing
            return set()
        after = leaves()
        return {label for label, a in before.items() if label in after and after[label] is not a}

    def differs(self, case: dict[str, Any], arrays: dict[str, Any], want: Any = None) -> bool:
        """True when this code's outcome on the case is not the one ``want`` (default: the case's own) holds, as
        the test compares: another result, raising where the reference returned, or not raising the builtin
        exception the reference raised."""
        try:
            got, decoded, obj = self.call(case, arrays)
        except Timeout:
            self.hung = True
            return True
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            return not raised_as(exc, template(case, arrays) if want is None else want)
        want = decoded if want is None else want
        try:
            return bool(want.raises) or not self.same(got, decoded, obj, want)
        except (Exception, Timeout):  # noqa: BLE001 - a result the comparison cannot take differs
            return True

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
        if want.held_after:
            side(decoded.held, want.held_after, where="arrays changed in place")
        if want.data.get("shares") is not None and obj is not None and decoded.aliases(obj, want):
            return False  # state that shares the caller's arrays where the reference kept copies
    except AssertionError:
        return False
    return True


def float_keys(case: dict[str, Any], arrays: dict[str, Any]) -> list[str]:
    """The keys of the floating numpy array arguments of a case."""
    import numpy as np

    keys = [array_key(case, a["name"], arrays) for a in case["arguments"]]
    return [k for k in keys if k is not None and isinstance(arrays[k], np.ndarray)
            and np.issubdtype(arrays[k].dtype, np.floating)]


def counts_changed(spec_set: dict[str, Any], case: dict[str, Any], arrays: dict[str, Any]) -> list[int]:
    """The recorded values (above 1) of the int leaves ``spec_set`` changes (a count of crops 6 -> 5)."""
    out = []
    for path, value in spec_set.items():
        old = ll.get(case, arrays, path)
        if type(value) is int and type(old) is int and old > 1 and value != old:
            out.append(old)
    return out


def _row_read(target: Target, case: dict[str, Any], arrays: dict[str, Any], key: str, want: Any, row: int) -> bool:
    """True when moving row ``row`` of ``arrays[key]`` changes the result ``want`` holds (or fails the call)."""
    import numpy as np

    arr = arrays[key]
    moved = arr.copy()
    moved[row] += (np.random.default_rng(13).normal(size=moved[row].shape) * max(float(np.abs(arr).max()),
                                                                                   1.0)).astype(arr.dtype)
    try:
        got, decoded, obj = target.call(case, {**arrays, key: moved})
    except (Exception, Timeout):  # noqa: BLE001 - a row that makes it fail is read
        return True
    return not target.same(got, decoded, obj, want)


def skips_rows(target: Target, base: tuple[dict[str, Any], dict[str, Any]], new: tuple[dict[str, Any], dict[str, Any]],
               counts: list[int]) -> bool:
    """True when a call made by changing a count (``counts``: the recorded values, ``counts_changed``) leaves
    unread the last row of a float argument whose first axis is a whole number of blocks of that count (crops
    times the batch) while it reads the first, and the recorded call (``base``, whose golden result it holds)
    reads the last. Such a call passes more rows than its count says, which no caller does, and a correct program
    that splits the rows by the count refuses it."""
    import numpy as np

    want, recorded = lv.Case(*new), lv.Case(*base)
    for key in float_keys(*new):
        arr = new[1][key]
        if key not in base[1] or base[1][key].shape != arr.shape or arr.ndim == 0 or not arr.shape[0] \
                or not np.isfinite(arr).all() or not any(arr.shape[0] % c == 0 for c in counts):
            continue
        # the last row unread where the first is read (a truncation, not a result no row moves: a group of one)
        if not _row_read(target, *new, key, want, -1) and _row_read(target, *new, key, want, 0) \
                and _row_read(target, *base, key, recorded, -1):
            return True
    return False


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


def unstable(target: Target, case: dict[str, Any], arrays: dict[str, Any], result: Any, obj_case: Any,
             leaves: dict[str, float] | None = None) -> str:
    """Why a case whose golden result is ``result`` is no fair test ('' when it is fair): a one-ulp move of its
    float inputs, or of the float ``leaves`` the input set (a threshold set to one of the scores), or breaking the
    ties among their equal entries, changes the golden result beyond the test's tolerance."""
    keys = float_keys(case, arrays)
    moves: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for up in (True, False):
        moves.append(("a one-ulp move of its float inputs", case, {k: nudged(arrays[k], up) for k in keys}))
    for path, value in (leaves or {}).items():
        for way in (math.inf, -math.inf):
            moved_case, moved_arrays = json.loads(json.dumps(case)), dict(arrays)
            if ll.put(moved_case, moved_arrays, path, math.nextafter(value, way)):
                moves.append((f"a one-ulp move of {path}", moved_case, moved_arrays))
    for first in (True, False):
        broken = {k: b for k in keys if (b := untied(arrays[k], first)) is not None}
        if broken:
            moves.append(("breaking a tie among equal inputs", case, broken))
    for why, moved_case, changed in moves:
        if not changed and moved_case is case:
            continue
        try:
            moved, decoded, obj = target.call(moved_case, {**arrays, **changed})
        except (Exception, Timeout):  # noqa: BLE001 - a move that raises is as unstable as one that changes
            return why
        if not target.same(moved, decoded, obj, obj_case):
            return why
    return ""


def _numpy_overflow_raises() -> Any:
    """A context in which numpy raises FloatingPointError on overflow (nothing where numpy is not loaded)."""
    np = sys.modules.get("numpy")
    return np.errstate(over="raise") if np is not None else contextlib.nullcontext()


def golden_case(target: Target, case: dict[str, Any], arrays: dict[str, Any]) -> tuple[Any, Any, Any, Any]:
    """(result, the case with the golden code's expected values, their arrays, the instance after the call);
    raises when the golden code fails on it, is not repeatable, or overflows on it (numpy's overflow to inf,
    met again on the repeat with overflow raised): an input whose answer hangs on inf arithmetic is outside the
    function's domain, where code of another style (``math.exp``) raises instead. The arguments it changes and
    ``self`` after it are kept like a recorded call's."""
    result, decoded, obj = target.call(case, arrays)
    with _numpy_overflow_raises():
        again, _, _ = target.call(case, arrays)
    lc.assert_equal(again, result)
    enc = lv.Encoder("out")
    new = {**case, "expected": enc.encode(result, "the return value")}
    new.pop("ties_settled", None)
    settled = _settled(target, case, arrays, result)  # this input's own: a varied one may hinge on its ties
    if settled:
        new["ties_settled"] = settled
    if case.get("changed"):
        new["changed"] = {n: enc.encode(decoded.argument(n), n) for n in case["changed"]}
    if case.get("self_after") is not None and obj is not None:
        names = list(template(case, arrays).state_after or {})
        new["self_after"] = enc.encode({n: getattr(obj, n) for n in names if hasattr(obj, n)}, "self")
    if case.get("shares") is not None and obj is not None:
        new["shares"] = lv.shared_memory(vars(obj), decoded.named_arguments())
    if case.get("held"):
        new["held"] = [{"path": e["path"], "value": enc.encode(decoded.held[lv.held_label(e["path"])], "held")}
                       for e in case["held"]]
    inputs = {k: a for k, a in arrays.items() if not k.startswith("out")}
    return result, new, {**inputs, **enc.arrays}, obj


def _settled(target: Target, case: dict[str, Any], arrays: dict[str, Any], result: Any) -> list[str]:
    """The tied arguments of ``case`` whose ties the golden result does not depend on (``lmrbench_ties``)."""
    if not case.get("ties"):
        return []  # nothing to settle: no decoding, no call (golden_case runs for every input the search tries)
    import lmrbench_ties

    out = []
    tol = tolerance(target.checker, lv.Case({**case, "ties": None}, arrays))
    for name in case.get("ties") or []:
        key = array_key(case, name, arrays)
        if key is None:
            continue

        def rerun(swap: Any, key: str = key) -> Any:
            got, _, _ = target.call(case, {**arrays, key: swap([arrays[key]])[0]})
            return got

        if not lmrbench_ties.decides(rerun, result, arrays[key], tol):
            out.append(name)
    return out


def mutant_module(name: str, path: str, source: str, names: dict[str, Any] | None = None) -> Any:
    """A fresh module ``name`` run from ``source`` (not put in ``sys.modules``), with ``names`` among its globals
    from the start (the tap of ``lmrbench_edges``)."""
    module = types.ModuleType(name)
    module.__file__ = path
    module.__package__ = name.rpartition(".")[0] if not path.endswith("__init__.py") else name
    module.__dict__.update(names or {})
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


def nonfinite(value: Any) -> set[str]:
    """The kinds of non-finite floats in ``value`` (through lists, tuples and dicts): ``nan``, ``inf``, ``-inf``."""
    import numpy as np

    if isinstance(value, list | tuple):
        return set().union(*(nonfinite(v) for v in value))
    if isinstance(value, dict):
        return set().union(*(nonfinite(v) for v in value.values()))
    if not isinstance(value, float | np.ndarray | np.generic) or not np.issubdtype(np.asarray(value).dtype,
                                                                                   np.floating):
        return set()
    arr = np.asarray(value)
    return {k for k, hit in (("nan", np.isnan(arr)), ("inf", np.isposinf(arr)), ("-inf", np.isneginf(arr)))
            if hit.any()}


def allowed_nonfinite(t: dict[str, Any], recorded: list[tuple[str, Any, Any]]) -> set[str]:
    """The kinds of non-finite value a varied input's result may hold: those the recorded results hold, and those
    the golden body writes itself (the plan's ``writes``: ``-np.inf`` for a beam shorter than ``min_length``)."""
    return nonfinite([lv.Case(c, a).expected for _, c, a in recorded]) | set((t.get("search") or {}).get("writes", []))


def outside(result: Any, allowed: set[str]) -> bool:
    """True when ``result`` holds a kind of non-finite value outside ``allowed``, the kinds the recorded results
    hold (``nonfinite`` of them all; a nan where the recorded calls had none): an input outside the function's
    domain. A -inf that recorded results also hold (a banned token's log-probability) is a value it gives."""
    return not nonfinite(result) <= allowed


def shapes(value: Any) -> Any:
    """The shapes of the arrays in ``value`` (through lists and tuples), None for anything else."""
    if hasattr(value, "shape") and not isinstance(value, type):
        return tuple(value.shape)
    if isinstance(value, list | tuple):
        return tuple(shapes(v) for v in value)
    return None


def recorded_calls(cases: list[tuple[str, Any, Any]]) -> list[tuple[str, Any, Any]]:
    """The recorded cases (no case added by amplification, the scan or the search)."""
    return [c for c in cases if not c[0].startswith(("amp-", "srch-", "scan-"))]


def recorded_bases(cases: list[tuple[str, Any, Any]]) -> list[tuple[str, Any, Any]]:
    """The first and the last recorded cases: the calls that inputs are varied from. The first call of a run often
    starts from a blank state (weights of zero, where every value is 0 and two updates agree); the last starts from
    one the run has made."""
    calls = recorded_calls(cases)
    return calls[:1] + calls[-1:] if len(calls) > 1 else calls


MORE_BASES = 3
"""Most calls beyond the first two that the search also varies, each taking lines of the golden file that the
calls before it do not."""


def lines_run(target: Target, case: dict[str, Any], arrays: dict[str, Any]) -> frozenset[int]:
    """The lines of the golden function's file that a call of the case runs."""
    import sys

    file = target.func.__code__.co_filename
    seen: set[int] = set()

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            seen.add(frame.f_lineno)
        return local

    def calls(frame: Any, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename == file else None

    old = sys.gettrace()
    sys.settrace(calls)
    try:
        target.call(case, arrays)
    except (Exception, Timeout):  # noqa: BLE001 - the lines up to the raise count
        pass
    finally:
        sys.settrace(old)
    return frozenset(seen)


def other_paths(golden: Target, cases: list[tuple[str, Any, Any]],
                bases: list[tuple[str, Any, Any]]) -> list[tuple[str, Any, Any]]:
    """Up to ``MORE_BASES`` kept cases (recorded ones first, then those amplification and the scan added) that
    each run lines of the golden file no call before them runs: a growth step where the first calls overflow.
    A case that expects an exception is none."""
    covered = set().union(*(lines_run(golden, c, a) for _, c, a in bases))
    out: list[tuple[str, Any, Any]] = []
    chosen = {name for name, _, _ in bases}
    for name, case, arrays in sorted(cases, key=lambda c: c[0].startswith(("amp-", "srch-", "scan-"))):
        if len(out) >= MORE_BASES:
            break
        if name in chosen or case.get("raises"):
            continue
        lines = lines_run(golden, case, arrays)
        if lines - covered:
            out.append((name, case, arrays))
            covered |= lines
    return out


def saved_case(out: str, file: str, case: dict[str, Any], arrays: dict[str, Any], spec: dict[str, Any],
               kind: str) -> dict[str, Any]:
    """Write the case ``file`` in ``out`` made from the input ``spec``; its entry in the probe's report."""
    with open(os.path.join(out, file), "wb") as fh:
        fh.write(lv.write_case(case, arrays))
    sets = {k: v for k, v in spec.get("set", {}).items() if type(v) in (bool, int, float, str)}
    return {"file": file, "param": lit.input_text(spec), "value": None, "set": sets, "kind": kind, "fill": [],
            "noise": {}, "base": spec["base"], "when": {}, "effective": []}


def aimed(specs: list[dict[str, Any]], alive: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``specs`` with first, the mutants taking turns, those that set a leaf the lines of each live mutant read
    (its ``focus``), in their order: a budget spent on a function of many leaves and many live mutants reaches
    ``truncate`` for the mutant of ``truncate``, and random data with ``clip_ratio_c`` for the dual clip's."""
    own = [[k for k, s in enumerate(specs) if set(s.get("set", {})) & set(m.get("focus", []))] for m in alive]
    first = dict.fromkeys(k for turn in itertools.zip_longest(*own) for k in turn if k is not None)
    return [specs[k] for k in first] + [s for k, s in enumerate(specs) if k not in first]


def search(golden: Target, t: dict[str, Any], alive: list[dict[str, Any]], cases: list[tuple[str, Any, Any]],
           out: str, index: int, deadline: float) -> dict[str, Any]:
    """Look for a stable input that kills each mutant of ``alive``; write each such input as a case
    (``srch-<t>-<k>.npz`` in ``out``). The report: ``made`` (case entries), ``killed`` (mutant id -> case file),
    ``equivalent`` (ids no input separated, random ones included), ``live`` (the others), ``tried`` (inputs run),
    ``what`` (the kinds of inputs tried), ``edges`` (ids separated only by unstable inputs), ``outside`` (id -> an
    input outside the domain of the recorded arrays that separates it: soft values of a 0/1 array)."""
    plan = t.get("search") or {}
    bases = recorded_bases(cases)
    report: dict[str, Any] = {"made": [], "killed": {}, "equivalent": [], "live": [], "tried": 0, "what": [],
                              "edges": [], "outside": {}, "unmet": {}, "replaced": {}}
    if not alive or not bases:
        report["live"] = [m["id"] for m in alive]
        return report
    kept_apart = [m for m in alive if m.get("identity")]
    if kept_apart:  # no value tells these: only where something else holds the array, and every case tried that
        apart(golden, t, kept_apart, [c for c in cases if not c[1].get("raises")][:APART_CASES], report)
        alive = [m for m in alive if not m.get("identity")]
        if not alive:
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
    more = other_paths(golden, cases, bases)
    taps = tapped(golden, t, path)
    sites = {m["id"]: m["site"] for m in alive if m.get("site") is not None and taps is not None}
    by_name = {name: (case, arrays) for name, case, arrays in [*bases, *more]}
    base_result = {name: template(case, arrays).expected for name, case, arrays in [*bases, *more]}
    allowed = allowed_nonfinite(t, recorded_calls(cases))
    random_ok = False
    varied: set[str] = set()
    tied = set(plan.get("tied") or [])
    what: list[str] = []
    edges = le.edge_specs(taps, [*bases, *more], set(sites.values())) if taps is not None else []

    def kept(new: dict[str, Any], new_arrays: dict[str, Any], spec: dict[str, Any], killed: list[str]) -> list[str]:
        """Write an input as the search's next case, the one that kills ``killed``; the mutants still left."""
        file = f"srch-{index}-{len(report['made'])}.npz"
        report["made"].append(saved_case(out, file, new, new_arrays, spec, "search"))
        report["killed"].update(dict.fromkeys(killed, file))
        return [i for i in left if i not in killed]

    for spec in aimed(edges + lvar.inputs(plan, bases, more), alive):
        if not left or report["tried"] >= MAX_TRIED or time.monotonic() > deadline:
            break
        case, arrays = by_name[spec["base"]]
        built = lvar.build(spec, case, arrays)
        if built is None:
            continue
        exact = {p: v for p, v in spec.get("set", {}).items() if v in (plan.get("exact") or {}).get(p, [])}
        try:
            result, new, new_arrays, _ = golden_case(golden, *built)
        except (Exception, Timeout) as exc:  # noqa: BLE001 - an input the golden code refuses is no case, unless
            # it raises by a ``raise`` of its own at a bound the body names (a label smoothing of exactly 0.5) or
            # on an index out of range, arguments of unequal lengths or an empty batch (ints and shapes: exact)
            bound = bool(exact) and not set(spec.get("set", {})) - set(exact) and spec.keys() <= {"base", "set", "kind"}
            shaped = spec.get("arrays") in ("negative", "past", "mismatch", "empty") and not spec.get("set")
            name = deliberate(exc, golden.func) if isinstance(exc, Exception) and (bound or shaped) else ""
            if name:
                refused, refused_arrays = raising_case(*built, name)
                killed = [mid for mid in left if mutants[mid].differs(refused, refused_arrays)]  # type: ignore[union-attr]
                if killed:
                    left = kept(refused, refused_arrays, spec, killed)
            continue
        if spec.get("kind") == "refusal":
            continue  # an input the body must refuse makes a case only where the golden code does
        if outside(result, allowed):
            continue  # an input outside the function's domain (nan where the recorded calls had none) is no case
        if ("fill" in spec or set(spec.get("set", {})) & tied) and shapes(result) != shapes(base_result[spec["base"]]):
            continue  # a shape the function does not take: an argument filled, a head count against other heads
        counts = counts_changed(spec.get("set", {}), case, arrays)
        if counts and skips_rows(golden, (case, arrays), (new, new_arrays), counts):
            continue  # a count other than the rows it is given: no caller's call
        report["tried"] += 1
        if taps is not None and taps.unmet([sites[m] for m in left if m in sites]):
            taps.run(new, new_arrays)  # which comparisons this input meets at their boundary
        kind = spec.get("kind", "value")
        text = lit.input_text(spec)
        if text not in what:
            what.append(text)
        random_ok = random_ok or kind == "random"
        varied.update([*spec.get("resize", []), *spec.get("set", {})])
        want = lv.Case(new, new_arrays)
        killed = []
        for mid in left:
            if mutants[mid].differs(new, new_arrays, want):  # type: ignore[union-attr]
                killed.append(mid)
        if not killed:
            continue
        away = lvar.departs(case, arrays, built[1])
        if away:  # outside what the recorded calls pass: it names the mutant, it makes no case
            for mid in killed:
                report["outside"].setdefault(mid, f"{text} ({away})")
            continue
        # 0 and +-1 stay, as in ``nudged``: exact in any program
        floats = {p: v for p, v in spec.get("set", {}).items() if type(v) is float and math.isfinite(v)
                  and v not in (0.0, 1.0, -1.0) and p not in exact}  # a bound the body names is exact too
        if unstable(golden, new, new_arrays, result, want, floats):
            report["edges"] += [k for k in killed if k not in report["edges"]]
            continue
        left = kept(new, new_arrays, spec, killed)
    report["what"] = what
    unset = any(lvar.unset(case) for _, case, _ in bases)  # an argument never given: no input covers its use
    report["tied"] = [p for p in plan.get("tied") or [] if p not in varied]
    unset = unset or bool(report["tied"])  # a head count tied to the arrays' shapes that no input varied
    first_case, first_arrays = bases[0][1], bases[0][2]
    focus = {m["id"]: [p for p in m.get("focus", []) if p in (plan.get("leaves") or {}) or ll.node(first_case, p)
                       is None or ll.get(first_case, first_arrays, p) is not ll.MISSING] for m in alive}
    for mid in left:
        # equivalent only where every leaf its lines read was varied: a leaf left None that no input set is a gap;
        # a boundary moved, only where some input met it
        met = taps is None or mid not in sites or sites[mid] in taps.met
        if not met:
            report["unmet"][mid] = taps.sites[sites[mid]]["text"]  # type: ignore[union-attr]
        equivalent = random_ok and not unset and mid not in report["edges"] and mid not in report["outside"] \
            and set(focus[mid]) <= varied and met
        report["equivalent" if equivalent else "live"].append(mid)
    return report


APART_CASES = 16
"""Most cases (recorded and added, in that order) on which ``apart`` compares what the calls replace."""


def apart(golden: Target, t: dict[str, Any], kept_apart: list[dict[str, Any]], bases: list[tuple[str, Any, Any]],
          report: dict[str, Any]) -> None:
    """Sort the mutants that make a new array where the golden code changes one in place (``rebind``): live, with
    the place named in ``report["replaced"]``, where on a case (``bases``) the mutant replaces an array of ``self``
    that the golden call keeps (nothing else the recording saw holds it, so no test can tell); else equivalent
    (what it replaces is a number, or the golden code replaces it too)."""
    path = os.path.join(os.getcwd(), t["file"])
    kept = [golden.replaced(case, arrays) for _, case, arrays in bases]
    for m in kept_apart:
        try:
            mutant = golden.with_func(*resolve(mutant_module(t["module"], path, m["source"]), t["qualname"]))
        except (Exception, Timeout):  # noqa: BLE001 - the kept cases kill a mutant that cannot load
            continue
        new = sorted({p for (_, case, arrays), mine in zip(bases, kept, strict=True)
                      for p in mutant.replaced(case, arrays) - mine})
        if new:
            report["live"].append(m["id"])
            report["replaced"][m["id"]] = new[0]
        else:
            report["equivalent"].append(m["id"])


def tapped(golden: Target, t: dict[str, Any], path: str) -> le.Taps | None:
    """The golden function with its comparisons tapped (``t["taps"]``: the host's source and sites), or None."""
    plan = t.get("taps")
    if not plan:
        return None
    taps = le.Taps(plan["sites"])
    try:
        module = mutant_module(t["module"], path, plan["source"], {le.TAP: taps.compare})
        taps.target = golden.with_func(*resolve(module, t["qualname"]))
    except (Exception, Timeout):  # noqa: BLE001 - no taps: every boundary counts as met, as before
        return None
    return taps
