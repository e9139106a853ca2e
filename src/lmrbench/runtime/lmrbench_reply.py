"""Decode values that untrusted code sent (a split run's worker replies) by an allow-list: nothing is imported,
and nothing the reply names is looked up as a live class or called.

This module runs on the trusted side of a split run, where lmrbench is not installed (standard library; numpy,
torch and pandas only when the process already loaded them). It reads the JSON nodes that ``lmrbench_values``'
Encoder writes, but only these kinds, each built by code of this module from plain data:

==============================================  ====================================================================
JSON scalars, lists                             as they are
``float`` ``complex`` ``bytes`` ``slice``       from their numbers, base64 text and items
``tuple`` ``list`` ``set`` ``frozenset`` ``dict``   from their items (set items and dict keys must hash: plain values,
                                                or tensors made here, which hash by identity)
``defaultdict``                                 from its items; its factory when one of ``dict list set int float``,
                                                none for a class it names (a reply's class is never called)
``ref``                                         the object made here for the node of that id earlier in the reply
``namedtuple``                                  a record: a ``collections.namedtuple`` class made here with the
                                                node's field names and its type's name (never the class it names)
``dataclass``                                   a ``DataRecord``: the type's name and the fields (never the class)
``module``                                      a ``ModuleRecord``: an ``nn.Module``'s type name, ``training`` flag
                                                and ``state`` (its state_dict: name -> tensor), never the module
``enum``                                        the member of an Enum class already loaded here, found in the
                                                class's own member table
``path``                                        one of pathlib's six path classes, from the text
``ndarray`` ``npscalar``                        the arrays of the message (read without pickle)
``np_dtype``                                    a numpy dtype from a type string of an allowed form (no objects)
``np_generator`` ``np_randomstate``             numpy's own bit generators, by an allowed name
``tensor`` ``torch_dtype`` ``torch_device``     when torch is loaded: allowed dtype names, device names by pattern
``dataframe`` ``series`` ``index`` ...          when pandas is loaded: allowed column dtypes
==============================================  ====================================================================

Anything else is a ``ValueError``. A record compares as the value it stands for: ``lmrbench_checkers`` compares a
namedtuple with a record (or a dataclass with a ``DataRecord``) by field names and values.
"""

from __future__ import annotations

import base64
import collections
import enum
import keyword
import re
import sys
from typing import Any

__tracebackhide__ = True  # pytest leaves this module's frames out of a failing test's traceback: the reader sees
# the test's line and the message, and pytest parses no source of this file per failure

__all__ = ["DataRecord", "ModuleRecord", "Reader", "decode_reply", "namedtuple_record"]

TORCH_DTYPES = frozenset(
    [
        "float16", "float32", "float64", "bfloat16", "half", "float", "double", "complex64", "complex128", "cfloat",
        "cdouble", "uint8", "int8", "int16", "int32", "int64", "short", "int", "long", "bool",
    ]
)
"""torch dtype names a reply may use (``getattr(torch, name)`` is taken for these only)."""
PANDAS_DTYPES = frozenset(
    [
        "object", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
        "float32", "float64", "complex64", "complex128", "category", "datetime64[ns]", "timedelta64[ns]", "Int8",
        "Int16", "Int32", "Int64", "Float32", "Float64", "boolean", "str",
    ]
)
"""pandas column dtypes a reply may name (none that loads an optional library, such as ``string[pyarrow]``)."""
BIT_GENERATORS = frozenset({"PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"})
"""numpy bit generators a reply may name."""
PATH_TYPES = frozenset({"PurePath", "PurePosixPath", "PureWindowsPath", "Path", "PosixPath", "WindowsPath"})
"""pathlib classes a reply may name."""
_NP_TYPESTR = re.compile(r"[<>|=]?[biufcSUVmM]\d*(\[[A-Za-z0-9]+\])?")
_DEVICE = re.compile(r"(cpu|cuda|mps|meta|xpu)(:\d{1,3})?")
MAX_RECORD_TYPES = 256
"""Record classes kept for reuse; a reply naming more gets fresh classes (no unbounded cache)."""

_RECORDS: dict[tuple[str, tuple[str, ...]], type] = {}


def _name_of(type_path: str) -> str:
    name = type_path.partition(":")[2].rpartition(".")[2]
    return name if name.isidentifier() and not keyword.iskeyword(name) else "Record"


def namedtuple_record(type_path: str, fields: list[str] | tuple[str, ...]) -> type:
    """A namedtuple class standing for the one at ``type_path`` (``module:QualName``): same field names, the
    type's name, ``_lmrbench_type`` set to the path. ValueError for field names a namedtuple refuses."""
    if not isinstance(type_path, str) or not all(isinstance(f, str) for f in fields):
        raise ValueError("a namedtuple's type and field names must be text")
    key = (type_path, tuple(fields))
    known = _RECORDS.get(key)
    if known is not None:
        return known
    module = type_path.partition(":")[0]
    cls: Any = collections.namedtuple(_name_of(type_path), list(fields), module=module or None)  # type: ignore[misc]
    cls._lmrbench_type = type_path  # type: ignore[attr-defined]
    if len(_RECORDS) < MAX_RECORD_TYPES:
        _RECORDS[key] = cls
    return cls


class DataRecord:
    """A dataclass instance sent by untrusted code: its type's name and its fields, read as attributes.

    The class it names is never looked up: the trusted side may not have loaded it, and must not run its code.
    ``lmrbench_checkers`` compares it with a dataclass (or another record) by field names and values.
    """

    __slots__ = ("_lmrbench_type", "_values")

    def __init__(self, type_path: str, values: dict[str, Any]) -> None:
        object.__setattr__(self, "_lmrbench_type", str(type_path))
        object.__setattr__(self, "_values", dict(values))

    @property
    def __lmrbench_fields__(self) -> tuple[str, ...]:
        """The field names, in their order."""
        return tuple(self._values)

    def __getattr__(self, name: str) -> Any:
        try:
            return object.__getattribute__(self, "_values")[name]
        except KeyError:
            raise AttributeError(f"{self._lmrbench_type} has no field {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        self._values[name] = value

    def __eq__(self, other: object) -> bool:
        names = fields_of(other)
        if names is None or names[1] != tuple(self._values):
            return NotImplemented
        try:
            return all(bool(self._values[n] == getattr(other, n)) for n in names[1])
        except (TypeError, ValueError):
            return False

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"{_name_of(self._lmrbench_type)}({inner})"


class ModuleRecord:
    """An ``nn.Module`` sent by untrusted code: its type's name, ``training`` flag and ``state`` (its
    state_dict, name -> tensor). Compared with a module by its state_dict."""

    __slots__ = ("attrs", "state", "training", "type_path")

    def __init__(self, type_path: str, state: dict[str, Any], training: bool,
                 attrs: dict[str, Any] | None = None) -> None:
        self.type_path = str(type_path)
        self.state = state
        self.training = bool(training)
        self.attrs = dict(attrs or {})

    def state_dict(self) -> dict[str, Any]:
        """The parameters and buffers by name, as ``nn.Module.state_dict`` gives them."""
        return dict(self.state)

    def __repr__(self) -> str:
        return f"{_name_of(self.type_path)}(module with {len(self.state)} tensors)"


NAMESPACES = ("argparse:Namespace", "types:SimpleNamespace")
"""The attribute bags the codec's writer carries as ``dataclass`` nodes (``lmrbench_values_encoder.NAMESPACES``;
this reader imports nothing of the codec)."""


def fields_of(value: Any) -> tuple[str, tuple[str, ...]] | None:
    """``("namedtuple" | "dataclass", field names)`` of a namedtuple, a dataclass instance or a record, else None
    (read from the value's class, never calling it)."""
    cls = type(value)
    if isinstance(value, tuple) and cls is not tuple:
        names = getattr(cls, "_fields", None)
        if isinstance(names, tuple) and all(isinstance(n, str) for n in names):
            return "namedtuple", names
        return None
    if cls is DataRecord:
        return "dataclass", value.__lmrbench_fields__
    if f"{cls.__module__}:{cls.__qualname__}" in NAMESPACES or _plain_class(cls) and hasattr(value, "__dict__") \
            and not isinstance(value, type) and not hasattr(cls, "__dataclass_fields__"):
        return "dataclass", tuple(k for k in vars(value) if isinstance(k, str))
    dataclass_fields = getattr(cls, "__dataclass_fields__", None)
    if isinstance(dataclass_fields, dict) and not isinstance(value, type):
        kinds = [getattr(f, "_field_type", None) for f in dataclass_fields.values()]
        names = tuple(n for n, k in zip(dataclass_fields, kinds, strict=True) if repr(k) == "_FIELD")
        return "dataclass", names
    return None


def decode_reply(node: Any, arrays: dict[str, Any]) -> Any:
    """The value of an untrusted node (ValueError, TypeError or KeyError for anything off the allow-list)."""
    return Reader(arrays).read(node)


_FACTORIES: dict[str, type] = {"dict": dict, "list": list, "set": set, "int": int, "float": float}


class Reader:
    """Reads the nodes of one untrusted message. With ``identities`` (a split run's call:
    ``lmrbench_identity.Identities``) a node with an origin number is the trusted side's own object of that
    number, changed in place to hold what the worker left, and refs reach across the whole message."""

    def __init__(self, arrays: dict[str, Any], identities: Any = None) -> None:
        self.arrays = arrays
        self.identities = identities
        self.made: dict[int, Any] = {}
        self.modules: dict[int, dict[str, Any]] = {}
        """The state (name -> tensor, relative) of each module node with an id, for a child that refs it."""

    def read(self, node: Any) -> Any:
        if node is None or type(node) in (bool, int, float, str):
            return node
        if type(node) is list:
            return [self.read(n) for n in node]
        if type(node) is not dict or type(node.get("$")) is not str:
            raise ValueError(f"not a value node: {type(node).__name__}")
        method = _KINDS.get(node["$"])
        if method is None:
            raise ValueError(f"{node['$']!r} is not a value kind a reply may hold")
        value = method(self, node)
        if self.identities is not None and "origin" in node:
            value = self.identities.resolve(node["origin"], value)
        if "id" in node and node["$"] != "ref":
            if type(node["id"]) is not int or node["id"] in self.made:
                raise ValueError("a node's id must be a new integer")
            self.made[node["id"]] = value
        return value

    def k_ref(self, node: dict[str, Any]) -> Any:
        if type(node.get("id")) is not int or node["id"] not in self.made:
            raise ValueError("a ref must name a node read before it")
        return self.made[node["id"]]

    def k_defaultdict(self, node: dict[str, Any]) -> Any:
        name = node.get("factory")
        if name is not None and type(name) is not str:
            raise ValueError("a defaultdict's factory is a name")
        out: collections.defaultdict[Any, Any] = collections.defaultdict(_FACTORIES.get(name or ""))
        out.update(self.k_dict({"$": "dict", "items": node["items"]}))
        return out

    def items(self, node: dict[str, Any]) -> list[Any]:
        items = node["items"]
        if type(items) is not list:
            raise ValueError("items must be a list")
        return [self.read(n) for n in items]

    def text(self, node: dict[str, Any], key: str) -> str:
        value = node[key]
        if type(value) is not str:
            raise ValueError(f"{node['$']}: {key} must be text")
        return value

    def array(self, node: dict[str, Any]) -> Any:
        array = self.arrays[self.text(node, "key")]
        np = sys.modules.get("numpy")
        if np is None or type(array) is not np.ndarray or array.dtype.hasobject:
            raise ValueError("an array node without a plain array")
        return array

    # kinds ------------------------------------------------------------------------------------------------

    def k_float(self, node: dict[str, Any]) -> float:
        text = self.text(node, "value")
        if text not in ("nan", "inf", "-inf"):
            raise ValueError(f"{text!r} is not a non-finite float")
        return float(text)

    def k_complex(self, node: dict[str, Any]) -> complex:
        real, imag = self.read(node["real"]), self.read(node["imag"])
        if type(real) not in (int, float) or type(imag) not in (int, float):
            raise ValueError("a complex number's parts must be numbers")
        return complex(real, imag)

    def k_bytes(self, node: dict[str, Any]) -> bytes:
        return base64.b64decode(self.text(node, "base64"), validate=True)

    def k_tuple(self, node: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(self.items(node))

    def k_list(self, node: dict[str, Any]) -> list[Any]:
        return self.items(node)

    def k_set(self, node: dict[str, Any]) -> set[Any]:
        return set(self.hashable(self.items(node)))

    def k_frozenset(self, node: dict[str, Any]) -> frozenset[Any]:
        return frozenset(self.hashable(self.items(node)))

    def hashable(self, values: list[Any]) -> list[Any]:
        """Values this module made whose hash runs no code of theirs: plain values, tuples and records."""
        for v in values:
            if not _plain_key(v):
                raise ValueError(f"a {type(v).__name__} cannot be a set item or a dict key in a reply")
        return values

    def k_dict(self, node: dict[str, Any]) -> dict[Any, Any]:
        pairs = node["items"]
        if type(pairs) is not list or not all(type(p) is list and len(p) == 2 for p in pairs):
            raise ValueError("a dict's items must be [key, value] pairs")
        keys = self.hashable([self.read(k) for k, _ in pairs])
        values = [self.read(v) for _, v in pairs]
        out = dict(zip(keys, values, strict=True))
        return collections.OrderedDict(out) if node.get("ordered") is True else out

    def k_slice(self, node: dict[str, Any]) -> slice:
        parts = self.items(node)
        if len(parts) != 3 or not all(p is None or type(p) is int for p in parts):
            raise ValueError("a slice holds three integers or None")
        return slice(*parts)

    def k_namedtuple(self, node: dict[str, Any]) -> Any:
        items = self.items(node)
        fields = node.get("fields")
        if type(fields) is not list or len(fields) != len(items):
            raise ValueError("a namedtuple in a reply must name its fields")
        cls = namedtuple_record(_not_other(self.text(node, "type"), "namedtuple"), fields)
        return tuple.__new__(cls, items)

    def k_dataclass(self, node: dict[str, Any]) -> DataRecord:
        fields = node["fields"]
        if type(fields) is not dict or not all(type(k) is str and k.isidentifier() for k in fields):
            raise ValueError("a dataclass's fields must be named by identifiers")
        type_path = _not_other(self.text(node, "type"), "dataclass")
        return DataRecord(type_path, {k: self.read(v) for k, v in fields.items()})

    def k_module(self, node: dict[str, Any]) -> ModuleRecord:
        raw = node.get("attrs")
        attrs = {} if raw is None or raw == {} else self.read(raw)
        if type(attrs) is not dict or not all(type(k) is str and k.isidentifier() for k in attrs):
            raise ValueError("a module's attributes must be named by identifiers")
        state: dict[str, Any] = {}
        self.flatten(node, "", state)
        return ModuleRecord(self.text(node, "type"), state, node.get("training") is True, attrs)

    def flatten(self, node: Any, prefix: str, state: dict[str, Any]) -> None:
        """A module node's parameters and persistent buffers, then its children's, named as in a state_dict. A
        child met before in the reply (one module registered twice, as ``nn.Sequential(lin, act, lin2, act)``
        holds ``act``) comes as a ref: its tensors again under this name too, as ``state_dict`` gives them."""
        if type(node) is dict and node.get("$") == "ref":
            shared = self.modules.get(node.get("id"))  # type: ignore[arg-type]
            if shared is None:
                raise ValueError("a module's child must be a module, or a ref to a module read before it")
            state.update({prefix + name: value for name, value in shared.items()})
            return
        if type(node) is not dict or node.get("$") != "module":
            raise ValueError("a module's child must be a module")
        skip = node.get("non_persistent") or []
        for group in ("params", "buffers", "children"):
            if type(node[group]) is not dict or not all(type(k) is str for k in node[group]):
                raise ValueError(f"a module's {group} must be named")
        own: dict[str, Any] = {}
        for group in ("params", "buffers"):
            for name, value in node[group].items():
                if value is not None and not (group == "buffers" and name in skip):
                    own[name] = self.read(value)
        for name, child in node["children"].items():
            if child is not None:
                self.flatten(child, f"{name}.", own)
        if "id" in node:
            if type(node["id"]) is not int or node["id"] in self.modules:
                raise ValueError("a module node's id must be a new integer")
            self.modules[node["id"]] = own
        state.update({prefix + name: value for name, value in own.items()})

    def k_enum(self, node: dict[str, Any]) -> Any:
        cls = _loaded_class(self.text(node, "type"))
        if not isinstance(cls, enum.EnumMeta):
            raise ValueError(f"{node['type']!r} is not an Enum class loaded here")
        member = cls.__dict__.get("_member_map_", {}).get(self.text(node, "name"))
        if member is None:
            raise ValueError(f"{node['type']!r} has no member {node['name']!r}")
        return member

    def k_path(self, node: dict[str, Any]) -> Any:
        module, _, name = self.text(node, "type").partition(":")
        pathlib = sys.modules.get("pathlib")
        if pathlib is None or module not in ("pathlib", "pathlib._local") or name not in PATH_TYPES:
            raise ValueError(f"{node['type']!r} is not a pathlib path class")
        return pathlib.__dict__[name](self.text(node, "value"))

    def k_ndarray(self, node: dict[str, Any]) -> Any:
        if node.get("same") is True and self.identities is not None:
            return self.identities.kept_array(node.get("origin"))
        array = self.array(node)
        if self.identities is not None and "origin" in node:
            self.identities.agree(node["origin"], array)
        return array.copy()

    def k_npscalar(self, node: dict[str, Any]) -> Any:
        array = self.array(node)
        if array.ndim != 0:
            raise ValueError("a numpy scalar must be a 0-d array")
        return array[()]

    def k_np_dtype(self, node: dict[str, Any]) -> Any:
        np = _need("numpy")
        if "descr" in node:
            return np.dtype(_descr(node["descr"]))
        return np.dtype(_typestr(self.text(node, "str")))

    def k_np_generator(self, node: dict[str, Any]) -> Any:
        state = self.read(node["state"])
        name = state.get("bit_generator") if type(state) is dict else None
        if name not in BIT_GENERATORS:
            raise ValueError(f"{name!r} is not a numpy bit generator")
        random = _need("numpy.random")  # numpy loads it lazily: never on behalf of a reply
        bitgen = random.__dict__[name]()
        bitgen.state = state
        return random.Generator(bitgen)

    def k_np_randomstate(self, node: dict[str, Any]) -> Any:
        state = self.read(node["state"])
        if type(state) is not tuple:
            raise ValueError("a RandomState's state is a tuple")
        rs = _need("numpy.random").RandomState()
        rs.set_state(state)
        return rs

    def k_tensor(self, node: dict[str, Any]) -> Any:
        torch = _need("torch")
        if node.get("same") is True and self.identities is not None:
            grad = self.read(node["grad"]) if "grad" in node else None
            if grad is not None and type(grad) not in (torch.Tensor, torch.nn.Parameter):
                raise ValueError("a tensor's grad is a tensor")
            return self.identities.kept_tensor(node.get("origin"), node.get("requires_grad") is True, grad)
        dtype = _torch_dtype(torch, self.text(node, "dtype"))
        array = self.array(node)
        if self.identities is not None and "origin" in node:
            self.identities.agree(node["origin"], array)
        device = self.text(node, "device") if "device" in node else "cpu"
        tensor = on_device(torch, torch.from_numpy(array.copy()).to(dtype), device)
        if node.get("parameter") is True:
            tensor = torch.nn.Parameter(tensor, requires_grad=node.get("requires_grad") is True)
        elif node.get("requires_grad") is True and tensor.is_floating_point():
            tensor.requires_grad_(True)
        if "grad" in node:
            grad = self.read(node["grad"])
            if type(grad) is not torch.Tensor:
                raise ValueError("a tensor's grad is a tensor")
            tensor.grad = grad
        return tensor

    def k_torch_dtype(self, node: dict[str, Any]) -> Any:
        return _torch_dtype(_need("torch"), self.text(node, "name"))

    def k_torch_device(self, node: dict[str, Any]) -> Any:
        torch = _need("torch")
        name = self.text(node, "name")
        if not _DEVICE.fullmatch(name):
            raise ValueError(f"{name!r} is not a device name")
        return torch.device(name)

    def k_dataframe(self, node: dict[str, Any]) -> Any:
        pd = _need("pandas")
        columns = [self.read(c) for c in node["columns"]]
        data = {i: self.column(d) for i, d in enumerate(node["data"])}
        frame = pd.DataFrame(data)
        frame.index = self.k_index_any(node["index"])
        frame.columns = self.hashable(columns)
        return frame

    def k_series(self, node: dict[str, Any]) -> Any:
        series = self.column(node["data"])
        series.index = self.k_index_any(node["index"])
        series.name = self.hashable([self.read(node["name"])])[0]
        return series

    def column(self, node: dict[str, Any]) -> Any:
        pd = _need("pandas")
        dtype = node.get("pd_dtype")
        if dtype is not None and dtype not in PANDAS_DTYPES:
            raise ValueError(f"{dtype!r} is not a column dtype a reply may name")
        if node.get("$") == "list":
            return pd.Series(self.items(node), dtype=dtype or object)
        if node.get("$") != "ndarray":
            raise ValueError("a column is an array or a list")
        values = self.k_ndarray(node)
        return pd.Series(values, dtype=dtype or values.dtype)

    def k_index_any(self, node: dict[str, Any]) -> Any:
        pd = _need("pandas")
        if type(node) is not dict:
            raise ValueError("an index must be an index node")
        name = self.hashable([self.read(node.get("name"))])[0]
        if node.get("$") == "range_index":
            bounds = [node["start"], node["stop"], node["step"]]
            if not all(type(b) is int for b in bounds):
                raise ValueError("a range index holds integers")
            return pd.RangeIndex(*bounds, name=name)
        if node.get("$") != "index":
            raise ValueError("an index must be an index node")
        return pd.Index(self.column(node["data"]), name=name)


_KINDS = {name[2:]: method for name, method in vars(Reader).items() if name.startswith("k_")}
_KINDS.pop("index_any")


def _plain_key(value: Any) -> bool:
    if value is None or type(value) in (bool, int, float, complex, str, bytes):
        return True
    if isinstance(value, tuple) and (type(value) is tuple or "_lmrbench_type" in type(value).__dict__):
        return all(_plain_key(v) for v in value)
    if type(value) is frozenset:
        return all(_plain_key(v) for v in value)
    torch = sys.modules.get("torch")
    if torch is not None and type(value) in (torch.Tensor, torch.nn.Parameter):
        return True  # made by k_tensor: hashes by identity, as an optimiser's state keys do
    return isinstance(value, enum.Enum) or type(value).__module__ == "numpy"


def _need(name: str) -> Any:
    module = sys.modules.get(name)
    if module is None:
        raise ValueError(f"the reply holds a {name} value, but {name} is not loaded here")
    return module


def on_device(torch: Any, tensor: Any, device: str) -> Any:
    """``tensor`` moved to the recorded ``device`` when this machine has it (a name of an allowed form); on the CPU
    otherwise: a task recorded on a GPU is graded where there may be none, and the checkers do not compare
    devices."""
    if not isinstance(device, str) or not _DEVICE.fullmatch(device):
        raise ValueError(f"{device!r} is not a device name")
    kind = device.partition(":")[0]
    if kind == "cuda" and torch.cuda.is_available():
        return tensor.to(device)
    return tensor


def _torch_dtype(torch: Any, name: str) -> Any:
    if name not in TORCH_DTYPES:
        raise ValueError(f"{name!r} is not a torch dtype a reply may name")
    return torch.__dict__[name]


def _typestr(text: str) -> str:
    if not _NP_TYPESTR.fullmatch(text):
        raise ValueError(f"{text!r} is not a numpy type string a reply may use")
    return text


def _descr(descr: Any) -> list[tuple[Any, ...]]:
    if type(descr) is not list:
        raise ValueError("a structured dtype's description is a list")
    out = []
    for entry in descr:
        if type(entry) is not list or not 2 <= len(entry) <= 3 or type(entry[0]) is not str:
            raise ValueError("a structured dtype's field is [name, type] or [name, type, shape]")
        kind = _descr(entry[1]) if type(entry[1]) is list else _typestr(entry[1])
        shape = entry[2:] and [tuple(int(n) for n in entry[2] if type(n) is int)]
        out.append((entry[0], kind, *shape))
    return out


def _not_other(type_path: str, kind: str) -> str:
    """``type_path``, unless it names something loaded here that is not a class of ``kind`` (``os:system`` is
    refused as a dataclass); a type that is not loaded here is fine: only its name is kept."""
    obj = _loaded_object(type_path)
    if obj is None or kind == "dataclass" and type_path in NAMESPACES:
        return type_path  # attribute bags the codec carries as records
    is_kind = isinstance(obj, type) and (
        any("__dataclass_fields__" in c.__dict__ for c in obj.__mro__) or _plain_class(obj) if kind == "dataclass"
        else issubclass(obj, tuple)
    )
    if not is_kind:
        raise ValueError(f"{type_path!r} is not a {kind} type")
    return type_path


def _plain_class(cls: type) -> bool:
    """A class written in Python whose instances are records of their ``__dict__`` (the codec's writer carries
    them as ``dataclass`` nodes: ``lmrbench_values_encoder.plain_object``): no base written in C but ``object``,
    no ``__slots__``, no pickling hook."""
    hooks = ("__slots__", "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__", "__getnewargs__",
             "__getnewargs_ex__")
    return cls.__module__ not in ("__main__", "builtins") and all(
        base.__flags__ & (1 << 9) and not any(h in base.__dict__ for h in hooks) for base in cls.__mro__[:-1])


def _loaded_class(type_path: str) -> Any:
    """The class at ``module:QualName`` if that module is loaded, else None."""
    obj = _loaded_object(type_path)
    return obj if isinstance(obj, type) else None


def _loaded_object(type_path: str) -> Any:
    """What ``module:QualName`` names if that module is loaded, read through ``__dict__`` (no attribute hook, no
    import), else None."""
    module, _, qual = type_path.partition(":")
    obj: Any = sys.modules.get(module)
    for part in qual.split("."):
        if obj is None or not (isinstance(obj, type) or type(obj).__name__ == "module"):
            return None
        obj = obj.__dict__.get(part)
    return obj
