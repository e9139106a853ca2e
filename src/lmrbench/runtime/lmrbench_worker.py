"""The candidate's side of a split run: serve goal-function calls from the trusted test process.

Started by the boot script in the candidate's repository (its working directory), as a user of its own, with
``LMRBENCH_CALL_FDS=<read>,<write>``. For each request it imports the goal module from the candidate's
repository, calls the goal function with the arguments it was sent, and replies with the result, the
arguments the call changed, the instance's attributes after a method call, and the random generators'
state. It holds the candidate's code and the call's arguments, nothing else: no test, no expected value,
no checker, no report. Whatever it replies is only data, which the trusted side decodes strictly.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import sys
import traceback
from typing import Any

import lmrbench_codec as codec
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


def _call(request: dict[str, Any], arrays: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    dec = codec.Decoder(arrays)
    owner, target = _resolve(request)
    name = request["qualname"].split(".")[-1]
    args = [dec.decode(a) for a in request["args"]]
    kwargs = {k: dec.decode(v) for k, v in request["kwargs"].items()}
    before = {str(i): codec.digest(a, arrays) for i, a in enumerate(request["args"])}
    before.update({k: codec.digest(v, arrays) for k, v in request["kwargs"].items()})
    binding, instance = request["binding"], None
    if binding == "method":
        cls = _class_of(request.get("self_type"), owner)
        factory = request.get("factory")
        instance = codec._import_type(factory)() if factory else cls.__new__(cls)
        for attr, value in dec.decode(request["self"]).items():
            object.__setattr__(instance, attr, value)
        func = getattr(instance, name)
    elif binding == "classmethod":
        func = getattr(_class_of(request.get("self_type"), owner), name)
    else:
        func = target if owner is None else getattr(owner, name)
    if request.get("random") is not None:
        codec.set_random_state(dec.decode(request["random"]))
    result = func(*args, **kwargs)
    if inspect.iscoroutine(result):  # an async goal function: the trusted side awaits a proxy of its own
        import asyncio  # here, not at the top: importing it costs more than a small task's calls

        result = asyncio.run(result)
    elif inspect.isgenerator(result):  # a generator: its items, which the trusted side yields again
        result = list(result)
    enc = codec.Encoder("r")
    reply: dict[str, Any] = {"ok": True, "result": enc.encode(result, "the result")}
    changed: dict[str, Any] = {}
    for key, value in [*((str(i), a) for i, a in enumerate(args)), *kwargs.items()]:
        probe = codec.Encoder("p")
        try:
            node = probe.encode(value, key)
        except codec.UnencodableValue:
            continue
        if codec.digest(node, probe.arrays) != before.get(key):
            changed[key] = enc.encode(value, key)
    reply["changed"] = changed
    if instance is not None:
        after, dropped = {}, []
        for attr, value in vars(instance).items():
            try:
                after[attr] = enc.encode(value, f"self.{attr}")
            except codec.UnencodableValue:
                dropped.append(attr)
        reply["self_after"], reply["dropped"] = after, dropped
    reply["random"] = enc.encode(codec.get_random_state(loaded_only=True), "the random state")
    return reply, enc.arrays


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
    seen = protocol.watch_reads(os.getcwd()) if sys.argv[2:3] == ["watch-reads"] else None
    told: set[str] = set()
    if len(sys.argv) > 1:
        _preload(json.loads(sys.argv[1]))
    while True:
        try:
            request, arrays = wire.recv(rfd, MAX_REQUEST)
        except wire.WireError:
            return 0
        reply: dict[str, Any]
        out: dict[str, Any] = {}
        try:
            reply, out = _call(request, arrays)
        except BaseException as exc:  # the candidate's exception, SystemExit and pytest's Exit included
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            sys.stderr.write(traceback.format_exc())
            reply = {"ok": False, "raised": type(exc).__name__, "message": detail[:4000]}
        reply["id"] = request.get("id")
        if seen is not None and len(seen) > len(told):
            reply["reads"] = sorted(seen - told)
            told.update(reply["reads"])
        try:
            wire.send(wfd, reply, out)
        except wire.WireError:
            return 0
        except Exception as exc:  # a result the codec took but numpy cannot write
            wire.send(wfd, {"id": request.get("id"), "ok": False, "raised": type(exc).__name__,
                            "message": str(exc)[:4000]}, {})


if __name__ == "__main__":
    sys.exit(main())
