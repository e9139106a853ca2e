"""The trusted side of a split run: goal functions that run in the candidate's process, not in this one.

Loaded first in the trusted test process (``-p lmrbench_proxy`` for pytest, imported by the legacy wrapper)
when ``LMRBENCH_CALL_FDS`` and ``LMRBENCH_GOALS`` are set. An import hook recognises each goal file by its path,
whatever name it is imported under, lets the (pristine, masked) module run, then puts a proxy in place of each
goal function. A call of the proxy sends the arguments (and, for a method, the instance's attributes and the
random generators' state) to the worker, which runs the candidate's body; the reply's result is decoded
strictly and returned, the arguments the candidate changed are changed here in place, and the instance gets
the attributes the candidate left. The candidate's exceptions come back as exceptions; a reply that cannot
be read, or a worker that is gone, is an exception too. The tests, the expected values, the checkers and the
report never leave this process.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import json
import os
import secrets
import sys
import threading
from typing import Any

import lmrbench_codec as codec
import lmrbench_hook
import lmrbench_protocol as protocol
import lmrbench_reply
import lmrbench_wire as wire

MAX_REPLY = int(os.environ.get(protocol.ENV_MAX_REPLY, str(protocol.MAX_REPLY)))
"""Largest reply read from the worker, in bytes."""


class CandidateError(Exception):
    """An exception raised by the candidate's code (its type is not one of Python's built-in exceptions)."""


class CandidateGone(Exception):
    """The candidate's process ended, or sent a reply that cannot be read."""


class _Channel:
    def __init__(self, rfd: int, wfd: int) -> None:
        self.rfd, self.wfd = rfd, wfd
        self.lock = threading.Lock()
        self.broken = ""

    def call(self, request: dict[str, Any], arrays: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        with self.lock:
            if self.broken:
                raise CandidateGone(self.broken)
            request["id"] = secrets.token_hex(16)
            try:
                wire.send(self.wfd, request, arrays)
                while True:
                    reply, out = wire.recv(self.rfd, MAX_REPLY)
                    if reply.get("id") == request["id"]:
                        _note_goal_reads(reply.get("reads"))
                        return reply, out
            except wire.WireError as exc:
                self.broken = f"the candidate's process: {exc}"
                raise CandidateGone(self.broken) from None


GOAL_READS: set[str] = set()
"""Repository files the goal code read in the worker (golden runs only): its inputs, not the tests' answers; the
seal plugin and the legacy runner leave them out of the files the tests read."""


def _note_goal_reads(reads: object) -> None:
    if isinstance(reads, list):
        GOAL_READS.update(r for r in reads[: protocol.MAX_READS] if isinstance(r, str))


_CHANNEL: _Channel | None = None
_GOALS: dict[str, list[str]] = {}
_FACTORIES: dict[tuple[str, str], str] = {}
_ROOT = ""
_BUILTIN_ERRORS = {
    name: cls
    for name, cls in vars(builtins).items()
    if isinstance(cls, type) and issubclass(cls, Exception) and cls.__module__ == "builtins"
}


def install() -> None:
    """Start proxying (idempotent); does nothing unless the split-run variables are set."""
    global _CHANNEL, _ROOT
    fds, goals = os.environ.get(protocol.ENV_CALL_FDS), os.environ.get(protocol.ENV_GOALS)
    if _CHANNEL is not None or not fds or not goals:
        return
    rfd, wfd = (int(x) for x in fds.split(","))
    _CHANNEL = _Channel(rfd, wfd)
    _ROOT = os.getcwd()
    for goal in json.loads(goals):
        path = os.path.realpath(os.path.join(_ROOT, goal["file"]))
        _GOALS.setdefault(path, []).append(goal["qualname"])
        if goal.get("factory"):
            _FACTORIES[(path, goal["qualname"])] = goal["factory"]
    lmrbench_hook.install(set(_GOALS), _proxy_goals)


def _proxy_goals(module: Any, path: str) -> None:
    """Put the proxies in place of the goal functions of a goal module that just ran."""
    for qualname in _GOALS[path]:
        _patch(module, qualname, path)


def _root_of(module: Any, path: str) -> str:
    """The import root of ``module`` relative to the repository: the folder its dotted name starts from."""
    up = module.__name__.count(".") + 1
    if os.path.basename(path) == "__init__.py":
        up += 1
    folder = path
    for _ in range(up):
        folder = os.path.dirname(folder)
    return os.path.relpath(folder, _ROOT)


def _patch(module: Any, qualname: str, path: str) -> None:
    parts = qualname.split(".")
    owner: Any = module
    for part in parts[:-1]:
        owner = owner.__dict__.get(part)
        if not isinstance(owner, type):
            raise ImportError(f"{'.'.join(parts[:-1])} is not a class of {path}")
    name = parts[-1]
    raw = owner.__dict__.get(name)
    if raw is None:
        raise ImportError(f"no function {qualname} in {path}")
    base = {
        "module": module.__name__,
        "root": _root_of(module, path),
        "file": os.path.relpath(path, _ROOT),
        "qualname": qualname,
        "factory": _FACTORIES.get((path, qualname)),
    }
    if owner is module:
        proxy = _proxy(raw, {**base, "binding": "function"}, bound=False)
        for key, value in list(module.__dict__.items()):
            if value is raw:
                setattr(module, key, proxy)
    elif isinstance(raw, staticmethod):
        setattr(owner, name, staticmethod(_proxy(raw.__func__, {**base, "binding": "staticmethod"}, bound=False)))
    elif isinstance(raw, classmethod):
        setattr(owner, name, classmethod(_proxy(raw.__func__, {**base, "binding": "classmethod"}, bound=True)))
    else:
        setattr(owner, name, _proxy(raw, {**base, "binding": "method"}, bound=True))


def _proxy(func: Any, base: dict[str, Any], *, bound: bool) -> Any:
    """A stand-in with ``func``'s name and signature that calls the candidate's version; async and generator
    functions get an async or generator stand-in (the worker awaits or exhausts the candidate's)."""

    def call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        first, rest = (args[0], args[1:]) if bound else (None, args)
        return _remote_call(base, first, rest, kwargs)

    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def coroutine(*args: Any, **kwargs: Any) -> Any:
            return call(args, kwargs)

        return coroutine
    if inspect.isgeneratorfunction(func):

        @functools.wraps(func)
        def generator(*args: Any, **kwargs: Any) -> Any:
            yield from call(args, kwargs)

        return generator

    @functools.wraps(func)
    def function(*args: Any, **kwargs: Any) -> Any:
        return call(args, kwargs)

    return function


def _remote_call(base: dict[str, Any], first: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if _CHANNEL is None:
        raise CandidateGone("no candidate process")
    enc = codec.Encoder("a")
    request = dict(base)
    try:
        request["args"] = [enc.encode(a, f"argument {i}") for i, a in enumerate(args)]
        request["kwargs"] = {k: enc.encode(v, k) for k, v in kwargs.items()}
        if base["binding"] == "method":
            request["self"], request["self_skipped"] = _encode_attributes(enc, first, base.get("factory"))
            request["self_type"] = codec.type_path(type(first))
        elif base["binding"] == "classmethod":
            request["self_type"] = codec.type_path(first)
        request["random"] = enc.encode(codec.get_random_state(loaded_only=True), "the random state")
    except codec.UnencodableValue as exc:
        raise TypeError(
            f"{exc}: this call {protocol.UNCARRIED}; the implementation needs "
            '"isolation": "shared" in its entry of info.json\'s implementations (weaker evidence)'
        ) from None
    reply, arrays = _CHANNEL.call(request, enc.arrays)
    if not reply.get("ok"):
        raised, message = str(reply.get("raised", "")), str(reply.get("message", ""))[:4000]
        cls = _BUILTIN_ERRORS.get(raised)
        if cls is not None:
            try:
                error: Exception = cls(f"(in the candidate's code) {message}")
            except Exception:
                error = CandidateError(message)
            raise error
        raise CandidateError(f"{message or raised} (raised in the candidate's code)")
    try:
        return _apply(reply, arrays, first, args, kwargs, base["binding"])
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise CandidateGone(f"the candidate's reply cannot be read: {type(exc).__name__}: {exc}") from None


def _encode_attributes(enc: Any, obj: Any, factory: str | None) -> tuple[Any, list[str]]:
    """The instance's attributes; with a factory, those that cannot be encoded are left for it to make."""
    if factory is None:
        return enc.encode(dict(vars(obj)), "self"), []
    kept, skipped = {}, []
    for name, value in vars(obj).items():
        probe = codec.Encoder("p")
        try:
            probe.encode(value, f"self.{name}")
        except codec.UnencodableValue:
            skipped.append(name)
            continue
        kept[name] = value
    return enc.encode(kept, "self"), skipped


def _apply(
    reply: dict[str, Any], arrays: dict[str, Any], first: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
    binding: str,
) -> Any:
    def dec(node: Any) -> Any:
        return lmrbench_reply.decode_reply(node, arrays)

    result = dec(reply["result"])
    for key, node in dict(reply.get("changed") or {}).items():
        original = args[int(key)] if key.isdigit() else kwargs[key]
        _copy_into(original, dec(node))
    if binding == "method" and isinstance(reply.get("self_after"), dict):
        after = {str(k): dec(v) for k, v in reply["self_after"].items()}
        dropped = {str(d) for d in reply.get("dropped") or []}
        for attr in [a for a in vars(first) if a not in after and a not in dropped]:
            delattr(first, attr)
        for attr, value in after.items():
            _set_attribute(first, attr, value)
    if reply.get("random") is not None:
        state = dec(reply["random"])
        loaded = {"random": "random", "numpy": "numpy.random", "torch": "torch"}
        codec.set_random_state({k: v for k, v in dict(state).items() if loaded.get(k) in sys.modules})
    return result


def _set_attribute(obj: Any, attr: str, value: Any) -> None:
    """Give ``obj`` the attribute the candidate left; a submodule (alone, or in a module's ``_modules``) stays the
    trusted side's object and gets the new state."""
    current = vars(obj).get(attr)
    Record = lmrbench_reply.ModuleRecord
    if isinstance(value, Record) and current is not None:
        _copy_into(current, value)
    elif isinstance(value, dict) and isinstance(current, dict) and any(isinstance(v, Record) for v in value.values()):
        for key, item in value.items():
            if isinstance(item, Record) and current.get(key) is not None:
                _copy_into(current[key], item)
            else:
                current[key] = item
    else:
        object.__setattr__(obj, attr, value)


def _copy_into(original: Any, new: Any) -> None:
    """Change ``original`` in place to hold ``new`` (an argument the candidate changed)."""
    import numpy as np

    if isinstance(original, np.ndarray):
        if not isinstance(new, np.ndarray) or new.shape != original.shape:
            raise ValueError("the candidate changed an array argument's shape or type")
        np.copyto(original, new, casting="unsafe")
    elif isinstance(original, list):
        original[:] = list(new)
    elif isinstance(original, dict):
        original.clear()
        original.update(dict(new))
    elif isinstance(original, set):
        original.clear()
        original.update(set(new))
    elif isinstance(new, lmrbench_reply.ModuleRecord):
        _load_module_state(original, new)
    elif type(original).__module__.startswith("torch") and hasattr(original, "copy_"):
        import torch

        with torch.no_grad():
            original.copy_(new)
    elif hasattr(original, "__dict__") and hasattr(new, "__dict__"):
        vars(original).clear()
        vars(original).update(vars(new))


def _load_module_state(module: Any, record: Any) -> None:
    """Give the trusted side's ``nn.Module`` the parameters and buffers the candidate left (same names, shapes
    and dtypes, or the reply cannot be read)."""
    import torch

    if not isinstance(module, torch.nn.Module):
        raise ValueError("the candidate replaced an argument with a module")
    mine = module.state_dict(keep_vars=True)
    if list(mine) != list(record.state):
        raise ValueError("the candidate changed a module's parameters or buffers by name")
    with torch.no_grad():
        for name, value in record.state.items():
            target = mine[name]
            if not isinstance(value, torch.Tensor) or value.shape != target.shape or value.dtype != target.dtype:
                raise ValueError(f"the candidate changed {name}'s shape or dtype")
            target.copy_(value)
    module.train(record.training)


install()
