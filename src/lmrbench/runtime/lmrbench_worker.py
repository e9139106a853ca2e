"""The candidate's side of a split run: serve goal-function calls from the trusted test process.

Started by the boot script in the candidate's repository (its working directory), as a user of its own, with
``LMRBENCH_CALL_FDS=<read>,<write>``. For each request it imports the goal module from the candidate's
repository, calls the goal function with the arguments it was sent, and replies with the result, the
arguments, the instance's attributes after a method call and every other object of the call, each named by
its origin (``lmrbench_identity``: the trusted side changes its own objects in place), and the random
generators' state. A function it was sent is called back on the trusted side (``_Call.call_back``). It holds
the candidate's code and the call's arguments, nothing else: no test, no expected value, no checker, no
report. Whatever it replies is only data, which the trusted side decodes strictly.
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import json
import os
import sys
import traceback
from typing import Any

import lmrbench_codec as codec
import lmrbench_identity as identity
import lmrbench_protocol as protocol
import lmrbench_wire as wire

MAX_REQUEST = 1 << 34


def _resolve(request: dict[str, Any]) -> tuple[Any, Any]:
    """(the owner class, None) of a method's goal, or (None, the function) of a module-level one."""
    root = os.path.normpath(os.path.join(os.getcwd(), request["root"]))
    if root not in sys.path:
        sys.path.insert(0, root)
    module = importlib.import_module(request["module"])
    want = os.path.realpath(os.path.join(os.getcwd(), request["file"]))
    got = os.path.realpath(getattr(module, "__file__", "") or "")
    if got != want:
        raise ImportError(f"{request['module']} is {got}, not the goal file {request['file']}")
    owner: Any = None
    obj: Any = module
    for part in request["qualname"].split(".")[:-1]:
        obj = getattr(obj, part)
        owner = obj
    return owner, (getattr(module, request["qualname"]) if owner is None else None)


def _class_of(type_path: str | None, default: Any) -> Any:
    if not type_path:
        return default
    try:
        cls = codec._import_type(type_path)
    except Exception:
        return default
    return cls if isinstance(cls, type) else default


class _Session:
    """The worker's end of the channel: requests in, replies out, and the calls back into the trusted side that
    the candidate's code makes through the closures it was given."""

    def __init__(self, rfd: int, wfd: int, seen: set[str] | None) -> None:
        self.rfd, self.wfd, self.seen = rfd, wfd, seen
        self.told: set[str] = set()

    def send(self, message: dict[str, Any], arrays: dict[str, Any]) -> None:
        """Send ``message``, naming (in a golden run) the repository files read since the last message."""
        if self.seen is not None and len(self.seen) > len(self.told):
            message["reads"] = sorted(self.seen - self.told)
            self.told.update(message["reads"])
        try:
            wire.send(self.wfd, message, arrays)
        except wire.WireError:
            raise
        except Exception as exc:  # a result the codec took but numpy cannot write
            wire.send(self.wfd, {"id": message.get("id"), "kind": message.get("kind"), "ok": False,
                                 "raised": type(exc).__name__, "message": str(exc)[:4000]}, {})

    def serve(self, request: dict[str, Any], arrays: dict[str, Any]) -> None:
        """Make the call ``request`` asks for and send its reply."""
        reply: dict[str, Any]
        out: dict[str, Any] = {}
        try:
            reply, out = _Call(self, request).run(arrays)
        except BaseException as exc:  # the candidate's exception, SystemExit and pytest's Exit included
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            sys.stderr.write(traceback.format_exc())
            reply = {"kind": "reply", "ok": False, "raised": type(exc).__name__, "message": detail[:4000]}
        reply["id"] = request.get("id")
        self.send(reply, out)

    def answer(self, request_id: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """Wait for the answer to a call back made during request ``request_id``, serving the goal calls the
        trusted side makes meanwhile (a closure that calls a goal function)."""
        while True:
            message, arrays = wire.recv(self.rfd, MAX_REQUEST)
            if message.get("kind") == "answer" and message.get("id") == request_id:
                return message, arrays
            if message.get("kind") in (None, "call"):
                self.serve(message, arrays)


def _random_node(arrays: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    enc = codec.Encoder("s")
    node = enc.encode(codec.get_random_state(loaded_only=True), "the random state")
    return node, {**arrays, **enc.arrays}


class _Call:
    """One goal call on the worker's side: its objects (``lmrbench_identity``) and the closures it calls back."""

    def __init__(self, session: _Session, request: dict[str, Any]) -> None:
        self.session, self.request = session, request
        self.ids = identity.Identities(identity.WORKER)
        self.args: list[Any] = []
        self.kwargs: dict[str, Any] = {}
        self.instance: Any = None

    def stand_in(self, number: int, name: str) -> Any:
        """The function the candidate's code gets for the trusted side's function ``number``."""

        def call_back(*args: Any, **kwargs: Any) -> Any:
            return self.call_back(number, args, kwargs)

        call_back.__name__ = call_back.__qualname__ = str(name).rpartition(".")[2] or "function"
        return call_back

    def call_back(self, number: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call the trusted side's function ``number``: it runs on the trusted side's objects as this call left
        them, and this call's objects come back as the function left them."""
        enc = codec.Encoder("c", self.ids)
        message: dict[str, Any] = {"kind": "callback", "id": self.request.get("id"), "callback": number}
        message["args"] = [enc.encode(a, f"argument {i}") for i, a in enumerate(args)]
        message["kwargs"] = {str(k): enc.encode(v, str(k)) for k, v in kwargs.items()}
        message["state"] = identity.encode_state(enc, codec.UnencodableValue, self.args, self.kwargs,
                                                 self.instance)
        message["random"], out = _random_node(enc.arrays)
        self.session.send(message, out)
        answer, arrays = self.session.answer(self.request.get("id"))
        dec = codec.Decoder(arrays, self.ids, callback=self.stand_in)
        result = dec.decode(answer["result"]) if answer.get("ok") else None
        identity.apply_state(dec.decode, dict(answer.get("state") or {}), self.instance, object.__setattr__)
        if answer.get("random") is not None:
            codec.set_random_state(codec.Decoder(arrays).decode(answer["random"]))
        if not answer.get("ok"):
            cls = getattr(builtins, str(answer.get("raised")), None)
            error = cls if isinstance(cls, type) and issubclass(cls, Exception) else RuntimeError
            raise error(str(answer.get("message", ""))[:4000])
        return result

    def run(self, arrays: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The reply: the result, and every object of the call as the candidate's code left it."""
        request = self.request
        dec = codec.Decoder(arrays, self.ids, callback=self.stand_in)
        owner, target = _resolve(request)
        name = request["qualname"].split(".")[-1]
        state = request["state"]
        self.args = [dec.decode(a) for a in state["args"]]
        self.kwargs = {k: dec.decode(v) for k, v in state["kwargs"].items()}
        binding = request["binding"]
        if binding == "method":
            cls = _class_of(request.get("self_type"), owner)
            factory = request.get("factory")
            self.instance = codec._import_type(factory)() if factory else cls.__new__(cls)
            for attr, value in state["self"].items():
                object.__setattr__(self.instance, attr, dec.decode(value))
            func = getattr(self.instance, name)
        elif binding == "classmethod":
            func = getattr(_class_of(request.get("self_type"), owner), name)
        else:
            func = target if owner is None else getattr(owner, name)
        for node in state.get("detached") or []:
            dec.decode(node)
        if request.get("random") is not None:
            codec.set_random_state(codec.Decoder(arrays).decode(request["random"]))
        result = func(*self.args, **self.kwargs)
        if inspect.iscoroutine(result):  # an async goal function: the trusted side awaits a proxy of its own
            import asyncio  # here, not at the top: importing it costs more than a small task's calls

            result = asyncio.run(result)
        elif inspect.isgenerator(result):  # a generator: its items, which the trusted side yields again
            result = list(result)
        enc = codec.Encoder("r", self.ids)
        reply: dict[str, Any] = {"kind": "reply", "ok": True, "result": enc.encode(result, "the result")}
        reply["state"] = identity.encode_state(enc, codec.UnencodableValue, self.args, self.kwargs, self.instance)
        reply["random"], out = _random_node(enc.arrays)
        return reply, out


def _preload(names: list[str]) -> None:
    """Import the goal modules before the first call arrives, while the trusted side starts (a torch import
    then overlaps pytest's start). A failure is ignored here: the call that needs the module imports it again
    and replies with the error."""
    root = os.path.normpath(os.getcwd())
    if root not in sys.path:
        sys.path.insert(0, root)
    for name in names:
        try:
            importlib.import_module(name)
        except BaseException:  # the candidate's module may raise anything, SystemExit included
            sys.modules.pop(name, None)


def main() -> int:
    """Serve requests until the trusted side closes the channel (after importing the modules named in
    ``sys.argv[1]``, a JSON list, when given). With ``watch-reads`` as ``sys.argv[2]`` (a golden run) each reply
    names, under ``reads``, the repository files the code read since the last reply (its imports' too)."""
    rfd, wfd = (int(x) for x in os.environ.pop(protocol.ENV_CALL_FDS).split(","))
    session = _Session(rfd, wfd, protocol.watch_reads(os.getcwd()) if sys.argv[2:3] == ["watch-reads"] else None)
    if len(sys.argv) > 1:
        _preload(json.loads(sys.argv[1]))
    while True:
        try:
            request, arrays = wire.recv(rfd, MAX_REQUEST)
            session.serve(request, arrays)
        except wire.WireError:
            return 0


if __name__ == "__main__":
    sys.exit(main())
