"""What recorded calls catch, and more cases where the recording never varied a parameter: run in the task's
sandbox after a recording, on the golden tree, as ``python3 -m lmrbench_probe``.

The job is ``$LMRBENCH_HARNESS/probe/job.json``::

    {"timeout": 5.0, "budget": 300.0, "checker": {"kind": "numeric", "rtol": ..., "atol": ...},
     "targets": [{"target": "f.py::loss", "module": "pkg.f", "root": "", "qualname": "loss",
                  "binding": "function", "factory": null,
                  "cases": ["probe/t0-c0.npz", ...],
                  "amplify": [{"param": "beta", "variants": [{"set": {"beta": 0.05}}, ...]}, ...],
                  "max_added": 40,
                  "mutants": [{"id": "ab12...", "source": "<whole mutated goal file>"}],
                  "search": {"leaves": {"self.cfg.loss.gamma": [1.0, ...]}, "pairs": [...], "defaults": {...}}}]}

Every comparison is the generated test's own (``lmrbench_search.same``: the task's checker, its RTOL/ATOL or the
case's scale). Knife edges first: a recorded call whose result changes beyond the checker's tolerance when its
floating array inputs move one ulp is left out (``knife`` in the report). Amplification
(``authoring.record.amplify_plans`` makes the plans): for each plan, the first recorded case (without random state;
a call that changes its arguments or ``self`` is varied from the state recorded before it) on which some of its
variants apply and change the golden result (or are kept anyway: noise in masked-out entries) gives one new case per
such variant, the golden code's result as the expected value, written as ``amp-<t>-<plan>-<k>.npz`` to
``$LMRBENCH_OUT``; at most ``max_added`` per target. A variant sets parameters or attributes of ``self``
(``self.beta``), moves the entries of an array that hold an int parameter with it (``remap``), sets every such entry
(``fill``), or fills masked-out entries with noise (``noise``). Then ``lmrbench_scan`` adds the inputs a driver
never gives, whatever mutants live (a value the body refuses with its own ``raise``: a case that expects the
exception; padding at the other end; arrays far from zero; a spread below an ``eps``). Then every case (recorded and
new) is called on every mutant, fresh from its file, and compared as the generated test compares; a mutant that
raises (where the case expects no exception, or another), times out or differs is killed by that case. An added case
that a one-ulp move or a broken tie of its float inputs decides is not kept. Last, for the mutants no case kills,
``lmrbench_search.search`` looks for a stable input that does (the target's ``search`` plan) and adds it as a case.
``$LMRBENCH_OUT/probe.json`` holds, per target, the new cases, the knife-edge cases, the mutants each case kills and
notes.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import sys
import time
from typing import Any

import lmrbench_checkers as lc
import lmrbench_leaves as ll
import lmrbench_protocol as lp
import lmrbench_scan as lscan
import lmrbench_search as ls
import lmrbench_values as lv
from lmrbench_search import Timeout as _Timeout
from lmrbench_search import same as _same


def _call(func: Any, owner: Any, binding: str, factory: Any, case: dict[str, Any], arrays: dict[str, Any],
          timeout: float) -> tuple[Any, Any, Any]:
    """Call ``func`` on a fresh decoding of the case: (result, decoded case, instance)."""
    return ls.Target(func, owner, binding, factory, timeout, {}).call(case, arrays)


def _slot(case: dict[str, Any], name: str) -> list[Any] | None:
    """``[name, node]`` of an argument or a leaf at any depth (``self.cfg.loss.gamma``); None if absent."""
    found = ll.node(case, name)
    return None if found is ll.MISSING else [name, found]


def _put(case: dict[str, Any], name: str, value: Any, arrays: dict[str, Any] | None = None) -> None:
    ll.put(case, {} if arrays is None else arrays, name, value)


def _key(case: dict[str, Any], name: str, arrays: dict[str, Any]) -> str | None:
    """The array key of an argument that is an array, else None."""
    slot = _slot(case, name)
    node = slot[1] if slot is not None else None
    if isinstance(node, dict) and node.get("$") in ("ndarray", "tensor") and node.get("key") in arrays:
        return str(node["key"])
    return None


def _masked_out(case: dict[str, Any], inputs: dict[str, Any], noise: dict[str, Any]) -> Any:
    """Where a mask leaves entries out (a boolean array), or None when the case has no such mask."""
    import numpy as np

    key = _key(case, noise.get("mask") or noise.get("where", ""), inputs)
    if key is None:
        return None
    arr = inputs[key]
    if "equals" in noise:
        slot = _slot(case, noise["equals"])
        return None if slot is None or type(slot[1]) is not int else arr == slot[1]
    if arr.dtype == np.bool_:
        return ~arr
    if np.issubdtype(arr.dtype, np.number) and arr.size and set(np.unique(arr).tolist()) == {0, 1}:
        return arr == 0  # a 0/1 mask that keeps some entries and leaves others out
    return None


def _with_noise(case: dict[str, Any], inputs: dict[str, Any], noise: dict[str, Any]) -> bool:
    """Fill the masked-out entries of every floating array argument shaped like the mask with noise; False when
    there is nothing to fill."""
    import numpy as np

    masked = _masked_out(case, inputs, noise)
    if masked is None or not masked.any():
        return False
    rng = np.random.default_rng(0)
    filled = False
    mask_key = _key(case, noise.get("mask") or noise.get("where", ""), inputs)
    for a in case["arguments"]:
        key = _key(case, a["name"], inputs)
        if key is None or key == mask_key:
            continue
        arr = inputs[key]
        if not np.issubdtype(arr.dtype, np.floating) or arr.shape[:masked.ndim] != masked.shape:
            continue
        out = arr.copy()
        scale = float(np.abs(arr[np.isfinite(arr)]).max()) if np.isfinite(arr).any() else 1.0
        out[masked] = (rng.normal(size=out[masked].shape) * (scale or 1.0)).astype(arr.dtype)
        inputs[key] = out
        filled = True
    return filled


def _variant(case: dict[str, Any], arrays: dict[str, Any], plan: dict[str, Any], variant: dict[str, Any],
             remap: list[str]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(the changed case, its input arrays), or None when the variant does not apply to this call."""
    import numpy as np

    param = plan["param"]
    slot = _slot(case, param)
    old = slot[1] if slot is not None else None
    new = json.loads(json.dumps(case))
    inputs = {key: a for key, a in arrays.items() if not key.startswith("out")}
    for name, value in variant.get("set", {}).items():
        if _slot(new, name) is None:
            return None
        _put(new, name, value, inputs)
    value = variant.get("set", {}).get(param, old)
    for holder in remap:
        key = _key(new, holder, inputs)
        if key is not None and value != old:
            inputs[key] = _remapped(inputs[key], old, value)
    for holder in variant.get("fill", []):
        key = _key(new, holder, inputs)
        if key is None:
            return None
        inputs[key] = np.full_like(inputs[key], old)
    if variant.get("noise") and not _with_noise(new, inputs, variant["noise"]):
        return None
    return new, {**arrays, **inputs}


def _amplify(t: dict[str, Any], func: Any, owner: Any, factory: Any, cases: list[tuple[str, Any, Any]],
             job: dict[str, Any], out: str, index: int) -> tuple[list[dict[str, Any]], list[str]]:
    """New cases by the plans of ``t["amplify"]``; (their entries, notes on parameters no case varies). Each plan
    makes its cases from the first call where they change the result; then a flag or a mode the driver never sets
    is tried on a second such call (a mistake on its path may hinge on the data: a greedy rule that compares the
    wrong argmax agrees wherever the draft's token is its own argmax), once every plan had its turn."""
    made: list[dict[str, Any]] = []
    notes: list[str] = []
    limit = int(t.get("max_added", 40))
    ordered = sorted(cases, key=_zero_part)  # decoded once for every plan
    allowed = ls.allowed_nonfinite(t, ordered)  # as the search allows them
    first: dict[int, str] = {}
    for n, plan in enumerate(t.get("amplify", [])):
        param = plan["param"]
        if len(made) >= limit:
            if plan.get("note", True):
                notes.append(f"{param}: not tried (the {limit} added cases of a function were made)")
            continue
        kept, applied, why = _plan_cases(t, func, owner, factory, ordered, allowed, job, out, index, n, plan, set(),
                                            "")
        made += kept
        if kept:
            first[n] = kept[0]["base"]
        elif plan.get("note", True):
            tried = ", ".join(repr(v["set"][param]) for v in plan["variants"] if param in v.get("set", {}))
            if not applied:
                notes.append(f"{param}: not tried (no recorded call it applies to: each draws random numbers or "
                             "lacks it)")
            else:
                notes.append(f"{param}: no case could be made ({why}; tried {tried or 'nothing'})")
    for n, plan in enumerate(t.get("amplify", [])):
        param = plan["param"]
        modal = bool(plan["variants"]) and all(param in v.get("set", {}) and type(v["set"][param]) in (
            bool, str, type(None)) for v in plan["variants"])
        if n in first and modal and len(made) < limit:
            made += _plan_cases(t, func, owner, factory, ordered, allowed, job, out, index, n, plan, {first[n]},
                                "-1")[0]
    return made, notes


def _plan_cases(t: dict[str, Any], func: Any, owner: Any, factory: Any, ordered: list[tuple[str, Any, Any]],
                allowed: set[str],
                job: dict[str, Any], out: str, index: int, n: int, plan: dict[str, Any], skip: set[str],
                tag: str) -> tuple[list[dict[str, Any]], int, str]:
    """The cases of plan ``n`` from the first call (not in ``skip``) where they change the result: (their
    entries, how many variants applied, why the last one made no case)."""
    param, why = plan["param"], "it changes no result of the recorded calls"
    applied = 0
    for name, case, arrays in ordered:
        if case.get("random_state") or name in skip:
            continue
        when = plan.get("when", {})
        if any(ll.get(case, arrays, k) != v for k, v in when.items()):
            continue  # a combination is made from a call that has the other parameter's value
        remap = [h for h in plan.get("remap", []) if _slot(case, h) is not None]
        slot = _slot(case, param)
        if plan.get("remap") and (slot is None or not _holds(case, arrays, remap, slot[1])):
            continue
        kept = []
        for k, variant in enumerate(plan["variants"]):
            try:
                built = _variant(case, arrays, plan, variant, remap)
            except (Exception, _Timeout) as exc:  # noqa: BLE001 - an input this variant cannot change
                why = f"{variant.get('kind', 'value')} cannot be made: {type(exc).__name__}: {str(exc)[:120]}"
                continue
            if built is None:
                continue
            applied += 1
            what = ", ".join(f"{a}={b!r}" for a, b in variant.get("set", {}).items()) or variant.get("kind", "")
            golden = ls.Target(func, owner, t["binding"], factory, job["timeout"], job["checker"])
            try:
                result, new, arrays_k, _ = ls.golden_case(golden, *built)
            except (Exception, _Timeout) as exc:  # noqa: BLE001 - any failure means no case
                why = f"{what} fails: {type(exc).__name__}: {str(exc)[:120]}"
                continue
            if ls.outside(result, allowed):  # -inf from a horizon of 0, where plain floats raise ZeroDivisionError
                why = f"{what} gives a non-finite result no recorded call gives"
                continue
            base = lv.Case(case, arrays)
            if plan.get("tied") and ls.shapes(result) != ls.shapes(base.expected):
                why = f"{what} changes the result's shape (a size tied to the arrays')"
                continue
            counts = ls.counts_changed(variant.get("set", {}), case, arrays)
            if counts and ls.skips_rows(golden, (case, arrays), (new, arrays_k), counts):
                why = f"{what} leaves rows of an input unread (a count other than the rows it is given)"
                continue
            effective = _effective(t, func, owner, factory, case, arrays, plan, variant, result, job) \
                if variant.get("kind") == "pair" else []
            changes = set(variant.get("set", {})) != {param} or not remap
            mine = lv.Case(new, arrays_k)
            if not variant.get("keep") and changes and _unchanged(job["checker"], mine, base):
                continue  # a value that changes nothing tells no wrong answer apart
            shaky = ls.unstable(golden, new, arrays_k, result, mine)
            if shaky:
                why = f"{what} makes a case on a knife edge ({shaky} changes its result)"
                continue
            file = f"amp-{index}-{n}-{k}{tag}.npz"
            with open(os.path.join(out, file), "wb") as fh:
                fh.write(lv.write_case(new, arrays_k))
            kept.append({"file": file, "param": param, "value": variant.get("set", {}).get(param),
                         "set": variant.get("set", {}), "kind": variant.get("kind", "value"),
                         "fill": variant.get("fill", []), "noise": variant.get("noise") or {},
                         "base": name, "when": when, "effective": effective})
        if kept:
            return kept, applied, why
    return [], applied, why


def _zero_part(entry: tuple[str, Any, Any]) -> bool:
    """True when part of a recorded call's result is a float array of zeros only (the gradient of a zero upstream
    gradient): a case varied from it tests nothing of how that part is computed, so plans try other calls first."""
    import numpy as np

    def zeros(value: Any) -> bool:
        if isinstance(value, np.ndarray):
            return value.size > 0 and np.issubdtype(value.dtype, np.floating) and not value.any()
        if isinstance(value, list | tuple):
            return any(zeros(v) for v in value)
        return isinstance(value, dict) and any(zeros(v) for v in value.values())

    try:
        return zeros(lv.Case(entry[1], entry[2]).expected)
    except Exception:  # noqa: BLE001 - a result that does not decode here is tried in its recorded place
        return False


def _unchanged(checker: dict[str, Any], mine: Any, base: Any) -> bool:
    """True when a varied call gives what its base call gave (result, arguments changed, ``self`` after), as the
    test compares: the variant tells no wrong answer apart."""
    pairs = [(mine.expected, base.expected), *((mine.changed.get(n), v) for n, v in base.changed.items())]
    if base.state_after is not None and mine.state_after is not None:
        before, set_ = base.state or {}, mine.state or {}
        same_input = [k for k in base.state_after if k in before and k in set_
                      and _agree(checker, set_[k], before[k], base)]  # not an attribute the variant set
        pairs += [(mine.state_after.get(k), base.state_after[k]) for k in same_input]
    return all(_agree(checker, got, want, base) for got, want in pairs)


def _agree(checker: dict[str, Any], got: Any, want: Any, case: Any) -> bool:
    """True when two results of the golden code on ``case`` match as the test compares."""
    try:
        if checker.get("kind") == "exact":
            lc.assert_equal(got, want)
        else:
            lc.assert_close(got, want, **ls.tolerance(checker, case))
    except AssertionError:
        return False
    return True


def _effective(t: dict[str, Any], func: Any, owner: Any, factory: Any, case: dict[str, Any],
               arrays: dict[str, Any], plan: dict[str, Any], variant: dict[str, Any], result: Any,
               job: dict[str, Any]) -> list[str]:
    """The parameters of a pair's case that matter to its result: those without which (the others still set)
    the golden result differs. A pair whose change comes from one of them alone varies only that one."""
    out = []
    for name in variant.get("set", {}):
        rest = {k: v for k, v in variant["set"].items() if k != name}
        built = _variant(case, arrays, plan, {**variant, "set": rest}, [])
        if built is None:
            continue
        try:
            alone, _, _ = _call(func, owner, t["binding"], factory, built[0], built[1], job["timeout"])
        except (Exception, _Timeout):  # noqa: BLE001 - without it the call fails: it matters
            out.append(name)
            continue
        if not _agree(job["checker"], alone, result, lv.Case(built[0], built[1])):
            out.append(name)
    return out


def _knife_safe(t: dict[str, Any], func: Any, owner: Any, factory: Any, case: dict[str, Any],
                arrays: dict[str, Any], job: dict[str, Any]) -> bool:
    """``_knife_edge``, False when the inputs cannot be nudged (an array type numpy cannot step)."""
    try:
        return _knife_edge(t, func, owner, factory, case, arrays, job)
    except (Exception, _Timeout):  # noqa: BLE001
        return False


def _knife_edge(t: dict[str, Any], func: Any, owner: Any, factory: Any, case: dict[str, Any],
                arrays: dict[str, Any], job: dict[str, Any]) -> bool:
    """True when a one-ulp change of the call's floating array inputs changes the golden result beyond the
    checker's tolerance: the case hangs on exact float equality (``p + r == 0`` by cancellation)."""
    import numpy as np

    if case.get("changed") or case.get("self_after") is not None:
        return False
    keys = [k for a in case["arguments"] if (k := _key(case, a["name"], arrays)) is not None
            and np.issubdtype(arrays[k].dtype, np.floating)]
    if not keys:
        return False
    base = lv.Case(case, arrays)
    try:
        as_recorded, _, _ = _call(func, owner, t["binding"], factory, case, arrays, job["timeout"])
    except (Exception, _Timeout):  # noqa: BLE001 - the replay check names such a call
        return False
    if not _same(job["checker"], as_recorded, base, None):
        return False  # the call differs from itself (the checker rejects it, or it draws random numbers)
    for up in (True, False):
        nudged = {**arrays, **{k: ls.nudged(arrays[k], up) for k in keys}}
        try:
            result, _, _ = _call(func, owner, t["binding"], factory, case, nudged, job["timeout"])
        except (Exception, _Timeout):  # noqa: BLE001 - a nudge that raises says nothing of the branch
            return False
        if not _same(job["checker"], result, base, None):
            return True
    return False


def _holds(case: dict[str, Any], arrays: dict[str, Any], remap: list[str], value: Any) -> bool:
    """True when one of the ``remap`` array arguments holds ``value``."""
    for a in case["arguments"]:
        node = a["value"]
        if a["name"] in remap and isinstance(node, dict) and node.get("key") in arrays \
                and (arrays[node["key"]] == value).any():
            return True
    return False


def _remapped(array: Any, old: Any, new: Any) -> Any:
    """``array`` with its entries equal to ``old`` set to ``new``; where ``old`` is an id (not negative: a blank
    or a padding token of the vocabulary), the entries that held ``new`` take ``old`` in exchange, so that no
    ordinary entry becomes the special one (a label equal to the new blank). A negative sentinel (-100) is no
    id an ordinary entry may hold, so those keep ``new`` and are special too."""
    out = array.copy()
    out[array == old] = new
    if old >= 0:
        out[array == new] = old
    return out


HANG_FLOOR, HANG_FACTOR = 0.5, 50.0
"""A mutant's call that runs past the larger of ``HANG_FLOOR`` seconds and ``HANG_FACTOR`` times the golden code's
slowest call on the cases loops (``while start < n`` whose step was dropped): killed. The job's limit stays the
most."""


def _hang_limit(golden: Any, cases: list[tuple[str, Any, Any]], most: float) -> float:
    """The limit of one mutant's call on a case: ``HANG_FACTOR`` times the golden code's slowest call on them, at
    least ``HANG_FLOOR`` and at most ``most`` (a mutant that loops for ever then costs a fraction of a second, not
    the job's 5 s on every case)."""
    slowest = 0.0
    for _, case, arrays in cases:
        start = time.monotonic()
        with contextlib.suppress(Exception, _Timeout):  # a raising case: its time still counts
            golden.call(case, arrays)
        slowest = max(slowest, time.monotonic() - start)
    return min(most, max(HANG_FLOOR, HANG_FACTOR * slowest))


def _kills(t: dict[str, Any], job: dict[str, Any], cases: list[tuple[str, Any, Any]], factory: Any,
           deadline: float) -> tuple[dict[str, list[str]], list[str]]:
    """The mutants each case kills, by case file; and the ids of mutants not tried (the budget ran out)."""
    kills: dict[str, list[str]] = {name: [] for name, _, _ in cases}
    untried: list[str] = []
    path = os.path.join(os.getcwd(), t["file"])
    for mutant in t["mutants"]:
        if time.monotonic() > deadline:
            untried.append(mutant["id"])
            continue
        try:
            module = ls.mutant_module(t["module"], path, mutant["source"])
            func, owner = ls.resolve(module, t["qualname"])
        except (Exception, _Timeout):  # noqa: BLE001 - a mutant that cannot load is killed by every case
            for name in kills:
                kills[name].append(mutant["id"])
            continue
        target = ls.Target(func, owner, t["binding"], factory, job["timeout"], job["checker"])
        for name, case, arrays in cases:
            if target.differs(case, arrays):
                kills[name].append(mutant["id"])
            if target.hung:  # a mutant that loops is killed by the first case it loops on: waiting out the
                break  # limit on every other case (5 s each) is all the rest would do
    return kills, untried


def main() -> int:
    """Run the job; write ``probe.json``."""
    harness = os.environ[lp.ENV_HARNESS]
    out = os.environ.get(lp.ENV_OUT) or os.getcwd()
    with open(os.path.join(harness, "probe", "job.json"), encoding="utf-8") as fh:
        job = json.load(fh)
    signal.signal(signal.SIGALRM, ls.on_alarm)
    deadline = time.monotonic() + float(job.get("budget", 300.0))
    report: list[dict[str, Any]] = []
    for index, t in enumerate(job["targets"]):
        root = os.path.join(os.getcwd(), t["root"]) if t["root"] else os.getcwd()
        if root not in sys.path:
            sys.path.insert(0, root)
        module = importlib.import_module(t["module"])
        func, owner = ls.resolve(module, t["qualname"])
        factory = None
        if t.get("factory"):
            mod, _, qual = t["factory"].partition(":")
            factory = importlib.import_module(mod)
            for part in qual.split("."):
                factory = getattr(factory, part)
        cases = []
        for rel in t["cases"]:
            case, arrays = lv.read_case_file(os.path.join(harness, rel))
            cases.append((os.path.basename(rel), case, arrays))
        knife = [name for name, case, arrays in cases if _knife_safe(t, func, owner, factory, case, arrays, job)]
        cases = [c for c in cases if c[0] not in knife]
        made, notes = _amplify(t, func, owner, factory, cases, job, out, index)
        for entry in made:
            case, arrays = lv.read_case_file(os.path.join(out, entry["file"]))
            cases.append((entry["file"], case, arrays))
        golden = ls.Target(func, owner, t["binding"], factory, job["timeout"], job["checker"])
        scanned = lscan.scan(golden, t, cases, out, index)
        for entry in scanned:
            case, arrays = lv.read_case_file(os.path.join(out, entry["file"]))
            cases.append((entry["file"], case, arrays))
        made += scanned
        golden.timeout = _hang_limit(golden, cases, job["timeout"])
        kills, untried = _kills(t, {**job, "timeout": golden.timeout}, cases, factory, deadline)
        every = {m for ids in kills.values() for m in ids}
        alive = [m for m in t["mutants"] if m["id"] not in every and m["id"] not in untried]
        found = ls.search(golden, t, alive, cases, out, index, min(deadline, time.monotonic() + job.get(
            "search_budget", 30.0)))
        for entry in found["made"]:
            kills[entry["file"]] = [m for m, f in found["killed"].items() if f == entry["file"]]
        made += found.pop("made")
        found["searched"] = len(alive)
        report.append({"target": t["target"], "amplified": made, "notes": notes, "kills": kills,
                       "untried": untried, "knife": knife, "search": found})
    with open(os.path.join(out, "probe.json"), "w", encoding="utf-8") as fh:
        json.dump({"targets": report}, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
