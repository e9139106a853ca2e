"""Save and load the values of recorded calls faithfully: no pickle, only JSON and numpy arrays.

This module is copied into a task's ``unit_test/`` folder and runs where lmrbench is not installed: it needs
the standard library and numpy only; torch and pandas are used when the value holds them. It reads values back
(``Decoder``), reads and writes case files (``load_case``), carries the random state, and describes and hashes
encoded values; the writing half (``Encoder``, re-exported here) is ``lmrbench_values_encoder``, shipped beside
this file under this module's name plus ``_encoder``.

A value is encoded as a JSON node plus named numpy arrays. Plain JSON holds None, bools, ints, finite floats,
strings and lists; everything else is an object with a ``"$"`` key naming its kind:

===============  ==============================================================================
``float``        non-finite float: ``{"$": "float", "value": "nan" | "inf" | "-inf"}``
``complex``      ``{"real": ..., "imag": ...}``
``bytes``        ``{"base64": ...}``
``tuple``/``set``/``frozenset``  ``{"items": [...]}`` (set items in the order of their encoding)
``dict``         ``{"items": [[key, value], ...], "ordered": bool}`` (keys of any encodable kind)
``defaultdict``  ``{"items": [...], "factory": "dict" | "list" | "set" | "int" | "float" | "module:QualName"}``
``ref``          ``{"id": n}``: the same object as the node marked ``"id": n`` earlier in the same value (an array
                 or tensor met twice, as an optimiser's parameters are, in ``param_groups`` and as ``state`` keys)
``ndarray``      ``{"key": name}``: the array is ``name`` in the case file
``npscalar``     ``{"key": name}``: a 0-d array turned back into a numpy scalar
``tensor``       ``{"key": name, "dtype": "bfloat16", "device": "cpu", "requires_grad": bool, "parameter": bool}``
                 and ``"grad"``: its ``.grad`` when it has one (an optimiser's ``step`` reads it)
``dataframe``    ``{"columns", "data", "index"}``; ``series``: ``{"name", "data", "index"}``
``dataclass``    ``{"type": "module:QualName", "fields": {name: value}}``
``namedtuple``   ``{"type": "module:QualName", "fields": [...], "items": [...]}``
``module``       an ``nn.Module``: ``{"type", "training", "params", "buffers", "attrs", "children"}`` (its own
                 parameters and buffers, plain attributes, and child modules as module nodes)
``enum``         ``{"type": "module:QualName", "name": member}``
``np_dtype``/``torch_dtype``/``torch_device``/``np_generator``/``slice``/``path``  small objects named so
``callback``     ``{"ref": n, "name": ...}``: a split run's message only: the caller's function number ``n``, which
                 the worker calls back through the channel
===============  ==============================================================================

In a split run's messages (``lmrbench_identity``) a mutable object's node also carries ``"origin": n`` (a list is
then ``{"$": "list", "items": [...]}``), and an array or tensor whose bytes did not change carries ``"same": true``
instead of its ``key``.

A recorded call is one ``.npz`` file (``load_case``): its arrays plus ``__case__``, the call as UTF-8 JSON.
"""

from __future__ import annotations

import base64
import collections
import importlib
import io
import json
import struct
import sys
from typing import Any

try:
    import numpy as np
except ImportError:  # a task environment without numpy: plain values only
    np = None  # type: ignore[assignment]

try:  # inside lmrbench
    from . import lmrbench_values_encoder as _encoder
except ImportError:  # shipped: the encoder is beside this file under its name plus "_encoder" (see its docstring)
    _encoder = importlib.import_module(f"{__name__}_encoder")

__tracebackhide__ = True  # pytest leaves this module's frames out of a failing test's traceback: the reader sees
# the test's line and the message, and pytest parses no source of this file per failure

BUILTIN_FACTORIES = _encoder.BUILTIN_FACTORIES
DEFAULT_FACTORIES = _encoder.DEFAULT_FACTORIES
Encoder = _encoder.Encoder
UnencodableValue = _encoder.UnencodableValue
type_path = _encoder.type_path

CASE_FORMAT = "lmrbench-case"
CASE_VERSION = 1
CASE_KEY = "__case__"


def _import_type(path: str) -> Any:
    module, _, qual = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


def _precision() -> Any:
    """The tolerance module shipped beside this one (its rounding scale and float64 probe)."""
    try:
        from . import lmrbench_precision  # inside lmrbench
    except ImportError:
        import lmrbench_precision  # type: ignore[no-redef]  # shipped beside this file
    return lmrbench_precision


def _reply() -> Any:
    """The allow-list decoder's module (its records and allow-lists), imported when first needed."""
    try:
        from . import lmrbench_reply  # inside lmrbench
    except ImportError:
        import lmrbench_reply  # type: ignore[no-redef]  # shipped beside this file
    return lmrbench_reply


def digest(node: Any, arrays: dict[str, np.ndarray]) -> str:
    """A hash of an encoded value: its JSON, with each array's dtype, shape and bytes in place of its key."""
    h: Any
    try:  # built into the interpreter: hashlib would load OpenSSL first
        from _blake2 import blake2b

        h = blake2b()
    except ImportError:
        import hashlib

        h = hashlib.sha256()

    def walk(n: Any) -> None:
        if isinstance(n, dict):
            h.update(b"{")
            for k in sorted(n):
                if k == "key" and n.get("$") in ("ndarray", "npscalar", "tensor"):
                    a = arrays[n[k]]
                    h.update(f"{a.dtype.str}{a.shape}".encode())
                    h.update(np.ascontiguousarray(a).tobytes())
                else:
                    h.update(json.dumps(k).encode())
                    walk(n[k])
            h.update(b"}")
        elif isinstance(n, list):
            h.update(b"[")
            for x in n:
                walk(x)
                h.update(b",")
            h.update(b"]")
        else:
            h.update(json.dumps(n).encode())

    walk(node)
    return h.hexdigest()


class Decoder:
    """Turns JSON nodes back into values, reading arrays from ``arrays``."""

    def __init__(self, arrays: Any, identities: Any = None, callback: Any = None) -> None:
        self.arrays = arrays
        """Values from trusted data (recorded cases, a split run's requests): named types are imported. Values
        from untrusted code are read by ``lmrbench_reply.decode_reply`` instead, which imports nothing."""
        self.identities = identities
        """A split run's message (``lmrbench_identity.Identities``): a node with an origin is that object of the
        call, changed in place, and refs reach across the whole message."""
        self.callback = callback
        """Makes the stand-in of a ``callback`` node: ``callback(number, name)``."""
        self._depth = 0
        self._made: dict[Any, Any] = {}

    def decode(self, node: Any) -> Any:
        """The value a node encodes (fresh objects on every call; one object where the value held one twice)."""
        if self._depth == 0 and self.identities is None:
            self._made = {}
        self._depth += 1
        try:
            return self._decode(node)
        finally:
            self._depth -= 1

    def _decode(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self.decode(n) for n in node]
        if not isinstance(node, dict):
            return node
        kind = node["$"]
        method = getattr(self, f"_d_{kind}", None)
        if method is None:
            raise ValueError(f"unknown value kind {kind!r} in a recorded case")
        value = method(node)
        if self.identities is not None and "origin" in node:
            value = self.identities.resolve(node["origin"], value)
        if "id" in node and kind != "ref":
            self._made[node["id"]] = value
        return value

    def _d_ref(self, node: Any) -> Any:
        return self._made[node["id"]]

    def _d_callback(self, node: Any) -> Any:
        if self.callback is None:
            raise ValueError("a function of the caller's cannot be read here")
        return self.callback(node["ref"], node.get("name", "a function"))

    def _d_defaultdict(self, node: Any) -> Any:
        name = node.get("factory")
        factory = None
        if name in DEFAULT_FACTORIES:
            factory = BUILTIN_FACTORIES[name]
        elif name is not None:
            factory = _import_type(name)  # a class the recording named: trusted data
        out: collections.defaultdict[Any, Any] = collections.defaultdict(factory)
        for k, v in node["items"]:
            out[self.decode(k)] = self.decode(v)
        return out

    def _items(self, node: Any) -> list[Any]:
        return [self.decode(n) for n in node["items"]]

    def _d_float(self, node: Any) -> float:
        return float(node["value"])

    def _d_complex(self, node: Any) -> complex:
        return complex(self.decode(node["real"]), self.decode(node["imag"]))

    def _d_bytes(self, node: Any) -> bytes:
        return base64.b64decode(node["base64"])

    def _d_tuple(self, node: Any) -> tuple[Any, ...]:
        return tuple(self._items(node))

    def _d_list(self, node: Any) -> list[Any]:
        return self._items(node)

    def _d_set(self, node: Any) -> set[Any]:
        return set(self._items(node))

    def _d_frozenset(self, node: Any) -> frozenset[Any]:
        return frozenset(self._items(node))

    def _d_dict(self, node: Any) -> dict[Any, Any]:
        pairs = [(self.decode(k), self.decode(v)) for k, v in node["items"]]
        return collections.OrderedDict(pairs) if node.get("ordered") else dict(pairs)

    def _d_slice(self, node: Any) -> slice:
        return slice(*self._items(node))

    def _d_path(self, node: Any) -> Any:
        return _import_type(node["type"])(node["value"])

    def _d_enum(self, node: Any) -> Any:
        return _import_type(node["type"])[node["name"]]

    def _d_namedtuple(self, node: Any) -> Any:
        items = self._items(node)
        try:
            cls = _import_type(node["type"])
        except (ImportError, AttributeError):  # e.g. recorded from a script's __main__: a record with its fields
            if "fields" not in node:
                raise
            return tuple.__new__(_reply().namedtuple_record(node["type"], node["fields"]), items)
        return cls(*items)

    def _d_dataclass(self, node: Any) -> Any:
        fields = {name: self.decode(value) for name, value in node["fields"].items()}
        try:
            cls = _import_type(node["type"])
        except (ImportError, AttributeError):
            return _reply().DataRecord(node["type"], fields)
        obj = cls.__new__(cls)
        for name, value in fields.items():
            object.__setattr__(obj, name, value)
        return obj

    def _d_module(self, node: Any) -> Any:
        import torch

        cls = _import_type(node["type"])
        module = cls.__new__(cls)
        torch.nn.Module.__init__(module)
        for name, value in self.decode(node["attrs"]).items():
            object.__setattr__(module, name, value)
        for name, value in node["params"].items():  # the encoder's order: a ref follows its first node
            module._parameters[name] = self.decode(value)
        for name, value in node["buffers"].items():
            module._buffers[name] = self.decode(value)
        for name, child in node["children"].items():
            module._modules[name] = self.decode(child)
        module._non_persistent_buffers_set.update(node.get("non_persistent", []))
        object.__setattr__(module, "training", bool(node["training"]))
        return module

    def _d_ndarray(self, node: Any) -> np.ndarray:
        if node.get("same"):
            return self.identities.kept_array(node["origin"])
        if self.identities is not None and "origin" in node:
            self.identities.agree(node["origin"], self.arrays[node["key"]])
        return np.array(self.arrays[node["key"]], copy=True)

    def _d_npscalar(self, node: Any) -> Any:
        return self.arrays[node["key"]][()]

    def _d_np_dtype(self, node: Any) -> np.dtype:
        if "descr" in node:
            return np.dtype([tuple(d) for d in node["descr"]])
        return np.dtype(node["str"])

    def _d_np_generator(self, node: Any) -> np.random.Generator:
        state = self.decode(node["state"])
        kind = getattr(np.random, str(state["bit_generator"]), None)
        if not (isinstance(kind, type) and issubclass(kind, np.random.BitGenerator)):
            raise ValueError(f"{state['bit_generator']!r} is not a numpy bit generator")
        bitgen = kind()
        bitgen.state = state
        return np.random.Generator(bitgen)

    def _d_np_randomstate(self, node: Any) -> np.random.RandomState:
        rs = np.random.RandomState()
        rs.set_state(self.decode(node["state"]))
        return rs

    def _d_tensor(self, node: Any) -> Any:
        import torch

        if node.get("same"):
            grad = self.decode(node["grad"]) if "grad" in node else None
            return self.identities.kept_tensor(node["origin"], bool(node["requires_grad"]), grad)
        if self.identities is not None and "origin" in node:
            self.identities.agree(node["origin"], self.arrays[node["key"]])
        dtype = _reply()._torch_dtype(torch, node["dtype"])
        tensor = torch.from_numpy(np.array(self.arrays[node["key"]], copy=True)).to(dtype)
        tensor = _reply().on_device(torch, tensor, node.get("device", "cpu"))
        if node.get("parameter"):
            tensor = torch.nn.Parameter(tensor, requires_grad=node["requires_grad"])
        elif tensor.is_floating_point():
            tensor.requires_grad_(node["requires_grad"])
        if "grad" in node:
            tensor.grad = self.decode(node["grad"])
        return tensor

    def _d_torch_dtype(self, node: Any) -> Any:
        import torch

        return _reply()._torch_dtype(torch, node["name"])

    def _d_torch_device(self, node: Any) -> Any:
        import torch

        return torch.device(node["name"])

    def _d_dataframe(self, node: Any) -> Any:
        import pandas as pd

        columns = [self.decode(c) for c in node["columns"]]
        data = {i: self._series(d) for i, d in enumerate(node["data"])}
        frame = pd.DataFrame(data)
        frame.index = self._d_index_any(node["index"])
        frame.columns = columns
        return frame

    def _d_series(self, node: Any) -> Any:

        series = self._series(node["data"])
        series.index = self._d_index_any(node["index"])
        series.name = self.decode(node["name"])
        return series

    def _series(self, node: Any) -> Any:
        import pandas as pd

        if node["$"] == "list":
            return pd.Series(self._items(node), dtype=node.get("pd_dtype", object))
        values = self._d_ndarray(node)
        return pd.Series(values, dtype=node.get("pd_dtype") or values.dtype)

    def _d_index_any(self, node: Any) -> Any:
        import pandas as pd

        if node["$"] == "range_index":
            return pd.RangeIndex(node["start"], node["stop"], node["step"], name=node["name"])
        return pd.Index(self._series(node["data"]), name=self.decode(node["name"]))


# ---------------------------------------------------------------------------------------------- case files


def write_case(case: dict[str, Any], arrays: dict[str, np.ndarray]) -> bytes:
    """The bytes of a case file: ``arrays`` plus the case's JSON under ``__case__`` (an uncompressed .npz)."""
    payload = json.dumps(case, sort_keys=True, ensure_ascii=False).encode("utf-8")
    buffer = io.BytesIO()
    if np is None:  # no arrays without numpy: the .npz holds the case alone, written as numpy would
        import zipfile

        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as zf:
            zf.writestr(CASE_KEY + ".npy", _npy_bytes(payload))
        return buffer.getvalue()
    members: dict[str, Any] = {**arrays, CASE_KEY: np.frombuffer(payload, dtype=np.uint8)}
    np.savez(buffer, **members)
    return buffer.getvalue()


def _npy_bytes(data: bytes) -> bytes:
    """``data`` as a one-dimensional uint8 array in the .npy format (version 1.0), without numpy."""
    header = f"{{'descr': '|u1', 'fortran_order': False, 'shape': ({len(data)},), }}"
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + data


def _case_without_numpy(path: Any) -> dict[str, Any]:
    import zipfile  # here: a split run's processes import this module and never read a case file

    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        if names != [CASE_KEY + ".npy"]:
            raise ValueError(f"{path}: holds arrays, which need numpy to read")
        raw = zf.read(names[0])
    (length,) = struct.unpack("<H", raw[8:10])
    return json.loads(raw[10 + length :].decode("utf-8"))


def read_case_file(path: Any) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The JSON and the arrays of a case file (never unpickles anything)."""
    if np is None:
        case = _case_without_numpy(path)
        if case.get("format") != CASE_FORMAT:
            raise ValueError(f"{path}: not a recorded case")
        return case, {}
    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    case = json.loads(arrays.pop(CASE_KEY).tobytes().decode("utf-8"))
    if case.get("format") != CASE_FORMAT:
        raise ValueError(f"{path}: not a recorded case")
    return case, arrays


class Case:
    """One recorded call, decoded: what to pass, what the reference code returned and changed."""

    def __init__(self, case: dict[str, Any], arrays: dict[str, np.ndarray], like: Case | None = None) -> None:
        """``like``: a decoding of this very case (the same dict and arrays) whose expected values and scale this
        one shares, so that only the inputs are decoded afresh (a probe calls each case once per mutant)."""
        self.data = case
        self._arrays = arrays
        decoder = Decoder(arrays)
        self.args: list[Any] = []
        """Positional arguments (positional-only parameters and ``*args``)."""
        self.kwargs: dict[str, Any] = {}
        """Keyword arguments."""
        params = case["arguments"]
        spread = any(p["kind"] == "var_positional" and p["value"]["items"] for p in params)
        for p in params:
            value = decoder.decode(p["value"])
            if p["kind"] == "positional_only" or (spread and p["kind"] == "positional_or_keyword"):
                self.args.append(value)
            elif p["kind"] == "var_positional":
                self.args.extend(value)
            elif p["kind"] == "var_keyword":
                self.kwargs.update(value)
            else:
                self.kwargs[p["name"]] = value
        shared = like if like is not None and like.data is case and like._arrays is arrays else None
        self.expected: Any = shared.expected if shared else decoder.decode(case["expected"])
        """The value the reference code returned."""
        self.changed: dict[str, Any] = shared.changed if shared else {
            k: decoder.decode(v) for k, v in case.get("changed", {}).items()}
        """Arguments the reference code changed in place, as they were after the call."""
        self.state = None if case.get("self") is None else decoder.decode(case["self"])
        """The instance's attributes (``__dict__``) before the call, for methods."""
        self.state_after: Any = shared.state_after if shared else (
            None if case.get("self_after") is None else decoder.decode(case["self_after"]))
        """The instance's attributes after the call, when the call changed them."""
        self.random_state = case.get("random_state") and decoder.decode(case["random_state"])
        """The random generators' state before the call, when the call drew random numbers."""
        precision = _precision()
        if shared:
            self.scale: Any = shared.scale
        else:
            self.scale = precision.rounding_scale([self.args, self.kwargs, self.state])
            """The largest rounding unit among the floating inputs (eps of the dtype times the largest magnitude):
            the checkers widen a relative tolerance to it (``lmrbench_precision.tolerance_for``). A case that notes
            its precision or ties makes it a ``lmrbench_precision.Scale`` that carries them to the checkers."""
            promoted = precision.scalar_promotion([self.args, self.kwargs, self.state])
            if case.get("precision") or case.get("ties") or promoted:
                self.scale = self._noted_scale(precision, case, arrays)
                self.scale.promoted = promoted
        if precision.probing():  # validate's float64 re-run of the golden code
            self.args, self.kwargs = precision.upcast(self.args), precision.upcast(self.kwargs)
            self.state = None if self.state is None else precision.upcast(self.state)
        self.raises: str = case.get("raises") or ""
        """The builtin exception the reference code raised on this call ('' when it returned)."""
        held = case.get("held") or []
        self.held_after: dict[str, Any] = shared.held_after if shared else {
            held_label(e["path"]): decoder.decode(e["value"]) for e in held}
        """The arrays inside the arguments' containers (and ``self``'s) that the reference call changed in place,
        as they were after it, by where they are held (``teacher["w"]``)."""
        self.held = {held_label(e["path"]): self._held(e["path"]) for e in held}
        """Those same array objects as this case passes them: after the call, what the call left in them (a
        call that put new arrays into the containers leaves these as they were)."""

    def _noted_scale(self, precision: Any, case: dict[str, Any], arrays: dict[str, Any]) -> Any:
        notes = case.get("precision") or {}
        tied = []
        settled = set(case.get("ties_settled") or [])  # the golden result does not depend on these ties
        for name in [n for n in case.get("ties") or [] if n not in settled]:
            try:
                tied.append(precision.as_float_array(self.argument(name)))
            except (KeyError, ValueError, IndexError):  # a name this case does not have: no tie to honour
                continue
        return precision.Scale(
            self.scale, context=notes.get("context"), tied=[t for t in tied if t is not None],
            **{kind: {w: arrays[k] for w, k in notes[kind].items()} for kind in ("grown", "matmul") if kind in notes},
        )

    def _held(self, path: list[Any]) -> Any:
        value: Any = self.state if path[0] == "self" else self.argument(path[0])
        for key in path[1:]:
            value = step(value, key)
        return value

    def argument(self, name: str) -> Any:
        """An argument passed by keyword, or a positional one by its parameter name."""
        if name in self.kwargs:
            return self.kwargs[name]
        names = [p["name"] for p in self.data["arguments"] if p["kind"] != "var_keyword"]
        return self.args[names.index(name)]

    def untouched(self) -> dict[str, Any]:
        """The arguments that a call can change in place (arrays, tensors, lists, dicts, sets and what holds them)
        and that the reference call left as they were, as this case passed them: after the call, what the call
        left in them. A candidate that writes into its caller's batch differs here."""
        return {name: self.argument(name) for name in untouched_names(self.data)}

    def untouched_as_recorded(self) -> dict[str, Any]:
        """The same arguments decoded afresh from the case file: as every call gets them."""
        decoder, precision = Decoder(self._arrays), _precision()
        nodes = {p["name"]: p["value"] for p in self.data["arguments"]}
        values = {name: decoder.decode(nodes[name]) for name in untouched_names(self.data)}
        return precision.upcast(values) if precision.probing() else values

    def named_arguments(self) -> dict[str, Any]:
        """The arguments of named parameters, as this case passes them."""
        return {p["name"]: self.argument(p["name"]) for p in self.data["arguments"]
                if p["kind"] in ("positional_only", "positional_or_keyword", "keyword_only")}

    def aliases(self, obj: Any, recorded: Any = None) -> list[str]:
        """Where the arrays ``obj`` holds after the call share memory with the arguments as this case passed them,
        and the reference call's did not (``shares`` of the case ``recorded``, by default this one): state that a
        later change of the caller's arrays would change (``self.shadow["w"] ~ params["w"]``)."""
        allowed = set((recorded if recorded is not None else self).data.get("shares") or [])
        return [pair for pair in shared_memory(vars(obj), self.named_arguments()) if pair not in allowed]

    def check_own_copies(self, obj: Any) -> None:
        """AssertionError naming the first array ``obj`` shares with an argument, or two of its arrays that share
        memory, where the reference code kept them apart."""
        found = self.aliases(obj)
        if found:
            held, _, other = found[0].partition(" ~ ")
            more = f" ({len(found) - 1} more such)" if len(found) > 1 else ""
            if other.startswith("self."):
                raise AssertionError(f"after the call {held} and {other} share memory, where the reference code keeps "
                                     f"them apart: a change of one changes the other{more}")
            raise AssertionError(
                f"after the call {held} shares memory with the argument {other}, where the reference code keeps a "
                f"copy of its own: a later change of the caller's array would change it{more}")

    def instance(self, cls: Any, factory: Any = None) -> Any:
        """An object of ``cls`` (or built by ``factory()``) holding the recorded attributes."""
        obj = factory() if factory is not None else cls.__new__(cls)
        for name, value in (self.state or {}).items():
            object.__setattr__(obj, name, value)
        return obj

    def attributes_of(self, obj: Any) -> dict[str, Any]:
        """The attributes of ``obj`` that the reference call left in ``state_after`` (to compare with it)."""
        return {name: getattr(obj, name) for name in (self.state_after or {}) if hasattr(obj, name)}

    def restore_random_state(self) -> None:
        """Put the random generators back where they were when the reference call started."""
        set_random_state(self.random_state)


MUTABLE_KINDS = frozenset({"ndarray", "tensor", "list", "dict", "defaultdict", "set", "dataclass", "dataframe",
                           "series"})
"""Value kinds a call can change in place."""


def holds_mutable(node: Any) -> bool:
    """Whether the value a node encodes is, or holds, something a call can change in place."""
    if isinstance(node, list):
        return True
    if not isinstance(node, dict) or "$" not in node:
        return False
    if node["$"] in MUTABLE_KINDS:
        return True
    return node["$"] in ("tuple", "namedtuple") and any(holds_mutable(n) for n in node.get("items") or [])


def untouched_names(case: dict[str, Any]) -> list[str]:
    """The named arguments of a recorded call that hold something a call can change in place and that the
    reference call left as they were (``Case.untouched``)."""
    changed = set(case.get("changed") or {})
    return [p["name"] for p in case["arguments"]
            if p["kind"] in ("positional_only", "positional_or_keyword", "keyword_only")
            and p["name"] not in changed and holds_mutable(p["value"])]


MAX_HELD = 256
"""Most arrays inside containers whose in-place changes a case keeps."""


def held_arrays(value: Any, path: list[Any], depth: int = 0,
                containers: set[int] | None = None) -> list[tuple[list[Any], Any]]:
    """(path, array) of each numpy array or torch tensor inside the dicts (text or int keys), lists, tuples,
    dataclass instances and namespaces of ``value`` (not ``value`` itself): the arrays a call can change in place or
    replace in their container (an inner optimiser's ``params`` list, ``self.optimizer.params[0]``). An attribute
    is a path step ``".name"``. The ids of the containers walked go into ``containers`` when one is given."""
    out: list[tuple[list[Any], Any]] = []
    if depth > 4:
        return out
    if isinstance(value, dict):
        items = [(k, v) for k, v in value.items() if type(k) is int or type(k) is str and not k.startswith(".")]
    elif isinstance(value, list | tuple):
        items = list(enumerate(value))
    elif _is_record(value):
        items = [("." + k, v) for k, v in vars(value).items()]
        if containers is not None:
            containers.add(id(vars(value)))
    else:
        return out
    if containers is not None:
        containers.add(id(value))
    for key, item in items:
        if _is_array(item):
            out.append(([*path, key], item))
        else:
            out += held_arrays(item, [*path, key], depth + 1, containers)
        if len(out) >= MAX_HELD:
            break
    return out[:MAX_HELD]


def _is_record(value: Any) -> bool:
    """A dataclass instance or a namespace (``_encoder.NAMESPACES``): an object the codec carries attribute by
    attribute."""
    import dataclasses

    return type_path(type(value)) in _encoder.NAMESPACES or dataclasses.is_dataclass(value) \
        and not isinstance(value, type) and hasattr(value, "__dict__")


def step(value: Any, key: Any) -> Any:
    """One step of a held path: an attribute (``".params"``) or an item."""
    return getattr(value, key[1:]) if isinstance(key, str) and key.startswith(".") else value[key]


def array_leaves(value: Any, path: list[Any], containers: set[int] | None = None) -> list[tuple[list[Any], Any]]:
    """(path, array) of ``value`` itself when it is an array, else of the arrays in its containers (``held_arrays``,
    which puts the containers it walks into ``containers``)."""
    return [(path, value)] if _is_array(value) else held_arrays(value, path, containers=containers)


def shared_memory(state: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """``self.shadow["w"] ~ params["w"]``: each array among an instance's attributes (``state``) and in their
    containers that shares memory with an array among ``arguments`` or in their containers, or with another such
    array of the state (``self.state[0]["max_sq"] ~ self.state[0]["sq"]``: one buffer in two named slots, where a
    comparison by value sees two equal arrays). One object repeated in a list (``[frame] * k``) is a sequence's
    idiom, not an alias; a view of another array is one wherever it is held."""
    mine = [leaf for name, value in state.items() for leaf in array_leaves(value, ["self", name])]
    theirs = [leaf for name, value in arguments.items() for leaf in array_leaves(value, [name])]
    among = [f"{held_label(p)} ~ {held_label(q)}" for k, (p, a) in enumerate(mine) for q, b in mine[k + 1:]
             if (a is not b or type(p[-1]) is str and type(q[-1]) is str) and _overlap(a, b)]
    return [f"{held_label(p)} ~ {held_label(q)}" for p, a in mine for q, b in theirs if _overlap(a, b)] + among


def _overlap(a: Any, b: Any) -> bool:
    """Whether two arrays (or two tensors) share memory."""
    if np is not None and type(a) is np.ndarray and type(b) is np.ndarray:
        if not np.may_share_memory(a, b):
            return False
        try:
            return bool(np.shares_memory(a, b, max_work=10_000))  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001 - TooHardError (in np.exceptions or np, by version): count it shared
            return True
    if np is not None and (type(a) is np.ndarray or type(b) is np.ndarray):
        return False
    try:
        ptr = a.untyped_storage().data_ptr()
        return bool(ptr) and ptr == b.untyped_storage().data_ptr()
    except (AttributeError, RuntimeError):
        return False


def _is_array(value: Any) -> bool:
    if np is not None and type(value) is np.ndarray:
        return True
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def held_label(path: list[Any]) -> str:
    """``teacher["w"]``, ``self.params["w"][0]``, ``self.optimizer.params[0]``: where a held array is."""
    head = f"self.{path[1]}" if path[0] == "self" else str(path[0])
    rest = path[2:] if path[0] == "self" else path[1:]
    return head + "".join(k if isinstance(k, str) and k.startswith(".") else f"[{json.dumps(k)}]" for k in rest)


def load_case(path: Any) -> Case:
    """Read one recorded case (``data/impl_<k>/case_<n>.npz``)."""
    return Case(*read_case_file(path))


# ---------------------------------------------------------------------------------------------- randomness


def get_random_state(*, loaded_only: bool = False) -> dict[str, Any]:
    """The global generators' state of random, numpy and (when imported) torch.

    With ``loaded_only``, only of the generators whose module is already imported: one that was never
    imported was never drawn from, and importing it (numpy.random costs tens of milliseconds) only to read
    a fresh seed is wasted in a process that never uses it.
    """
    state: dict[str, Any] = {}
    if not loaded_only or "random" in sys.modules:
        import random

        state["random"] = random.getstate()
    if np is not None and (not loaded_only or "numpy.random" in sys.modules):
        state["numpy"] = np.random.get_state()
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "get_rng_state"):
        state["torch"] = torch.get_rng_state()
    return state


def set_random_state(state: dict[str, Any] | None) -> None:
    """Restore what ``get_random_state`` returned (torch only when it is part of the state)."""
    if not state:
        return
    if "random" in state:
        import random

        random.setstate(_as_tuples(state["random"]))
    if "numpy" in state and np is not None:
        np.random.set_state(_as_tuples(state["numpy"]))
    if "torch" in state:
        import torch

        torch.set_rng_state(state["torch"])


def _as_tuples(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_as_tuples(v) for v in value)
    return value


def same_random_state(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """True when no generator moved between two ``get_random_state`` snapshots."""
    if a["random"] != b["random"]:
        return False
    if "numpy" not in a or "numpy" not in b:
        return "numpy" not in a and "numpy" not in b
    na, nb = a["numpy"], b["numpy"]
    if na[0] != nb[0] or not np.array_equal(na[1], nb[1]) or tuple(na[2:]) != tuple(nb[2:]):
        return False
    if "torch" in a and "torch" in b:
        return bool((a["torch"] == b["torch"]).all())
    return True


# ---------------------------------------------------------------------------------------------- descriptions


def describe(node: Any, arrays: dict[str, np.ndarray], limit: int = 60) -> str:
    """A short human description of an encoded value: ``float32[4, 2]``, ``0.1``, ``tuple of 3``."""
    if isinstance(node, list):
        inner = ", ".join(describe(n, arrays, limit) for n in node[:3])
        return f"[{inner}{', ...' if len(node) > 3 else ''}]"
    if not isinstance(node, dict):
        text = repr(node)
        return (
            text
            if len(text) <= limit
            else f"str of {len(node)} chars"
            if isinstance(node, str)
            else text[:limit]
        )
    kind = node["$"]
    if kind in ("ndarray", "npscalar"):
        a = arrays[node["key"]]
        return f"{a.dtype.name}{list(a.shape)}" if kind == "ndarray" else f"{a.dtype.name}({a.item()!r})"
    if kind == "tensor":
        grad = " (requires_grad)" if node.get("requires_grad") else ""
        return f"tensor {node['dtype']}{list(arrays[node['key']].shape)}{grad}"
    if kind == "module":
        return f"{node['type'].rpartition(':')[2]} module"
    if kind in ("tuple", "set", "frozenset", "namedtuple"):
        items = node["items"]
        inner = ", ".join(describe(n, arrays, limit) for n in items[:3])
        name = node["type"].rpartition(":")[2] if kind == "namedtuple" else kind
        return f"{name}({inner}{', ...' if len(items) > 3 else ''})"
    if kind in ("dict", "defaultdict"):
        keys = [describe(k, arrays, limit) for k, _ in node["items"][:4]]
        return f"dict with keys {', '.join(keys)}{', ...' if len(node['items']) > 4 else ''}"
    if kind in ("dataclass", "enum"):
        return node["type"].rpartition(":")[2] + (f".{node['name']}" if kind == "enum" else "")
    if kind == "float":
        return f"float({node['value']!r})"
    return kind
