"""What recorded calls catch, and more cases where the recording never varied a parameter: run in the task's
sandbox after a recording, on the golden tree, as ``python3 -m lmrbench_probe``.

The job is ``$LMRBENCH_HARNESS/probe/job.json``::

    {"timeout": 5.0, "budget": 300.0, "checker": {"kind": "numeric", "rtol": ..., "atol": ...},
     "targets": [{"target": "f.py::loss", "module": "pkg.f", "root": "", "qualname": "loss",
                  "binding": "function", "factory": null,
                  "cases": ["probe/t0-c0.npz", ...],
                  "amplify": [{"param": "beta", "values": [0.05, 0.2]}],
                  "mutants": [{"id": "ab12...", "source": "<whole mutated goal file>"}]}]}

Amplification: for each parameter to vary, the first recorded case (without random state or in-place changes)
on which some of the values change the golden result gives one new case per such value, the golden code's
result as the expected value, written as ``amp-<t>-<param>-<k>.npz`` to ``$LMRBENCH_OUT``. Then every case
(recorded and new) is called on every mutant, fresh from its file, and compared as the generated test
compares; a mutant that raises, times out or differs is killed by that case. ``$LMRBENCH_OUT/probe.json``
holds, per target, the new cases, the mutants each case kills and notes.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import time
import types
from typing import Any

import lmrbench_checkers as lc
import lmrbench_protocol as lp
import lmrbench_values as lv


class _Timeout(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def _resolve(module: Any, qualname: str, binding: str) -> tuple[Any, Any]:
    """(the plain function, its class or None) of ``qualname`` in ``module``."""
    parts = qualname.split(".")
    owner: Any = module
    for part in parts[:-1]:
        owner = getattr(owner, part)
    raw = owner.__dict__[parts[-1]] if owner is not module else getattr(module, parts[-1])
    func = raw.__func__ if isinstance(raw, staticmethod | classmethod) else raw
    return func, (owner if owner is not module else None)


def _mutant_module(name: str, path: str, source: str) -> Any:
    """A fresh module ``name`` run from ``source`` (not put in ``sys.modules``)."""
    module = types.ModuleType(name)
    module.__file__ = path
    module.__package__ = name.rpartition(".")[0] if not path.endswith("__init__.py") else name
    exec(compile(source, path, "exec"), module.__dict__)
    return module


def _call(func: Any, owner: Any, binding: str, factory: Any, case: dict[str, Any], arrays: dict[str, Any],
          timeout: float) -> tuple[Any, Any, Any]:
    """Call ``func`` on a fresh decoding of the case: (result, decoded case, instance)."""
    decoded = lv.Case(case, arrays)
    if decoded.random_state:
        decoded.restore_random_state()
    obj = None
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        if binding == "method":
            obj = decoded.instance(owner, factory)
            result = func(obj, *decoded.args, **decoded.kwargs)
        elif binding == "classmethod":
            result = func(owner, *decoded.args, **decoded.kwargs)
        else:
            result = func(*decoded.args, **decoded.kwargs)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return result, decoded, obj


def _same(checker: dict[str, Any], result: Any, decoded: Any, obj: Any, whole: bool = True) -> bool:
    """True when the result (and what the reference changed) matches the case, as the generated test checks."""
    kind = checker.get("kind", "numeric")
    tol = {"rtol": checker.get("rtol", 1e-5), "atol": checker.get("atol", 1e-8)}
    try:
        if kind == "exact":
            lc.assert_equal(result, decoded.expected)
        elif kind == "unordered" and whole:
            lc.assert_unordered(result, decoded.expected, **tol)
        elif kind == "text" and whole:
            lc.assert_similar_text(result, decoded.expected, threshold=checker.get("text_threshold", 0.9), **tol)
        else:
            lc.assert_close(result, decoded.expected, **tol)
        for name, want in decoded.changed.items():
            lc.assert_close(decoded.argument(name), want, where=f"argument `{name}`", **tol)
        if decoded.state_after is not None and obj is not None:
            lc.assert_close(decoded.attributes_of(obj), decoded.state_after, where="self", **tol)
    except AssertionError:
        return False
    return True


def _amplify(t: dict[str, Any], func: Any, owner: Any, factory: Any, cases: list[tuple[str, Any, Any]],
             job: dict[str, Any], out: str, index: int) -> tuple[list[dict[str, Any]], list[str]]:
    """New cases with each parameter of ``t["amplify"]`` varied; (their entries, notes)."""
    made: list[dict[str, Any]] = []
    notes: list[str] = []
    for plan in t.get("amplify", []):
        param, why = plan["param"], "it changes no result of the recorded calls"
        kept: list[dict[str, Any]] = []
        for name, case, arrays in cases:
            if case.get("random_state") or case.get("changed") or case.get("self_after") is not None:
                continue
            names = [a["name"] for a in case["arguments"]]
            if param not in names:
                continue
            when = plan.get("when", {})
            if any(k not in names or case["arguments"][names.index(k)]["value"] != v for k, v in when.items()):
                continue  # a combination is made from a call that has the other parameter's value
            kept = []
            remap = [n for n in plan.get("remap", []) if n in names]
            old = case["arguments"][names.index(param)]["value"]
            if remap and not _holds(case, arrays, remap, old):
                continue
            for k, value in enumerate(plan["values"]):
                new = json.loads(json.dumps(case))
                new["arguments"][names.index(param)]["value"] = value
                inputs = {key: a for key, a in arrays.items() if not key.startswith("out")}
                for holder in remap:
                    node = new["arguments"][names.index(holder)]["value"]
                    inputs[node["key"]] = _remapped(inputs[node["key"]], old, value)
                arrays_k = {**arrays, **inputs}
                try:
                    result, _, _ = _call(func, owner, t["binding"], factory, new, arrays_k, job["timeout"])
                    again, _, _ = _call(func, owner, t["binding"], factory, new, arrays_k, job["timeout"])
                    enc = lv.Encoder("out")
                    new["expected"] = enc.encode(result, "the return value")
                    lc.assert_equal(again, result)
                except (Exception, _Timeout) as exc:  # noqa: BLE001 - any failure means no case
                    why = f"{param}={value!r} fails: {type(exc).__name__}: {str(exc)[:120]}"
                    continue
                base = lv.Case(case, arrays)
                if not remap and _same(job["checker"], result, base, None):
                    continue  # a value that changes nothing tells no wrong answer apart
                file = f"amp-{index}-{param}-{k}{'-' + '-'.join(when) if when else ''}.npz"
                with open(os.path.join(out, file), "wb") as fh:
                    fh.write(lv.write_case(new, {**inputs, **enc.arrays}))
                kept.append({"file": file, "param": param, "value": value, "base": name, "when": when})
            if kept:
                break
        made += kept
        if not kept and not plan.get("when"):
            notes.append(f"{param}: no case could be made ({why})")
    return made, notes


def _holds(case: dict[str, Any], arrays: dict[str, Any], remap: list[str], value: Any) -> bool:
    """True when one of the ``remap`` array arguments holds ``value``."""
    for a in case["arguments"]:
        node = a["value"]
        if a["name"] in remap and isinstance(node, dict) and node.get("key") in arrays \
                and (arrays[node["key"]] == value).any():
            return True
    return False


def _remapped(array: Any, old: Any, new: Any) -> Any:
    """``array`` with its entries equal to ``old`` set to ``new``."""
    out = array.copy()
    out[array == old] = new
    return out


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
            module = _mutant_module(t["module"], path, mutant["source"])
            func, owner = _resolve(module, t["qualname"], t["binding"])
        except (Exception, _Timeout):  # noqa: BLE001 - a mutant that cannot load is killed by every case
            for name in kills:
                kills[name].append(mutant["id"])
            continue
        for name, case, arrays in cases:
            try:
                result, decoded, obj = _call(func, owner, t["binding"], factory, case, arrays, job["timeout"])
                killed = not _same(job["checker"], result, decoded, obj)
            except (Exception, _Timeout):  # noqa: BLE001
                killed = True
            if killed:
                kills[name].append(mutant["id"])
    return kills, untried


def main() -> int:
    """Run the job; write ``probe.json``."""
    harness = os.environ[lp.ENV_HARNESS]
    out = os.environ.get(lp.ENV_OUT) or os.getcwd()
    with open(os.path.join(harness, "probe", "job.json"), encoding="utf-8") as fh:
        job = json.load(fh)
    signal.signal(signal.SIGALRM, _on_alarm)
    deadline = time.monotonic() + float(job.get("budget", 300.0))
    report: list[dict[str, Any]] = []
    for index, t in enumerate(job["targets"]):
        root = os.path.join(os.getcwd(), t["root"]) if t["root"] else os.getcwd()
        if root not in sys.path:
            sys.path.insert(0, root)
        module = importlib.import_module(t["module"])
        func, owner = _resolve(module, t["qualname"], t["binding"])
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
        made, notes = _amplify(t, func, owner, factory, cases, job, out, index)
        for entry in made:
            case, arrays = lv.read_case_file(os.path.join(out, entry["file"]))
            cases.append((entry["file"], case, arrays))
        kills, untried = _kills(t, job, cases, factory, deadline)
        report.append({"target": t["target"], "amplified": made, "notes": notes, "kills": kills,
                       "untried": untried})
    with open(os.path.join(out, "probe.json"), "w", encoding="utf-8") as fh:
        json.dump({"targets": report}, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
