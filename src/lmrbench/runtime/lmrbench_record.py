"""Record the first calls of a task's goal functions while the author's command runs in the task's sandbox.

Started by ``sitecustomize`` in every Python process of the command when ``LMRBENCH_RECORD_SPEC`` is set
(JSON: ``{"targets": [{"file": "trainers.py", "qualname": "Trainer.loss"}], "max_calls": 3, "max_bytes": ...,
"factory": "module:function" | null, "checker": {"kind": ..., "rtol": ...}}``); files are relative to
``LMRBENCH_RECORD_ROOT`` (the repository root). Output goes to ``LMRBENCH_OUT``:

- ``case-<pid>-<seq>.npz``: one distinct call (``lmrbench_values`` case format), at most ``max_calls`` per
  target and process (the host keeps the cases it wants among them);
- ``calls-<pid>.jsonl``: one line per saved case (target, input digest, sizes, randomness, replay outcome);
- ``summary-<pid>.json``: calls seen, targets patched, whether the goal file ran as the main script, the
  line arcs each target reached over all its calls (``reached``), and the calls skipped because their values
  cannot be saved or decide a cutoff by rounding (``skipped``; precision-sensitive ones say what moved in
  ``precision``);
- ``error-<pid>.json``: the first problem that ends the recording (a call over the size limit...).

How calls are caught: an import hook on ``sys.meta_path`` recognises the goal file by its path, whatever name
it is imported under, and after the module has run replaces the goal function (or the class attribute of a
method, keeping staticmethod/classmethod) by a recording wrapper, and every other module-level name bound to
it. Code that later does ``from trainers import loss`` therefore gets the wrapper; a reference taken while the
goal module itself was still running (a registry filled at import time) is not caught.

For each new call (inputs not seen before, compared by the digest of their encoding): the arguments (bound by
the signature) and, for methods, a copy of the instance's ``__dict__`` are encoded before the call; the return
value, the arguments the call changed in place and the instance's attributes after the call are encoded after.
The global random state (random, numpy, torch) is saved before the call; when the call moved it, the case
keeps it so the test can restore it. Then the call is replayed exactly as the generated test will do it
(decoded inputs, a rebuilt instance, the random state restored) and the outcome is compared: a difference
means the function is non-deterministic or reads state that was not recorded. The program's own random state
is put back after the replay, so the command runs on as it would have.

Coverage: each call of a goal function runs under a tracer scoped to the function's own frames (``sys.settrace``
with a local trace function for the goal's code object only), which records the (from line, to line) arcs the
call took; each saved case carries its arcs, and the summary the union over every call (the first
``MAX_TRACED`` per target). The host maps them onto the golden body's statements and branches with the
``coverage`` package and picks the cases that add most. The tracer needs nothing in the task's image; when
another tracer is active (a debugger, coverage run by the author), calls are not traced.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import sys
import threading
import time
from typing import Any

_KINDS = {k: k.lower() for k in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD", "VAR_POSITIONAL", "KEYWORD_ONLY",
                                 "VAR_KEYWORD")}


MAX_TRACED = 10_000
"""Calls traced per target after its cases are saved (only to report what the run reached)."""
MAX_SAMPLED = 2_000
"""Calls per target, after its first ``max_calls`` are saved, whose inputs are encoded to sample the rest of the
run (a call that reaches new lines, moves a scalar far outside the saved range or changes its instance is saved
too)."""
SMALL_CASE = 200_000
"""Largest saved case (bytes) of a target whose later calls are sampled (bigger ones cost too much to encode)."""


def _code_of(func: Any) -> Any:
    inner = func
    for _ in range(20):  # functools.wraps chains
        nxt = getattr(inner, "__wrapped__", None)
        if nxt is None:
            break
        inner = nxt
    return getattr(inner, "__code__", None)


def _traced(func: Any, code: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """Call ``func``; returns (result, the set of line arcs taken in ``code``'s frames, or None)."""
    if code is None or sys.gettrace() is not None:
        return func(*args, **kwargs), None
    arcs: set[tuple[int, int]] = set()
    entry = -code.co_firstlineno

    def glob(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code is not code:
            return None
        last = [entry]

        def local(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                arcs.add((last[0], frame.f_lineno))
                last[0] = frame.f_lineno
            elif event == "return":
                arcs.add((last[0], entry))
            return local

        return local

    sys.settrace(glob)
    try:
        result = func(*args, **kwargs)
    finally:
        sys.settrace(None)
    return result, arcs


class _State:
    def __init__(self, spec: dict[str, Any], root: str, out: str) -> None:
        self.spec = spec
        self.root = root
        self.out = out
        self.max_calls = int(spec.get("max_calls", 3))
        self.nested = bool(spec.get("nested", False))
        """Record a target called from inside another target's call (``task suggest``, counting every
        candidate's calls); otherwise only the outermost call is recorded, and never a call of a target
        from inside itself."""
        self.max_bytes = int(spec.get("max_bytes", 50_000_000))
        self.lock = threading.RLock()
        self.local = threading.local()
        self.seen: set[str] = set()
        self.saved: dict[str, int] = {}
        self.dropped: dict[str, int] = {}
        """Calls of each target not kept as precision-sensitive: as many as ``max_calls`` end its recording."""
        self.reached: dict[str, set[tuple[int, int]]] = {}
        self.traced: dict[str, int] = {}
        self.kept_arcs: dict[str, set[tuple[int, int]]] = {}
        """The arcs of each target's saved calls: a later call that reaches others is saved."""
        self.changers: dict[str, int] = {}
        """Per target, the saved calls that changed its instance (sampled ones that do are saved up to two)."""
        self.ranges: dict[str, dict[str, list[Any]]] = {}
        """Per target, each scalar leaf's saved values (numbers: [low, high]; flags and text: every value)."""
        self.largest: dict[str, int] = {}
        self.sampled: dict[str, int] = {}
        self.last_size = 0
        self.calls = 0
        self.done = False
        self.skipped: list[dict[str, str]] = []
        self.unsaved: dict[str, int] = {}
        """Per target, every call skipped (``skipped`` notes only the first few)."""
        self.patched: list[str] = []
        self.by_path: dict[str, list[str]] = {}
        for t in spec["targets"]:
            path = os.path.realpath(os.path.join(root, t["file"]))
            self.by_path.setdefault(path, []).append(t["qualname"])
        self.files = {os.path.realpath(os.path.join(root, t["file"])): t["file"] for t in spec["targets"]}

    def error(self, message: str) -> None:
        self.done = True
        path = os.path.join(self.out, f"error-{os.getpid()}.json")
        if not os.path.exists(path):
            _write(path, json.dumps({"message": message}).encode())

    def skip(self, target: str, message: str, precision: str = "") -> None:
        """A call that cannot be saved: noted (the first few), and the recording goes on with the next call.
        ``precision``: what changed when the probes re-ran a precision-sensitive call (``outcome_change``)."""
        self.unsaved[target] = self.unsaved.get(target, 0) + 1
        if len(self.skipped) < 20:
            note = {"target": target, "message": message}
            self.skipped.append({**note, "precision": precision} if precision else note)

    def summary(self) -> None:
        main = sys.argv[0] if sys.argv and sys.argv[0] not in ("", "-c") else None  # script or -m module
        data = {
            "pid": os.getpid(),
            "calls": self.calls,
            "saved": self.saved,
            "patched": self.patched,
            "main_is_goal": main is not None and os.path.realpath(main) in self.by_path,
            "reached": {t: sorted(a) for t, a in self.reached.items()},
            "skipped": self.skipped,
            "unsaved": self.unsaved,
        }
        _write(os.path.join(self.out, f"summary-{os.getpid()}.json"), json.dumps(data).encode())


_STATE: _State | None = None


def _write(path: str, data: bytes) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def install() -> None:
    """Start recording in this process (idempotent); does nothing unless ``LMRBENCH_RECORD_SPEC`` is set."""
    global _STATE
    import lmrbench_protocol as protocol

    raw = os.environ.get(protocol.ENV_RECORD_SPEC)
    if not raw or _STATE is not None:
        return
    out = os.environ.get(protocol.ENV_OUT) or os.getcwd()
    root = os.environ.get(protocol.ENV_RECORD_ROOT) or os.getcwd()
    _STATE = _State(json.loads(raw), root, out)
    import lmrbench_hook

    lmrbench_hook.install(set(_STATE.by_path), _instrument)
    atexit.register(_STATE.summary)


def _instrument(module: Any, path: str) -> None:
    """Put the recording wrappers in place of the goal functions of a goal module that just ran."""
    assert _STATE is not None
    for qualname in _STATE.by_path[path]:
        try:
            _patch(module, qualname, _STATE, _STATE.files[path])
        except Exception as exc:  # never break the author's program
            _STATE.error(f"cannot instrument {_STATE.files[path]}::{qualname}: {exc}")


def _patch(module: Any, qualname: str, state: _State, file: str) -> None:
    parts = qualname.split(".")
    owner: Any = module
    for part in parts[:-1]:
        owner = owner.__dict__.get(part) if hasattr(owner, "__dict__") else None
        if not isinstance(owner, type):
            raise ValueError(
                f"{'.'.join(parts[:-1])} is not a class of {file} (nested functions cannot be recorded)"
            )
    name = parts[-1]
    if name not in owner.__dict__:
        raise ValueError(f"no function {qualname} in {file}")
    raw = owner.__dict__[name]
    target = f"{file}::{qualname}"
    if owner is module:
        if not callable(raw):
            raise ValueError(f"{qualname} is not a function")
        wrapper = _wrap(raw, "function", None, target, state)
        for key, value in list(module.__dict__.items()):
            if value is raw:
                setattr(module, key, wrapper)
    elif isinstance(raw, staticmethod):
        setattr(owner, name, staticmethod(_wrap(raw.__func__, "staticmethod", owner, target, state)))
    elif isinstance(raw, classmethod):
        setattr(owner, name, classmethod(_wrap(raw.__func__, "classmethod", owner, target, state)))
    elif isinstance(raw, property):
        raise ValueError(f"{qualname} is a property; record the methods that use it instead")
    elif callable(raw):
        setattr(owner, name, _wrap(raw, "method", owner, target, state))
    else:
        raise ValueError(f"{qualname} is not a function")
    state.patched.append(target)


def _wrap(func: Any, binding: str, owner: Any, target: str, state: _State) -> Any:
    import inspect

    if inspect.isgeneratorfunction(func) or inspect.iscoroutinefunction(func):
        raise ValueError("generators and coroutines cannot be recorded")
    sig = inspect.signature(func)
    code = _code_of(func)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        active = getattr(state.local, "active", ())
        if state.done or target in active or (active and not state.nested) or getattr(state.local, "quiet", False):
            return func(*args, **kwargs)
        if state.saved.get(target, 0) >= state.max_calls and state.dropped.get(target, 0) < state.max_calls \
                and state.saved.get(target, 0) < 2 * state.max_calls and state.sampled.get(target, 0) < MAX_SAMPLED \
                and state.largest.get(target, 0) <= SMALL_CASE:
            state.sampled[target] = state.sampled.get(target, 0) + 1
            with state.lock:
                state.local.active = (*active, target)
                try:
                    return _Recorder(func, sig, binding, owner, target, state).call(args, kwargs, sample=True)
                finally:
                    state.local.active = active
        if state.saved.get(target, 0) >= state.max_calls or state.dropped.get(target, 0) >= state.max_calls:
            if state.traced.get(target, 0) >= MAX_TRACED:
                return func(*args, **kwargs)
            state.traced[target] = state.traced.get(target, 0) + 1
            result, arcs = _traced(func, code, args, kwargs)
            if arcs:
                with state.lock:
                    state.reached.setdefault(target, set()).update(arcs)
            return result
        with state.lock:
            state.local.active = (*active, target)
            try:
                return _Recorder(func, sig, binding, owner, target, state).call(args, kwargs)
            finally:
                state.local.active = active

    return wrapper


class _Recorder:
    """One call of a goal function: encode, call, encode, replay, save."""

    def __init__(self, func: Any, sig: Any, binding: str, owner: Any, target: str, state: _State) -> None:
        self.func, self.sig, self.binding, self.owner = func, sig, binding, owner
        self.target, self.state = target, state
        self.arcs: Any = None

    def _run(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call the function traced; its arcs go to ``self.arcs`` and the target's reached set."""
        result, self.arcs = _traced(self.func, _code_of(self.func), args, kwargs)
        if self.arcs:
            self.state.reached.setdefault(self.target, set()).update(self.arcs)
        return result

    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any], sample: bool = False) -> Any:
        """Record the call; with ``sample`` (the target's first calls are saved), save it only when it reaches
        lines or branches no saved call reached, moves a scalar far outside the saved values, or changes its
        instance (``_changes``)."""
        import lmrbench_values as lv

        state = self.state
        state.calls += 1
        try:
            bound = self.sig.bind(*args, **kwargs)
        except TypeError:
            return self.func(*args, **kwargs)
        params = list(self.sig.parameters.values())
        instance = None
        if self.binding in ("method", "classmethod") and params:
            instance = bound.arguments.pop(params[0].name, None)
            params = params[1:]
        enc = lv.Encoder("in")
        try:
            arguments = [
                {"name": p.name, "kind": _KINDS[p.kind.name], "value": enc.encode(_arg(bound, p), p.name)}
                for p in params
            ]
            self_node: Any = None
            skipped: list[str] = []
            if self.binding == "method":
                self_node, skipped = self._encode_state(instance, enc, "self")
        except lv.UnencodableValue as exc:
            state.skip(self.target, f"{self.target}: {exc}{self._hint(exc)}")
            return self.func(*args, **kwargs)
        digest = lv.digest({"a": arguments, "s": self_node}, enc.arrays)
        if digest in state.seen:
            return self._run(args, kwargs)
        held = _held_before(lv, bound, params, instance if self.binding == "method" else None, enc)
        before = lv.get_random_state()
        result = self._run(args, kwargs)
        after = lv.get_random_state()
        leaves = _numbers(arguments, self_node, enc.arrays)
        if sample and not self._worth(leaves) and not self._changes(lv, instance, self_node, enc):
            state.seen.add(digest)
            return result
        quiet = getattr(state.local, "quiet", False)
        state.local.quiet = True  # the replay and the precision probes call the targets it calls again
        try:
            self._save(
                lv, enc, arguments, self_node, skipped, bound, params, instance, result, before, after, digest,
                held,
            )
            self._kept(leaves, state.last_size)
        except lv.UnencodableValue as exc:
            state.skip(self.target, f"{self.target}: {exc}")
        except Exception as exc:  # a recording problem must never change the program's behaviour
            number = state.saved.get(self.target, 0) + 1
            state.skip(self.target, f"{self.target}: recording call {number} failed: {type(exc).__name__}: {exc}")
        finally:
            state.local.quiet = quiet
            lv.set_random_state(after)
        return result

    def _worth(self, leaves: dict[str, Any]) -> bool:
        """True when this call reached arcs no saved call reached, or a scalar leaf lies beyond the saved ones by
        more than their spread (so the saved calls spread over a long run: steps 0-11, then 22, 44, 88...), or a
        flag or text leaf takes a new value."""
        if self.arcs and not self.arcs <= self.state.kept_arcs.get(self.target, set()):
            return True
        ranges = self.state.ranges.get(self.target, {})
        for name, value in leaves.items():
            known = ranges.get(name)
            if known is None:
                continue
            if type(value) in (bool, str):
                if value not in known:
                    return True
                continue
            low, high = known
            spread = max(high - low, 1 if type(value) is int else abs(high) * 1e-3 or 1e-12)
            if value > high + spread or value < low - spread:
                return True
        return False

    def _changes(self, lv: Any, instance: Any, node: Any, enc: Any) -> bool:
        """True when a method's call changed its instance and fewer than two saved calls of it have: a pruning
        step that prunes after steps that change nothing, and the next, which starts from a pruned state."""
        if self.binding != "method" or self.state.changers.get(self.target, 0) >= 2:
            return False
        try:
            after, _ = self._encode_state(instance, (out := lv.Encoder("out")), "self")
        except lv.UnencodableValue:
            return False
        return bool(lv.digest(after, out.arrays) != lv.digest(node, enc.arrays))

    def _kept(self, leaves: dict[str, Any], size: int) -> None:
        """Note a saved call's arcs, scalar leaves and size."""
        state = self.state
        state.kept_arcs.setdefault(self.target, set()).update(self.arcs or ())
        state.largest[self.target] = max(state.largest.get(self.target, 0), size)
        ranges = state.ranges.setdefault(self.target, {})
        for name, value in leaves.items():
            if type(value) in (bool, str):
                known = ranges.setdefault(name, [])
                if value not in known:
                    known.append(value)
            else:
                low, high = ranges.get(name, [value, value])
                ranges[name] = [min(low, value), max(high, value)]

    def _hint(self, exc: Any) -> str:
        if exc.where.startswith("self.") and not self.state.spec.get("factory"):
            return "; name a factory that builds the object with --self-factory module:function"
        return ""

    def _encode_state(self, instance: Any, enc: Any, where: str) -> tuple[Any, list[str]]:
        import lmrbench_values as lv

        attrs = getattr(instance, "__dict__", None)
        if attrs is None:
            raise lv.UnencodableValue(where, type(instance).__qualname__, "the object has no __dict__")
        skipped: list[str] = []
        items: dict[str, Any] = {}
        for name, value in attrs.items():
            try:
                lv.Encoder("probe").encode(value, f"{where}.{name}")
            except lv.UnencodableValue:
                if not self.state.spec.get("factory"):
                    raise
                skipped.append(name)
                continue
            items[name] = value
        return enc.encode(items, where), skipped

    def _save(
        self,
        lv: Any,
        enc: Any,
        arguments: list[dict[str, Any]],
        self_node: Any,
        skipped: list[str],
        bound: Any,
        params: list[Any],
        instance: Any,
        result: Any,
        before: Any,
        after: Any,
        digest: str,
        held: list[tuple[list[Any], Any, Any]],
    ) -> None:
        state = self.state
        drew = not lv.same_random_state(before, after)
        out = lv.Encoder("out")
        expected = out.encode(result, "the return value")
        changed = self._changed(lv, out, arguments, enc, bound, params)
        self_after = None
        if self.binding == "method":
            after_node, _ = self._encode_state(instance, out, "self (after the call)")
            if lv.digest(after_node, out.arrays) != lv.digest(self_node, enc.arrays):
                self_after = after_node
                state.changers[self.target] = state.changers.get(self.target, 0) + 1
        case = {
            "format": lv.CASE_FORMAT,
            "version": lv.CASE_VERSION,
            "target": self.target,
            "binding": self.binding,
            "arguments": arguments,
            "self": self_node,
            "skipped_state": skipped,
            "factory": state.spec.get("factory"),
            "expected": expected,
            "changed": changed,
            "self_after": self_after,
            "random_state": None,
        }
        named = {p.name: _arg(bound, p) for p in params}
        if self.binding == "method" and (any(lv.array_leaves(v, [k]) for k, v in named.items())
                                         or len(lv.array_leaves(vars(instance), ["self"])) > 1):
            # what self shares with the caller's arrays: a candidate that shares more keeps no copy of its own
            mine = {k: v for k, v in vars(instance).items() if k not in skipped}
            case["shares"] = lv.shared_memory(mine, named)
        moved = [(path, obj) for path, obj, copy in held if not _same_leaf(obj, copy)
                 and not (path[0] == "self" and path[1] in skipped)]
        if moved:  # arrays changed in place inside the containers: a candidate that replaces them differs
            case["held"] = [{"path": path, "value": out.encode(obj, lv.held_label(path))} for path, obj in moved]
        arrays = {**enc.arrays, **out.arrays}
        if drew:
            rng = lv.Encoder("rng")
            case["random_state"] = rng.encode(before, "random state")
            arrays.update(rng.arrays)
        sizes = self._sizes(case, arrays, enc, out)
        total = sum(sizes.values())
        number = state.saved.get(self.target, 0) + 1
        if total > state.max_bytes:
            largest = max(sizes, key=sizes.__getitem__)
            state.error(
                f"{self.target}: call {number} needs {_mb(total)} of recorded data, over the limit of "
                f"{_mb(state.max_bytes)} per call (largest part: {largest}, {_mb(sizes[largest])}); record a "
                "smaller run or raise --max-bytes"
            )
            return
        replay, detail = self._replay(lv, case, arrays, before, drew)
        sensitive = self._note_precision(lv, case, arrays, before, drew, bound, params, result)
        state.seen.add(digest)
        if sensitive:
            state.dropped[self.target] = state.dropped.get(self.target, 0) + 1
            state.skip(self.target, f"{self.target}: call not kept: precision-sensitive: {sensitive}; the rounding "
                       "of its own precision decides this result, so no tolerance tells a correct program from a "
                       "wrong one (compute it in a wider dtype, or record calls whose cutoff is clear)", sensitive)
            return
        state.saved[self.target] = number
        data = lv.write_case(case, arrays)
        state.last_size = len(data)
        seq = sum(state.saved.values())
        name = f"case-{os.getpid()}-{seq}.npz"
        _write(os.path.join(state.out, name), data)
        line = {
            "file": name,
            "target": self.target,
            "digest": digest,
            "bytes": len(data),
            "sizes": sizes,
            "drew_random": drew,
            "replay": replay,
            "replay_detail": detail,
            "arcs": sorted(self.arcs) if self.arcs is not None else None,
            "time": time.time(),
            "pid": os.getpid(),
            "seq": seq,
        }
        with open(os.path.join(state.out, f"calls-{os.getpid()}.jsonl"), "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")

    def _changed(
        self, lv: Any, out: Any, arguments: list[dict[str, Any]], enc: Any, bound: Any, params: list[Any]
    ) -> dict[str, Any]:
        changed: dict[str, Any] = {}
        for entry, p in zip(arguments, params, strict=True):
            node = out.encode(_arg(bound, p), f"{p.name} (after the call)")
            if lv.digest(node, out.arrays) != lv.digest(entry["value"], enc.arrays):
                changed[p.name] = node
        return changed

    def _sizes(self, case: dict[str, Any], arrays: dict[str, Any], enc: Any, out: Any) -> dict[str, int]:
        sizes: dict[str, int] = {}

        def add(label: str, node: Any) -> None:
            keys = _array_keys(node)
            sizes[label] = len(json.dumps(node)) + sum(int(arrays[k].nbytes) for k in keys)

        for entry in case["arguments"]:
            add(f"argument `{entry['name']}`", entry["value"])
        if case["self"] is not None:
            add("`self`", case["self"])
        add("the return value", case["expected"])
        for name, node in case["changed"].items():
            add(f"argument `{name}` after the call", node)
        if case["self_after"] is not None:
            add("`self` after the call", case["self_after"])
        if case["random_state"] is not None:
            add("the random state", case["random_state"])
        return sizes

    def _replay(
        self, lv: Any, case: dict[str, Any], arrays: dict[str, Any], before: Any, drew: bool
    ) -> tuple[str, str]:
        """Call again the way the generated test will, from the saved bytes; compare what comes out."""
        try:
            decoded = lv.Case(*lv.read_case_file(_as_file(lv.write_case(case, arrays))))
            lv.set_random_state(before if drew else lv.get_random_state())
            if self.binding == "method":
                factory = _import(case["factory"]) if case["factory"] else None
                obj = decoded.instance(self.owner, factory)
                result = self.func(obj, *decoded.args, **decoded.kwargs)
            elif self.binding == "classmethod":
                result = self.func(self.owner, *decoded.args, **decoded.kwargs)
            else:
                result = self.func(*decoded.args, **decoded.kwargs)
        except Exception as exc:
            return "raised", f"{type(exc).__name__}: {exc}"
        import lmrbench_checkers as lc

        expected = lv.Case(case, arrays)
        pairs = [("the return value", result, expected.expected)]
        pairs += [(f"argument `{k}`", decoded.argument(k), v) for k, v in expected.changed.items()]
        if expected.state_after is not None:
            pairs.append(
                (
                    "`self`",
                    {k: v for k, v in vars(obj).items() if k in expected.state_after},
                    expected.state_after,
                )
            )
        outcome = "identical"
        for n, (label, got, want) in enumerate(pairs):
            tol = _tolerance(self.state.spec.get("checker") or {}, decoded.scale)
            try:
                lc.assert_equal(got, want, where=label)
            except AssertionError:
                outcome = "close"
                try:
                    lc.assert_close(got, want, where=label, **tol)
                except AssertionError as exc:
                    return "different", str(exc)
            try:
                self._check(lc, got, want, label, tol, whole_result=n == 0)
            except AssertionError as exc:
                return "checker", str(exc)
        return outcome, ""

    def _note_precision(
        self, lv: Any, case: dict[str, Any], arrays: dict[str, Any], before: Any, drew: bool, bound: Any,
        params: list[Any], result: Any,
    ) -> str:
        """Note in the case the precision it was made in, what the float64 and matmul probes measure of its
        result, and the arguments whose values tie (``lmrbench_precision``); a case without them grades as
        before. The probes re-run the call on fresh copies of the recorded inputs; the random state is put back.
        Returns what moved when the call's discrete outcomes (a cutoff, indices, a mask) change beyond ties in
        float64 or with TF32 matmuls: the case is precision-sensitive and is not kept; else ''."""
        import lmrbench_precision as precision

        ties = [p.name for p in params if precision.has_ties(_arg(bound, p))]
        if ties:
            case["ties"] = ties
        data = lv.write_case(case, arrays)

        def rerun(transform: Any) -> Any:
            decoded = lv.Case(*lv.read_case_file(_as_file(data)))
            args, kwargs, state = decoded.args, decoded.kwargs, decoded.state
            if transform is not None:
                args, kwargs = transform(args), transform(kwargs)
                state = None if state is None else transform(state)
            lv.set_random_state(before if drew else lv.get_random_state())
            if self.binding == "method":
                factory = _import(case["factory"]) if case["factory"] else None
                decoded.state = state
                return self.func(decoded.instance(self.owner, factory), *args, **kwargs)
            if self.binding == "classmethod":
                return self.func(self.owner, *args, **kwargs)
            return self.func(*args, **kwargs)

        settled: list[str] = []
        if ties:
            import lmrbench_ties

            try:
                tol = _tolerance(self.state.spec.get("checker") or {},
                                 lv.Case({**case, "ties": None}, arrays).scale)  # no tie excused
                settled = [name for name in ties if not lmrbench_ties.decides(
                    rerun, result, next(_arg(bound, p) for p in params if p.name == name), tol)]
            except Exception:  # a probe never stops a recording
                settled = []
        if settled:  # ties the golden result does not depend on excuse nothing here (logits plus noise: no tie)
            case["ties_settled"] = settled
        try:
            notes, extra = precision.probe_call(rerun, result, [_arg(bound, p) for p in params])
        except Exception:  # a probe never stops a recording
            return ""
        sensitive = str(notes.pop("sensitive", ""))
        if notes:
            case["precision"] = notes
            arrays.update(extra)
        return sensitive

    def _check(self, lc: Any, got: Any, want: Any, label: str, tol: dict[str, Any], whole_result: bool) -> None:
        """The comparison the generated test makes: the task's checker on the result, close on the rest."""
        spec = self.state.spec.get("checker") or {}
        kind = spec.get("kind", "numeric")
        if kind == "exact":
            lc.assert_equal(got, want, where=label)
        elif whole_result and kind == "unordered":
            lc.assert_unordered(got, want, **tol)
        elif whole_result and kind == "text":
            lc.assert_similar_text(got, want, threshold=spec.get("text_threshold", 0.9), **tol)
        else:
            lc.assert_close(got, want, where=label, **tol)


def _held_before(
    lv: Any, bound: Any, params: list[Any], instance: Any, enc: Any
) -> list[tuple[list[Any], Any, Any]]:
    """(path, array, a copy of it) of each array inside the containers of the arguments, and of ``self``'s
    attributes and inside their containers, before the call (``lmrbench_values.held_arrays``). An array that only
    ``self`` and its own containers hold (an EMA's shadow weights) is left out: which object holds the new values
    is then nobody's business, and the attributes after the call are compared by value. One that something else
    holds too (the caller's model holding an optimiser's parameters, a checkpoint dict holding a batch norm's
    running statistics) is kept: a candidate that replaces it leaves the model untrained."""
    found = [leaf for p in params for leaf in lv.held_arrays(_arg(bound, p), [p.name])]
    own: set[int] = set()
    for name, value in (getattr(instance, "__dict__", None) or {}).items():
        found += lv.array_leaves(value, ["self", name], containers=own)
    if any(path[0] == "self" for path, _ in found):
        own |= {id(instance.__dict__), id(found)} | {id(t) for t in found} | enc.holders()
        shared = _held_elsewhere([obj for path, obj in found if path[0] == "self"], own)
        found = [(path, obj) for path, obj in found if path[0] != "self" or id(obj) in shared]
    out = []
    for path, obj in found[:lv.MAX_HELD]:
        out.append((path, obj, obj.copy() if hasattr(obj, "copy") else obj.detach().clone()))
    return out


def _held_elsewhere(objs: list[Any], own: set[int]) -> set[int]:
    """The ids of those of ``objs`` that anything but ``own`` (the instance's containers, this recorder's lists)
    and this recorder's frames refers to: another object's container, or a frame of the program's. One scan of
    the heap for all of them (``gc.get_referrers`` walks every tracked object), and one of the program's frames
    for the containers the collector does not track."""
    import gc

    here = {__file__, getattr(sys.modules.get("lmrbench_values"), "__file__", None)}
    wanted = {id(obj) for obj in objs}
    shared: set[int] = set()
    for ref in gc.get_referrers(*objs) if objs else ():
        if id(ref) in own or ref is objs or (type(ref).__name__ == "frame" and ref.f_code.co_filename in here):
            continue
        shared |= wanted & {id(r) for r in gc.get_referents(ref)}
    # a dict or tuple of arrays and numbers only is not tracked by the collector, so no scan of the heap finds it:
    # look one level into the locals of the program's frames (a driver's ``checkpoint = bn.state_dict()``)
    frame: Any = sys._getframe(1)
    while frame is not None and wanted - shared:
        if frame.f_code.co_filename not in here:
            for value in list(frame.f_locals.values()):
                inner = value.values() if isinstance(value, dict) else value if isinstance(value, tuple) else ()
                if id(value) not in own:
                    shared |= wanted & {id(value), *(id(v) for v in inner)}
        frame = frame.f_back
    return shared


def _same_leaf(obj: Any, copy: Any) -> bool:
    """True when an array holds what its copy from before the call holds (bit for bit)."""
    if hasattr(obj, "tobytes") and type(obj) is type(copy):
        return bool(obj.shape == copy.shape and obj.dtype == copy.dtype and obj.tobytes() == copy.tobytes())
    import torch

    return bool(torch.equal(obj, copy))


def _tolerance(checker: dict[str, Any], scale: float) -> dict[str, Any]:
    """The tolerance arguments the generated test passes: the author's rtol/atol, or the inputs' scale (by dtype)."""
    if checker.get("tolerance", "explicit") == "explicit":
        return {"rtol": checker.get("rtol", 1e-5), "atol": checker.get("atol", 1e-8)}
    return {"scale": scale}


def _numbers(arguments: list[dict[str, Any]], self_node: Any, arrays: dict[str, Any]) -> dict[str, Any]:
    """The scalar leaves of a call's encoded arguments and ``self`` (``lmrbench_leaves``), and the one value of
    an int array argument whose entries are all equal (``t[:]``: one timestep for the whole batch, sampled over
    the run like a scalar)."""
    import lmrbench_leaves as ll

    out = ll.leaves({"arguments": arguments, "self": self_node}, arrays)
    for a in arguments:
        arr: Any = arrays.get(str(a["value"].get("key"))) if isinstance(a["value"], dict) else None
        kind = getattr(getattr(arr, "dtype", None), "kind", "")
        if kind in ("i", "u") and arr.size and (arr == arr.flat[0]).all():
            out[f"{a['name']}[:]"] = int(arr.flat[0])
    return out


def _arg(bound: Any, param: Any) -> Any:
    if param.name in bound.arguments:
        return bound.arguments[param.name]
    if param.kind == param.VAR_POSITIONAL:
        return ()
    if param.kind == param.VAR_KEYWORD:
        return {}
    return param.default


def _array_keys(node: Any) -> list[str]:
    keys: list[str] = []
    if isinstance(node, list):
        for n in node:
            keys += _array_keys(n)
    elif isinstance(node, dict):
        if node.get("$") in ("ndarray", "npscalar", "tensor"):
            keys.append(node["key"])
        for k, v in node.items():
            if k != "key":
                keys += _array_keys(v)
    return keys


def _as_file(data: bytes) -> Any:
    import io

    return io.BytesIO(data)


def _import(path: str) -> Any:
    import importlib

    module, _, qual = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


def _mb(n: int) -> str:
    if n < 10_000:
        return f"{n} bytes"
    return f"{n / 1e3:.1f} kB" if n < 1_000_000 else f"{n / 1e6:.1f} MB"
