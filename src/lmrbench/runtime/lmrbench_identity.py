"""The objects a split run's goal call shares between its two processes, so that they keep their identity.

In one process a goal function works on its caller's own objects: an optimiser's ``step`` updates the very
parameters the model holds, in place, and the state it keeps under them; an array passed twice is one array; an
argument a method keeps is the caller's. Across the boundary each side has its own copies, so each message of a
call (the request, the reply, a closure's call and its answer) names every mutable object it carries (arrays,
tensors, lists, dicts, sets, dataclasses, modules) by an *origin* number, and the side that reads it changes its
own object of that number in place to hold what the other side left, instead of making a new one. Numbers are
per call: the trusted side gives even ones, the worker odd ones (an object it made), so neither can claim an
object the other never sent. An array or tensor whose bytes did not change since the last message is sent as
``"same"``, without its data.

Shipped to both sides of a split run (``lmrbench_identity.py``); imports nothing beyond the standard library
(numpy and torch only when the process loaded them). It changes only objects of its own table, with values the
reader already built (the trusted side's reader is the allow-list decoder, ``lmrbench_reply``).
"""

from __future__ import annotations

import collections
import sys
from typing import Any

__tracebackhide__ = True  # pytest leaves this module's frames out of a failing test's traceback: the reader sees
# the test's line and the message, and pytest parses no source of this file per failure

TRUSTED, WORKER = 0, 1
"""The parity of the origin numbers each side gives."""


class Identities:
    """One call's table of shared objects on one side: origin number <-> object, and the bytes of each array or
    tensor as both sides last agreed on them."""

    def __init__(self, side: int) -> None:
        self.side = side
        self.objects: dict[int, Any] = {}
        self._numbers: dict[int, int] = {}
        self._agreed: dict[int, Any] = {}
        self._next = side
        self.callbacks: list[Any] = []
        """The functions this side sent (the trusted side's closures), by the number the other side calls."""

    @staticmethod
    def trackable(value: Any) -> bool:
        """Whether ``value`` is a mutable object whose identity a call can rely on (see ``trackable``)."""
        return trackable(value)

    def callback(self, function: Any) -> int:
        """The number under which the other side calls ``function`` back."""
        for k, known in enumerate(self.callbacks):
            if known is function:
                return k
        self.callbacks.append(function)
        return len(self.callbacks) - 1

    def kept_array(self, n: Any) -> Any:
        """The array of origin ``n``, sent back as ``"same"``."""
        array = self.known(n)
        np = sys.modules.get("numpy")
        if np is None or type(array) is not np.ndarray:
            raise ValueError(f"origin {n} is not an array")
        return array

    def kept_tensor(self, n: Any, requires_grad: bool, grad: Any) -> Any:
        """The tensor of origin ``n``, sent back as ``"same"``, with the ``requires_grad`` flag and gradient the
        other side left."""
        tensor = self.known(n)
        torch = sys.modules.get("torch")
        if torch is None or not isinstance(tensor, torch.Tensor):
            raise ValueError(f"origin {n} is not a tensor")
        if tensor.is_leaf:
            if tensor.requires_grad != requires_grad and tensor.is_floating_point():
                tensor.requires_grad_(requires_grad)
            set_grad(tensor, grad)
        return tensor

    def number(self, value: Any) -> int:
        """The origin number of ``value``: its own, or a new one of this side."""
        n = self._numbers.get(id(value))
        if n is not None and self.objects[n] is value:
            return n
        n, self._next = self._next, self._next + 2
        self.objects[n] = value
        self._numbers[id(value)] = n
        return n

    def agree(self, n: int, array: Any) -> None:
        """Note the bytes of object ``n`` as just sent or received (a numpy array: a tensor's data)."""
        self._agreed[n] = array

    def unchanged(self, n: int, array: Any) -> bool:
        """Whether ``array`` holds the same dtype, shape and bytes as object ``n`` had in the last message."""
        old = self._agreed.get(n)
        return (old is not None and old.dtype == array.dtype and old.shape == array.shape
                and old.tobytes() == array.tobytes())

    def known(self, n: Any) -> Any:
        """The object of origin ``n`` (ValueError if this side has none)."""
        if type(n) is not int or n not in self.objects:
            raise ValueError(f"origin {n!r} names no object of this call")
        return self.objects[n]

    def resolve(self, n: Any, fresh: Any) -> Any:
        """The object of origin ``n`` holding ``fresh``: this side's own, changed in place, or ``fresh`` itself
        when the other side made it (ValueError when the kinds differ, or ``n`` is this side's and unknown)."""
        if type(n) is not int or n < 0:
            raise ValueError(f"origin {n!r} is not a number")
        original = self.objects.get(n)
        if original is None:
            if n % 2 == self.side:
                raise ValueError(f"origin {n} names no object this side sent")
            self.objects[n] = fresh
            self._numbers[id(fresh)] = n
            return fresh
        if original is not fresh:
            merge(original, fresh)
        return original


def trackable(value: Any) -> bool:
    """Whether ``value`` is a mutable object whose identity a call can rely on."""
    kind = type(value)
    if kind in (list, dict, set, collections.OrderedDict, collections.defaultdict):
        return True
    np = sys.modules.get("numpy")
    if np is not None and kind is np.ndarray:
        return True
    torch = sys.modules.get("torch")
    if torch is not None and (kind in (torch.Tensor, torch.nn.Parameter) or isinstance(value, torch.nn.Module)):
        return True
    pd = sys.modules.get("pandas")
    if pd is not None and kind in (pd.DataFrame, pd.Series):
        return True
    return hasattr(kind, "__dataclass_fields__") and not getattr(kind.__dataclass_params__, "frozen", False)


def merge(original: Any, fresh: Any) -> None:
    """Change ``original`` in place to hold what ``fresh`` holds (ValueError when it cannot be the same object)."""
    np = sys.modules.get("numpy")
    torch = sys.modules.get("torch")
    if np is not None and type(original) is np.ndarray:
        _merge_array(np, original, fresh)
    elif torch is not None and isinstance(original, torch.Tensor):
        _merge_tensor(torch, original, fresh)
    elif torch is not None and isinstance(original, torch.nn.Module):
        _merge_module(torch, original, fresh)
    elif type(original) is list:
        _same_kind(original, fresh, list)
        original[:] = fresh
    elif isinstance(original, dict):
        _same_kind(original, fresh, dict)
        if (isinstance(original, collections.defaultdict) and isinstance(fresh, collections.defaultdict)
                and fresh.default_factory is not None):
            original.default_factory = fresh.default_factory
        items = [(k, _live(original.get(k), v, torch)) for k, v in fresh.items()]
        original.clear()
        original.update(items)
    elif type(original) is set:
        _same_kind(original, fresh, set)
        items = list(fresh)
        original.clear()
        original.update(items)
    elif type(original).__module__.startswith("pandas"):  # a frame or series: its whole inner state
        _same_kind(original, fresh, type(original))
        vars(original).clear()
        vars(original).update(vars(fresh))
    elif hasattr(type(original), "__dataclass_fields__"):
        names = getattr(fresh, "__lmrbench_fields__", None) or tuple(getattr(fresh, "__dataclass_fields__", ()))
        for name in names:
            if name not in type(original).__dataclass_fields__:
                raise ValueError(f"{type(original).__qualname__} has no field {name!r}")
            object.__setattr__(original, name, getattr(fresh, name))
    else:
        raise ValueError(f"a {type(original).__qualname__} cannot be changed in place")


def _live(old: Any, new: Any, torch: Any) -> Any:
    """``old`` given ``new``'s state when ``new`` is a record of a module the other side made in its place (the
    trusted side never builds the worker's classes), else ``new``."""
    if torch is not None and isinstance(old, torch.nn.Module) and type(new).__name__ == "ModuleRecord":
        _merge_module(torch, old, new)
        return old
    return new


def _same_kind(original: Any, fresh: Any, kind: type) -> None:
    if not isinstance(fresh, kind):
        raise ValueError(f"a {type(original).__qualname__} came back as a {type(fresh).__qualname__}")


def _merge_array(np: Any, original: Any, fresh: Any) -> None:
    if type(fresh) is not np.ndarray:
        raise ValueError(f"an array came back as a {type(fresh).__qualname__}")
    if fresh.dtype != original.dtype:
        raise ValueError(f"an array of {original.dtype} came back as {fresh.dtype}")
    if fresh.shape != original.shape:
        if fresh.size != original.size:
            raise ValueError(f"an array of shape {original.shape} came back as {fresh.shape}")
        original.shape = fresh.shape  # reshaped in place (ValueError when it cannot be without a copy)
    np.copyto(original, fresh)


def _merge_tensor(torch: Any, original: Any, fresh: Any) -> None:
    if not isinstance(fresh, torch.Tensor):
        raise ValueError(f"a tensor came back as a {type(fresh).__qualname__}")
    if fresh.dtype != original.dtype:
        raise ValueError(f"a tensor of {original.dtype} came back as {fresh.dtype}")
    with torch.no_grad():
        if fresh.shape != original.shape:
            original.data = fresh.detach().to(original.device)
        elif not torch.equal(original.detach().cpu(), fresh.detach().cpu()):
            original.copy_(fresh.detach())
    if original.is_leaf:
        if original.requires_grad != fresh.requires_grad and original.is_floating_point():
            original.requires_grad_(fresh.requires_grad)
        set_grad(original, fresh.grad)


def set_grad(tensor: Any, grad: Any) -> None:
    """Give a leaf ``tensor`` the gradient ``grad`` (None clears it), unless it already has that one."""
    if tensor.grad is not grad:
        tensor.grad = None if grad is None else grad.detach().to(tensor.device)


def _merge_module(torch: Any, original: Any, fresh: Any) -> None:
    """A module keeps its parameters and buffers by name (each the tensor the other side changed in place, or
    given its values), its training flag and its plain attributes."""
    state = fresh.state_dict(keep_vars=True) if isinstance(fresh, torch.nn.Module) else fresh.state_dict()
    mine = original.state_dict(keep_vars=True)
    if list(mine) != list(state):
        raise ValueError("the other side changed a module's parameters or buffers by name")
    for name, value in state.items():
        if value is not mine[name]:
            if not isinstance(value, torch.Tensor) or value.shape != mine[name].shape:
                raise ValueError(f"the other side changed {name}'s shape or kind")
            with torch.no_grad():
                mine[name].copy_(value)
    original.train(bool(fresh.training))
    attrs = getattr(fresh, "attrs", None)
    if attrs is None and isinstance(fresh, torch.nn.Module):
        attrs = {k: v for k, v in vars(fresh).items() if not k.startswith("_") and k != "training"}
    for name, value in (attrs or {}).items():
        if not hasattr(type(original), name):  # a plain attribute, never one that hides the class's own
            object.__setattr__(original, name, value)


# ---------------------------------------------------------------------------------------------- a call's state


def encode_state(enc: Any, unencodable: type[Exception], args: Any, kwargs: dict[str, Any], instance: Any, *,
                 strict: bool = False, strict_self: bool = False) -> dict[str, Any]:
    """What a message carries of the call's state: its arguments, the instance's attributes and every other
    object of the call (``detached``: one the call no longer reaches may still be held by the caller), each
    node with its origin. A value ``enc`` cannot encode raises with ``strict`` (an argument of the request) or
    ``strict_self`` (an attribute), else it is left out (``None``; an attribute is named in ``dropped``), as
    the other side keeps it."""

    def node(value: Any, where: str, must: bool = strict) -> Any:
        try:
            return enc.encode(value, where)
        except unencodable:
            if must:
                raise
            return None

    state: dict[str, Any] = {
        "args": [node(a, f"argument {i}") for i, a in enumerate(args)],
        "kwargs": {str(k): node(v, str(k)) for k, v in kwargs.items()},
    }
    if instance is not None:
        attrs = {name: node(value, f"self.{name}", strict_self) for name, value in vars(instance).items()}
        state["self"] = {k: v for k, v in attrs.items() if v is not None or getattr(instance, k) is None}
        state["dropped"] = [k for k in attrs if k not in state["self"]]
    objects = enc.identities.objects
    state["detached"] = [d for d in (node(objects[n], "an object of the call", False) for n in sorted(objects)
                                     if not enc.met(objects[n])) if d is not None]
    return state


def apply_state(read: Any, state: dict[str, Any], instance: Any, set_attribute: Any) -> None:
    """Bring this side's objects of the call to ``state`` (from ``encode_state`` on the other side): every node
    is read through ``read``, which changes each object of the call in place; the instance gets the attributes
    the other side left (``set_attribute(instance, name, value)``) and loses the ones it deleted."""
    for node in state.get("args") or []:
        if node is not None:
            read(node)
    for node in dict(state.get("kwargs") or {}).values():
        if node is not None:
            read(node)
    after = state.get("self")
    if instance is not None and isinstance(after, dict):
        values = {str(k): read(v) for k, v in after.items()}
        dropped = {str(d) for d in state.get("dropped") or []}
        for name in [a for a in vars(instance) if a not in values and a not in dropped]:
            delattr(instance, name)
        for name, value in values.items():
            set_attribute(instance, name, value)
    for node in state.get("detached") or []:
        read(node)
