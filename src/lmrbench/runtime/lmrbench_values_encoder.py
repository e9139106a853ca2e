"""Turn values into the codec's JSON nodes and numpy arrays: the writing half of ``lmrbench_values``.

``lmrbench_values`` describes the node format, reads it back (its ``Decoder``, the case files) and re-exports
what is here. This module ships beside it under its name plus ``_encoder``: ``lmrbench_values_encoder.py`` in a
task's ``unit_test/``, ``lmrbench_codec_encoder.py`` beside a split run's ``lmrbench_codec.py``, so that a
harness's codec and a task's copy never share a part. It needs the standard library and numpy only (and imports
nothing of lmrbench's); torch and pandas are used when the process has loaded them.
"""

from __future__ import annotations

import base64
import collections
import enum
import json
import math
import sys
from typing import Any

try:
    import numpy as np
except ImportError:  # a task environment without numpy: plain values only
    np = None  # type: ignore[assignment]

__tracebackhide__ = True  # pytest leaves this module's frames out of a failing test's traceback: the reader sees
# the test's line and the message, and pytest parses no source of this file per failure

BUILTIN_FACTORIES: dict[str, type] = {"dict": dict, "list": list, "set": set, "int": int, "float": float}
"""A defaultdict's default factories carried by name; any other must be a class importable by its name."""
DEFAULT_FACTORIES = tuple(BUILTIN_FACTORIES)


class UnencodableValue(Exception):
    """A value that cannot be saved faithfully; ``where`` names it (``batch['mask']``) and ``type_name``."""

    def __init__(self, where: str, type_name: str, why: str = "") -> None:
        self.where = where
        self.type_name = type_name
        self.why = why
        super().__init__(
            f"`{where}` is a {type_name}, which cannot be saved faithfully{': ' + why if why else ''}"
        )


def type_path(obj_type: type) -> str:
    """``module:QualName`` of a class."""
    return f"{obj_type.__module__}:{obj_type.__qualname__}"


def _loaded(name: str) -> Any:
    """The module ``name`` if something imported it, else None: no value of its types can exist before. A
    split run's worker imports this codec; importing pathlib and dataclasses only to find that no argument is a
    path or a dataclass cost it about 20 ms."""
    return sys.modules.get(name)


def _is_path(value: Any) -> bool:
    pathlib = _loaded("pathlib")
    return pathlib is not None and isinstance(value, pathlib.PurePath)


NAMESPACES = ("argparse:Namespace", "types:SimpleNamespace")
"""Attribute bags carried as records (``dataclass`` nodes) of their attributes."""


def plain_object(value: Any) -> bool:
    """True for an instance of a class written in Python in an importable module (not ``__main__``) whose whole
    state is its ``__dict__`` of identifier names: no ``__slots__``, no pickling hook, no base written in C but
    ``object``. Made again by ``cls.__new__`` and setting those attributes, as pickle makes it."""
    cls = type(value)
    if isinstance(value, type) or cls.__module__ in ("__main__", "builtins") or not hasattr(value, "__dict__"):
        return False
    hooks = ("__slots__", "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__", "__getnewargs__",
             "__getnewargs_ex__")
    for base in cls.__mro__[:-1]:
        if not base.__flags__ & _HEAP_TYPE or any(h in base.__dict__ for h in hooks):
            return False
    return all(isinstance(k, str) and k.isidentifier() for k in vars(value))


_HEAP_TYPE = 1 << 9
"""``Py_TPFLAGS_HEAPTYPE``: a class made by a ``class`` statement (one written in C lacks it)."""


def _is_dataclass(value: Any) -> bool:
    dataclasses = _loaded("dataclasses")
    return dataclasses is not None and bool(dataclasses.is_dataclass(value))


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields") and type(value) is not tuple


def _torch() -> Any:
    return sys.modules.get("torch")


def _pandas() -> Any:
    return sys.modules.get("pandas")


class Encoder:
    """Encodes values into JSON nodes, collecting arrays under keys that start with ``prefix``.

    With ``identities`` (a split run's message: ``lmrbench_identity.Identities``) every mutable object carries
    its origin number, an object met twice anywhere in the message is a ``ref`` the second time, and an array
    or tensor whose bytes did not change since the last message is ``"same"``; with ``callables`` as well (the
    trusted side), a function is a ``callback`` node the other side calls back through the channel."""

    def __init__(self, prefix: str = "a", identities: Any = None, *, callables: bool = False) -> None:
        self.prefix = prefix
        self.arrays: dict[str, np.ndarray] = {}
        self.identities = identities
        self.callables = callables
        self._depth = 0
        self._seen: dict[int, tuple[Any, dict[str, Any]]] = {}
        self._ids = 0
        self._keys = 0

    def _store(self, array: np.ndarray) -> str:
        key = f"{self.prefix}{self._keys}"
        self._keys += 1
        self.arrays[key] = array
        return key

    def encode(self, value: Any, where: str) -> Any:
        """The JSON node of ``value``; UnencodableValue names ``where`` (or the part inside) when it fails. An
        array or tensor met twice within one value (within the message, with ``identities``) is a ``ref`` to its
        first node the second time."""
        if self._depth == 0:
            if self.identities is None:
                self._seen = {}
            known = set(self._seen)
        self._depth += 1
        try:
            return self._encode(value, where)
        except UnencodableValue:
            if self._depth == 1:  # nothing of a value left out may be a ref's target later in the message
                for k in set(self._seen) - known:
                    del self._seen[k]
            raise
        finally:
            self._depth -= 1

    def holders(self) -> set[int]:
        """The ids of the encoder's own references to what it met: its table of them (a scan of the heap for who
        else holds an object leaves these out)."""
        return {id(entry) for entry in self._seen.values()} | {id(self._seen), id(self.arrays)}

    def met(self, value: Any) -> bool:
        """Whether ``value`` has a node in this message already."""
        known = self._seen.get(id(value))
        return known is not None and known[0] is value

    def _tracked(self, value: Any, where: str) -> Any:
        """The node of a mutable object of a split run's message, with its origin number (see the class)."""
        again = self._again(value)
        if again is not None:
            return again
        node = self._plain(value, where)
        if type(node) is list:
            node = {"$": "list", "items": node}
        n = self.identities.number(value)
        node["origin"] = n
        if node.get("$") in ("ndarray", "tensor"):
            array = self.arrays[node["key"]]
            if self.identities.unchanged(n, array):
                del self.arrays[node.pop("key")]
                node["same"] = True
            else:
                self.identities.agree(n, array)
        return self._remember(value, node)

    def _again(self, value: Any) -> Any:
        """A ``ref`` node when ``value`` was met before in this value (its first node gets the id), else None."""
        known = self._seen.get(id(value))
        if known is None or known[0] is not value:
            return None
        node = known[1]
        if "id" not in node:
            node["id"] = self._ids
            self._ids += 1
        return {"$": "ref", "id": node["id"]}

    def _remember(self, value: Any, node: dict[str, Any]) -> dict[str, Any]:
        self._seen[id(value)] = (value, node)
        return node

    def _encode(self, value: Any, where: str) -> Any:
        if self.identities is not None and self.identities.trackable(value):
            return self._tracked(value, where)
        return self._plain(value, where)

    def _plain(self, value: Any, where: str) -> Any:
        if value is None or type(value) in (bool, str):
            return value
        if type(value) is int:
            return value
        if type(value) is float:
            if math.isfinite(value):
                return value
            return {"$": "float", "value": repr(value)}
        if isinstance(value, enum.Enum):
            return {"$": "enum", "type": type_path(type(value)), "name": value.name}
        if type(value) is complex:
            return {
                "$": "complex",
                "real": self.encode(value.real, where),
                "imag": self.encode(value.imag, where),
            }
        if type(value) is bytes:
            return {"$": "bytes", "base64": base64.b64encode(value).decode("ascii")}
        if type(value) is list:
            return [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if type(value) is tuple:
            return {"$": "tuple", "items": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
        if _is_namedtuple(value):
            fields = list(type(value)._fields)
            items = [self.encode(v, f"{where}.{f}") for f, v in zip(fields, value, strict=True)]
            return {"$": "namedtuple", "type": type_path(type(value)), "fields": fields, "items": items}
        if type(value) in (set, frozenset):
            items = [self.encode(v, f"{where}{{...}}") for v in value]
            items.sort(key=lambda n: json.dumps(n, sort_keys=True))
            return {"$": type(value).__name__, "items": items}
        if type(value) is collections.defaultdict:
            pairs = [
                [self.encode(k, f"{where} key"), self.encode(v, f"{where}[{k!r}]")] for k, v in value.items()
            ]
            return {"$": "defaultdict", "items": pairs, "factory": _factory_name(value.default_factory, where)}
        if type(value) in (dict, collections.OrderedDict):
            pairs = [
                [self.encode(k, f"{where} key"), self.encode(v, f"{where}[{k!r}]")] for k, v in value.items()
            ]
            return {"$": "dict", "items": pairs, "ordered": type(value) is collections.OrderedDict}
        if type(value) is slice:
            parts = [self.encode(x, where) for x in (value.start, value.stop, value.step)]
            return {"$": "slice", "items": parts}
        if _is_path(value):
            return {"$": "path", "value": str(value), "type": type_path(type(value))}
        if _is_dataclass(value) and not isinstance(value, type):
            named = {
                f.name: self.encode(getattr(value, f.name), f"{where}.{f.name}")
                for f in _loaded("dataclasses").fields(value)
            }
            return {"$": "dataclass", "type": type_path(type(value)), "fields": named}
        if type_path(type(value)) in NAMESPACES:  # ``args`` of a training script: a record of its attributes
            named = {k: self.encode(v, f"{where}.{k}") for k, v in vars(value).items() if isinstance(k, str)}
            return {"$": "dataclass", "type": type_path(type(value)), "fields": named}
        node = self._encode_numpy(value, where)
        if node is not None:
            return node
        node = self._encode_torch(value, where)
        if node is not None:
            return node
        node = self._encode_pandas(value, where)
        if node is not None:
            return node
        if self.callables and callable(value) and not isinstance(value, type):
            name = getattr(value, "__qualname__", None) or _type_name(value)
            return {"$": "callback", "ref": self.identities.callback(value), "name": str(name)[:200]}
        if plain_object(value):  # a model or tokenizer of the repository's own: a record of its attributes
            named = {k: self.encode(v, f"{where}.{k}") for k, v in vars(value).items()}
            return {"$": "dataclass", "type": type_path(type(value)), "fields": named}
        raise UnencodableValue(where, _type_name(value))

    def _encode_numpy(self, value: Any, where: str) -> Any:
        if np is None:
            return None
        if type(value) is np.ndarray:
            if value.dtype.hasobject:
                raise UnencodableValue(
                    where, f"numpy array of dtype {value.dtype}", "object arrays need pickle"
                )
            again = self._again(value)
            if again is not None:
                return again
            return self._remember(value, {"$": "ndarray", "key": self._store(np.array(value, copy=True))})
        if isinstance(value, np.generic):
            if value.dtype.hasobject:
                raise UnencodableValue(where, _type_name(value))
            return {"$": "npscalar", "key": self._store(np.array(value))}
        if isinstance(value, np.dtype):
            if value.names is None:
                return {"$": "np_dtype", "str": value.str}
            return {"$": "np_dtype", "descr": [list(d) for d in value.descr]}
        if isinstance(value, type) and issubclass(value, np.generic):
            return {"$": "np_dtype", "str": np.dtype(value).str}
        if isinstance(value, np.random.Generator):
            state = value.bit_generator.state
            return {"$": "np_generator", "state": self.encode(state, f"{where}.bit_generator.state")}
        if isinstance(value, np.random.RandomState):
            return {"$": "np_randomstate", "state": self.encode(value.get_state(), f"{where}.get_state()")}
        return None

    def _encode_torch(self, value: Any, where: str) -> Any:
        torch = _torch()
        if torch is None:
            return None
        if isinstance(value, torch.dtype):
            return {"$": "torch_dtype", "name": str(value).removeprefix("torch.")}
        if isinstance(value, torch.device):
            return {"$": "torch_device", "name": str(value)}
        if isinstance(value, torch.nn.Module):
            return self._encode_module(value, where)
        if not isinstance(value, torch.Tensor):
            return None
        if np is None:
            raise UnencodableValue(where, "tensor", "a tensor is saved as a numpy array, and numpy is not installed")
        if type(value) not in (torch.Tensor, torch.nn.Parameter):
            raise UnencodableValue(where, _type_name(value), "tensor subclasses are not supported")
        again = self._again(value)
        if again is not None:
            return again
        if value.layout != torch.strided:
            raise UnencodableValue(where, f"{value.layout} tensor", "only dense tensors are supported")
        dtype = str(value.dtype).removeprefix("torch.")
        data = value.detach().cpu()
        if value.dtype == torch.bfloat16:
            data = data.float()
        try:
            array = np.array(data.numpy(), copy=True)
        except (TypeError, RuntimeError) as exc:
            raise UnencodableValue(where, f"tensor of dtype {dtype}", str(exc)) from None
        node = self._remember(value, {
            "$": "tensor",
            "key": self._store(array),
            "dtype": dtype,
            "device": str(value.device),
            "requires_grad": bool(value.requires_grad),
            "parameter": type(value) is torch.nn.Parameter,
        })
        if value.is_leaf and value.grad is not None:  # an optimiser's step reads it
            node["grad"] = self.encode(value.grad, f"{where}.grad")
        return node

    def _encode_module(self, module: Any, where: str) -> Any:
        """An ``nn.Module``: its own parameters and buffers, its plain attributes (hyper-parameters), and its
        children as module nodes (hooks are not carried: a module with hooks is refused)."""
        inner = vars(module)
        hooks = [k for k, v in inner.items() if k.startswith("_") and "hook" in k and v]
        if hooks:
            raise UnencodableValue(where, _type_name(module), f"it has hooks ({', '.join(hooks)})")
        attrs = {k: v for k, v in inner.items() if not k.startswith("_") and k != "training"}
        return {
            "$": "module",
            "type": type_path(type(module)),
            "training": bool(module.training),
            "attrs": self.encode(attrs, where),
            "params": {k: self.encode(v, f"{where}.{k}") for k, v in module._parameters.items()},
            "buffers": {k: self.encode(v, f"{where}.{k}") for k, v in module._buffers.items()},
            "non_persistent": sorted(module._non_persistent_buffers_set),
            "children": {k: self.encode(v, f"{where}.{k}") for k, v in module._modules.items()},
        }

    def _encode_pandas(self, value: Any, where: str) -> Any:
        pd = _pandas()
        if pd is None:
            return None
        if type(value) is pd.DataFrame:
            columns = [self.encode(c, f"{where}.columns") for c in value.columns]
            data = [self._column(value.iloc[:, i], f"{where}[{c!r}]") for i, c in enumerate(value.columns)]
            return {
                "$": "dataframe",
                "columns": columns,
                "data": data,
                "index": self._index(value.index, where),
            }
        if type(value) is pd.Series:
            return {
                "$": "series",
                "name": self.encode(value.name, f"{where}.name"),
                "data": self._column(value, where),
                "index": self._index(value.index, where),
            }
        return None

    def _column(self, series: Any, where: str) -> Any:
        array = series.to_numpy()
        if array.dtype.hasobject:
            return {
                "$": "list",
                "items": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(array.tolist())],
                "pd_dtype": str(series.dtype),
            }
        return {"$": "ndarray", "key": self._store(np.array(array, copy=True)), "pd_dtype": str(series.dtype)}

    def _index(self, index: Any, where: str) -> Any:
        pd = _pandas()
        if type(index) is pd.RangeIndex:
            return {
                "$": "range_index",
                "start": index.start,
                "stop": index.stop,
                "step": index.step,
                "name": index.name,
            }
        if type(index) is pd.MultiIndex:
            raise UnencodableValue(f"{where}.index", "pandas MultiIndex")
        return {
            "$": "index",
            "name": self.encode(index.name, f"{where}.index.name"),
            "data": self._column(pd.Series(index), f"{where}.index"),
        }


def _factory_name(factory: Any, where: str) -> Any:
    """How a defaultdict's default factory is saved: None, a name of ``DEFAULT_FACTORIES``, or the
    ``module:QualName`` of a class importable by it."""
    if factory is None:
        return None
    if isinstance(factory, type) and factory.__module__ == "builtins" and factory.__name__ in DEFAULT_FACTORIES:
        return factory.__name__
    if isinstance(factory, type) and "<locals>" not in factory.__qualname__ and factory.__module__ != "__main__":
        return type_path(factory)
    raise UnencodableValue(
        where, "collections.defaultdict", f"its default factory {getattr(factory, '__qualname__', factory)!r} is "
        f"not one of {', '.join(DEFAULT_FACTORIES)} nor a class importable by name: use one of those (a "
        "module-level class, or a plain dict filled with setdefault)",
    )


def _type_name(value: Any) -> str:
    t = type(value)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
