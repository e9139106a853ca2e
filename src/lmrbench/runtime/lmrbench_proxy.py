"""The trusted side of a split run: goal functions that run in the candidate's process, not in this one.

Loaded first in the trusted test process (``-p lmrbench_proxy`` for pytest, imported by the legacy wrapper)
when ``LMRBENCH_CALL_FDS`` and ``LMRBENCH_GOALS`` are set. An import hook recognises each goal file by its path,
whatever name it is imported under, lets the (pristine, masked) module run, then puts a proxy in place of each
goal function. A call of the proxy sends the arguments (and, for a method, the instance's attributes and the
random generators' state) to the worker, which runs the candidate's body; the reply's result is decoded
strictly and returned, every object the call shares with its caller (the arguments, what they and the
instance hold) is changed here in place as the candidate left it (``lmrbench_identity``), and the instance
gets the attributes the candidate left. A function among them (a closure) runs here when the candidate's code
calls it, on this side's objects as the candidate left them so far (``_Call.answer``). The candidate's
exceptions come back as exceptions; a reply that cannot
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
import lmrbench_identity as identity
import lmrbench_protocol as protocol
import lmrbench_reply
import lmrbench_wire as wire

__tracebackhide__ = True  # pytest leaves this module's frames out of a failing test's traceback: the reader sees
# the test's line and the message, and pytest parses no source of this file per failure

MAX_REPLY = int(os.environ.get(protocol.ENV_MAX_REPLY, str(protocol.MAX_REPLY)))
"""Largest reply read from the worker, in bytes."""


class CandidateError(Exception):
    """An exception raised by the candidate's code (its type is not one of Python's built-in exceptions)."""


class CandidateGone(Exception):
    """The candidate's process ended, or sent a reply that cannot be read."""


class _Channel:
    def __init__(self, rfd: int, wfd: int) -> None:
        self.rfd, self.wfd = rfd, wfd
        self.lock = threading.RLock()  # a closure the worker calls back may call a goal function again
        self.broken = ""

    def call(self, request: dict[str, Any], arrays: dict[str, Any],
             call: _Call) -> tuple[dict[str, Any], dict[str, Any]]:
        """Send ``request`` and wait for its reply, answering the closures of ``call`` the worker calls on the
        way."""
        with self.lock:
            if self.broken:
                raise CandidateGone(self.broken)
            request["id"] = secrets.token_hex(16)
            try:
                wire.send(self.wfd, request, arrays)
                while True:
                    reply, out = wire.recv(self.rfd, MAX_REPLY)
                    if reply.get("id") != request["id"]:
                        continue
                    _note_goal_reads(reply.get("reads"))
                    if reply.get("kind") != "callback":
                        return reply, out
                    answer, answer_arrays = call.answer(reply, out)
                    answer["id"] = request["id"]
                    wire.send(self.wfd, answer, answer_arrays)
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
    call = _Call(base["binding"], first, args, kwargs)
    enc = codec.Encoder("a", call.ids, callables=True)
    request = dict(base)
    try:
        instance = first if base["binding"] == "method" else None
        state = identity.encode_state(enc, codec.UnencodableValue, args, kwargs, instance, strict=True,
                                      strict_self=base.get("factory") is None)
        request.update(kind="call", state=state)
        if base["binding"] == "method":
            request["self_type"] = codec.type_path(type(first))
        elif base["binding"] == "classmethod":
            request["self_type"] = codec.type_path(first)
        request["random"], arrays = _random_node(enc.arrays)
    except codec.UnencodableValue as exc:
        raise TypeError(
            f"{exc}: this call {protocol.UNCARRIED}; the implementation needs "
            '"isolation": "shared" in its entry of info.json\'s implementations (weaker evidence)'
        ) from None
    reply, arrays = _CHANNEL.call(request, arrays, call)
    if not reply.get("ok"):
        raise _candidate_error(reply)
    try:
        return call.finish(reply, arrays)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise CandidateGone(f"the candidate's reply to {base.get('qualname') or 'the call'} {protocol.UNREADABLE}: "
                            f"{type(exc).__name__}: {exc}") from None


def _candidate_error(reply: dict[str, Any]) -> Exception:
    """The exception the candidate's code raised, as it comes back."""
    raised, message = str(reply.get("raised", "")), str(reply.get("message", ""))[:4000]
    cls = _BUILTIN_ERRORS.get(raised)
    if cls is not None:
        try:
            return cls(f"(in the candidate's code) {message}")
        except Exception:
            return CandidateError(message)
    return CandidateError(f"{message or raised} (raised in the candidate's code)")


def _random_node(arrays: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The random generators' state, as a node of its own, and the message's arrays with its arrays."""
    enc = codec.Encoder("s")
    node = enc.encode(codec.get_random_state(loaded_only=True), "the random state")
    return node, {**arrays, **enc.arrays}


def _set_random(node: Any, arrays: dict[str, Any]) -> None:
    if node is not None:
        state = lmrbench_reply.decode_reply(node, arrays)
        loaded = {"random": "random", "numpy": "numpy.random", "torch": "torch"}
        codec.set_random_state({k: v for k, v in dict(state).items() if loaded.get(k) in sys.modules})


class _Call:
    """One goal call on the trusted side: its objects (``lmrbench_identity``), which every message of the call
    brings up to what the worker left, and the closures the worker calls back."""

    def __init__(self, binding: str, first: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.ids = identity.Identities(identity.TRUSTED)
        self.instance = first if binding == "method" else None
        self.args, self.kwargs = args, kwargs

    def _read(self, message: dict[str, Any], arrays: dict[str, Any], lead: list[Any]) -> list[Any]:
        """The values of ``lead`` (nodes the worker wrote before the state), after which the call's objects are
        brought to the message's state."""
        reader = lmrbench_reply.Reader(arrays, self.ids)
        values = [reader.read(n) for n in lead]
        identity.apply_state(reader.read, dict(message.get("state") or {}), self.instance, _set_attribute)
        _set_random(message.get("random"), arrays)
        return values

    def finish(self, reply: dict[str, Any], arrays: dict[str, Any]) -> Any:
        """The result of the call, every object of it changed as the worker left it."""
        return self._read(reply, arrays, [reply["result"]])[0]

    def answer(self, message: dict[str, Any], arrays: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Call the closure the worker called, on this side's objects as the worker left them; the answer holds
        its result (or error) and this side's objects as the closure left them."""
        try:
            number, names = message["callback"], [str(k) for k in dict(message["kwargs"])]
            if type(number) is not int or not 0 <= number < len(self.ids.callbacks):
                raise ValueError(f"no function {number!r} was sent")
            values = self._read(message, arrays, [*message["args"], *dict(message["kwargs"]).values()])
            split = len(values) - len(names)
            fargs, fkwargs = values[:split], dict(zip(names, values[split:], strict=True))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise CandidateGone(f"the candidate's call of a function cannot be read: {type(exc).__name__}: "
                                f"{exc}") from None
        enc = codec.Encoder("t", self.ids, callables=True)
        answer: dict[str, Any] = {"kind": "answer", "ok": True}
        try:
            answer["result"] = enc.encode(self.ids.callbacks[number](*fargs, **fkwargs), "the function's result")
        except Exception as exc:  # the test's own function raised, or its result cannot cross
            answer = {"kind": "answer", "ok": False, "raised": type(exc).__name__, "message": str(exc)[:4000]}
        answer["state"] = identity.encode_state(enc, codec.UnencodableValue, self.args, self.kwargs, self.instance)
        answer["random"], out = _random_node(enc.arrays)
        return answer, out


def _set_attribute(obj: Any, attr: str, value: Any) -> None:
    """Give ``obj`` the attribute the candidate left; a module the worker made in place of one (a record: the
    trusted side never builds the worker's classes) is loaded into the trusted side's module."""
    current = vars(obj).get(attr)
    Record = lmrbench_reply.ModuleRecord
    records = isinstance(value, dict) and any(isinstance(v, Record) for v in value.values())  # a module's _modules
    if (isinstance(value, Record) and current is not None) or (records and isinstance(current, dict)
                                                               and value is not current):
        identity.merge(current, value)
    else:
        object.__setattr__(obj, attr, value)


install()
