"""The scalar leaves of a recorded call, at any depth, named by their access path as written in Python.

A recorded case (``lmrbench_values`` format) holds the arguments and, for a method, the instance's attributes.
Every bool, int, float and text inside them (through dataclass fields, namedtuple fields, dict keys, short
lists and tuples, and numpy scalars) is a leaf with a path: ``gamma``, ``cfg.loss.gamma``,
``self.kl_ctl.value``, ``self.config["beta"]``, ``self.betas[0]``. The probe varies leaves by path (``put``);
the host lists them (``leaves``) to name, vary and pin them. No lmrbench import: this file ships to sandboxes.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_ITEMS = 8
"""Longest list or tuple whose items count as leaves (a longer one is data, not a setting)."""
MAX_DEPTH = 6
"""Deepest path followed."""
_STEP = re.compile(r"\.([A-Za-z_]\w*)|\[(\"(?:[^\"\\]|\\.)*\"|-?\d+)\]")
_ROOT = re.compile(r"[A-Za-z_]\w*")
MISSING = object()
"""What ``get`` returns for a path the case does not have."""


def parse(path: str) -> tuple[str, list[Any]] | None:
    """(root name, steps) of a path; a step is ``("attr", name)`` or ``("key", str | int)``; None if unreadable."""
    root = _ROOT.match(path)
    if root is None:
        return None
    steps: list[Any] = []
    at = root.end()
    while at < len(path):
        m = _STEP.match(path, at)
        if m is None:
            return None
        steps.append(("attr", m.group(1)) if m.group(1) else ("key", json.loads(m.group(2))))
        at = m.end()
    return root.group(0), steps


def key_text(key: Any) -> str:
    """A dict key or index as written in a subscript: ``["beta"]``, ``[0]``."""
    return f"[{json.dumps(key)}]"


def dict_items(node: Any) -> list[Any] | None:
    """The [key, value] pairs of a recorded dict (None for any other value)."""
    return node.get("items") if isinstance(node, dict) and node.get("$") == "dict" else None


def self_items(case: dict[str, Any]) -> list[Any] | None:
    """The [name, value] pairs of a method's recorded ``self`` (None for a function)."""
    return dict_items(case.get("self"))


def _child(node: Any, step: tuple[str, Any]) -> tuple[Any, Any]:
    """(container, locator) of one step below ``node``: ``container[locator]`` holds the child node; or
    (None, None) when the step leads nowhere."""
    kind, name = step
    if isinstance(node, list):
        return (node, name) if kind == "key" and type(name) is int and -len(node) <= name < len(node) else (None, None)
    if not isinstance(node, dict):
        return None, None
    tag = node.get("$")
    if kind == "attr" and tag == "dataclass" and name in node.get("fields", {}):
        return node["fields"], name
    if kind == "attr" and tag == "namedtuple" and name in node.get("fields", []):
        return node["items"], node["fields"].index(name)
    if kind == "key" and tag in ("tuple", "namedtuple") and type(name) is int and -len(node["items"]) <= name \
            < len(node["items"]):
        return node["items"], name
    if kind == "key" and tag in ("dict", "defaultdict"):
        for pair in node["items"]:
            if type(pair[0]) is type(name) and pair[0] == name:
                return pair, 1
    return None, None


def _locate(case: dict[str, Any], path: str) -> tuple[Any, Any]:
    """(container, locator) of the node a path names, or (None, None)."""
    parsed = parse(path)
    if parsed is None:
        return None, None
    root, steps = parsed
    holder: Any = None
    at: Any = None
    if root == "self":
        items = self_items(case)
        if items is None or not steps or steps[0][0] != "attr":
            return None, None
        pair = next((p for p in items if p[0] == steps[0][1]), None)
        if pair is None:
            return None, None
        holder, at, steps = pair, 1, steps[1:]
    else:
        entry = next((a for a in case.get("arguments", []) if a["name"] == root), None)
        if entry is None:
            return None, None
        holder, at = entry, "value"
    for step in steps:
        holder, at = _child(holder[at], step)
        if holder is None:
            return None, None
    return holder, at


def node(case: dict[str, Any], path: str) -> Any:
    """The JSON node a path names, or MISSING."""
    holder, at = _locate(case, path)
    return MISSING if holder is None else holder[at]


def _scalar(n: Any, arrays: dict[str, Any]) -> Any:
    """The Python scalar of a leaf node (a numpy scalar read from ``arrays``), else MISSING."""
    if type(n) in (bool, int, float, str):
        return n
    if isinstance(n, dict) and n.get("$") == "npscalar" and n.get("key") in arrays:
        value = arrays[n["key"]][()].item()
        return value if type(value) in (bool, int, float) else MISSING
    if isinstance(n, dict) and n.get("$") == "float" and n.get("value") in ("inf", "-inf", "nan"):
        return float(n["value"])  # a sentinel (``filter_value=-inf``) is a setting like any other
    return MISSING


def get(case: dict[str, Any], arrays: dict[str, Any], path: str) -> Any:
    """The scalar value at ``path``, or MISSING."""
    n = node(case, path)
    return MISSING if n is MISSING else _scalar(n, arrays)


def put(case: dict[str, Any], arrays: dict[str, Any], path: str, value: Any) -> bool:
    """Set the leaf at ``path`` to ``value`` (a numpy scalar keeps its dtype, in a new array of ``arrays``; a key
    a recorded dict lacks is added); False when the case has no such leaf."""
    holder, at = _locate(case, path)
    if holder is None:
        return _add_key(case, path, value)
    old = holder[at]
    if value is not None and isinstance(old, dict) and old.get("$") == "npscalar" and old.get("key") in arrays:
        import numpy as np

        key = f"leaf{len(arrays)}"
        while key in arrays:
            key += "_"
        arrays[key] = np.array(value, dtype=arrays[old["key"]].dtype)
        holder[at] = {**old, "key": key}
        return True
    # a non-finite float as the codec writes it
    holder[at] = {"$": "float", "value": repr(value)} if type(value) is float and not math.isfinite(value) else value
    return True


def remove(case: dict[str, Any], path: str) -> bool:
    """Take the key a path ends with out of the recorded dict that holds it (a setting given under its legacy
    name instead); False when the path does not end with a key of a recorded dict."""
    parsed = parse(path)
    if parsed is None or not parsed[1] or parsed[1][-1][0] != "key":
        return False
    parent = node(case, path[:path.rfind("[")])
    if not isinstance(parent, dict) or parent.get("$") not in ("dict", "defaultdict"):
        return False
    key = parsed[1][-1][1]
    kept = [p for p in parent["items"] if not (type(p[0]) is type(key) and p[0] == key)]
    if len(kept) == len(parent["items"]):
        return False
    parent["items"] = kept
    return True


def _add_key(case: dict[str, Any], path: str, value: Any) -> bool:
    """Add the key a path ends with to the recorded dict it names (``self.config["loss"]["symmetric"]`` where
    the dict has no ``symmetric``); False when the path does not end with a key of a recorded dict."""
    parsed = parse(path)
    if parsed is None or not parsed[1] or parsed[1][-1][0] != "key" or type(value) not in (bool, int, float, str):
        return False
    at = path.rfind("[")
    parent = node(case, path[:at])
    if not isinstance(parent, dict) or parent.get("$") not in ("dict", "defaultdict"):
        return False
    parent["items"].append([parsed[1][-1][1], value])
    return True


def _walk(n: Any, path: str, arrays: dict[str, Any], out: dict[str, Any], depth: int) -> None:
    value = _scalar(n, arrays)
    if value is not MISSING:
        out[path] = value
        return
    if depth >= MAX_DEPTH:
        return
    if isinstance(n, list):
        if len(n) <= MAX_ITEMS:
            for i, item in enumerate(n):
                _walk(item, f"{path}[{i}]", arrays, out, depth + 1)
        return
    if not isinstance(n, dict):
        return
    tag = n.get("$")
    if tag == "dataclass":
        for name, child in n.get("fields", {}).items():
            _walk(child, f"{path}.{name}", arrays, out, depth + 1)
    elif tag == "namedtuple" and "fields" in n:
        for name, child in zip(n["fields"], n["items"], strict=False):
            _walk(child, f"{path}.{name}", arrays, out, depth + 1)
    elif tag == "tuple" and len(n["items"]) <= MAX_ITEMS:
        for i, child in enumerate(n["items"]):
            _walk(child, f"{path}[{i}]", arrays, out, depth + 1)
    elif tag in ("dict", "defaultdict"):
        for key, child in n["items"]:
            if type(key) in (str, int):
                _walk(child, path + key_text(key), arrays, out, depth + 1)


def leaves(case: dict[str, Any], arrays: dict[str, Any]) -> dict[str, Any]:
    """Every scalar leaf of the arguments and of ``self``, by path, in the case's order."""
    out: dict[str, Any] = {}
    for a in case.get("arguments", []):
        if a.get("kind") in ("var_positional", "var_keyword"):
            continue
        _walk(a["value"], a["name"], arrays, out, 0)
    for name, child in self_items(case) or []:
        if isinstance(name, str):
            _walk(child, f"self.{name}", arrays, out, 0)
    return out
