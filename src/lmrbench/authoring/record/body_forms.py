"""The forms of input a goal body is written for, read from its source and docstring, for the search and the scan
(``search_plans`` puts them in the plan): whether it calls ``exp`` (``exponentiates``: its float arrays are tried
far from zero), a form that stays finite at large magnitudes with a docstring that promises them (``stable``:
scaled up), checks an argument for nan and inf (``checks_finite``: given one of each), takes -inf entries
(``banned``), splits text on whitespace (``splits``: doubled spaces), names a form without the batch axis in its
docstring (``unbatched``), reads the rank of an array argument (``any_rank``: one more axis), converts an argument
to numbers with a dtype it names (``converts``: a bool one given as 0/1 ints) or tests the items of a list
argument for None (``none_items``: one left out), and the non-finite values it writes itself (``writes``: a
result holding them is no input outside its domain).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from lmrbench.authoring.record.body_helpers import loop_items, none_items
from lmrbench.authoring.record.body_values import infinity


def input_forms(body: ast.AST | None, params: list[str]) -> dict[str, Any]:
    """The plan's entries of the forms ``body`` (the goal function's definition, or None) is written for."""
    return {"exponentiates": _calls(body, EXP_CALLS), "stable": _calls(body, STABLE_CALLS) and _promises_large(body),
            "checks_finite": _checks_arguments(body, params), "banned": _takes_banned(body),
            "splits": _splits_whitespace(body), "unbatched": _names_unbatched(body),
            "none_items": none_items(body, params), "any_rank": _any_rank(body, params),
            "converts": _converts(body, params), "writes": _writes_nonfinite(body), "axes": axis_leaves(body)}


AXIS_WORDS = frozenset({"axis", "dim", "axes", "dims", "axis1", "axis2", "source", "destination"})
"""Keywords whose argument is an axis (``x.sum(axis=self.axis)``, ``torch.softmax(x, dim=dim)``)."""
AXIS_CALLS = frozenset({"moveaxis", "swapaxes", "rollaxis", "expand_dims", "movedim", "transpose", "unsqueeze",
                        "squeeze", "flip", "size"})
"""Calls whose positional arguments (after the array, for a module's function) are axes."""


def axis_leaves(node: ast.AST | None) -> list[str]:
    """The leaves the body uses as an axis (``np.moveaxis(w, self.dim, 0)``, ``x.shape[self.dim]``, ``sum(axis=
    axis)``): the search tries each at another axis with the arrays' axes moved to match, where an answer that
    ignores it (``w.reshape(w.shape[dim], -1)``) differs."""
    from lmrbench.authoring.record.body_helpers import access_path

    found: list[ast.AST] = []
    for n in ast.walk(node) if node is not None else ():
        if isinstance(n, ast.Call):
            found += [k.value for k in n.keywords if k.arg in AXIS_WORDS]
            called = getattr(n.func, "attr", None) or getattr(n.func, "id", None)
            if called in AXIS_CALLS:  # ``np.moveaxis(w, d, 0)``: after the array; ``x.size(d)``: all
                method = isinstance(n.func, ast.Attribute) and not (isinstance(n.func.value, ast.Name)
                                                                    and n.func.value.id in ("np", "numpy", "torch"))
                found += n.args if method else n.args[1:]
        elif isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) and n.value.attr == "shape":
            found.append(n.slice)
    paths = [access_path(a) for a in found if not isinstance(a, ast.Constant)]
    return list(dict.fromkeys(p for p in paths if p is not None))


def _writes_nonfinite(node: ast.AST | None) -> list[str]:
    """The kinds of non-finite value the body writes itself (``-np.inf`` for a beam shorter than ``min_length``,
    ``float("nan")``): a result holding them is in the function's domain, though no recorded call gave one."""
    out: set[str] = set()
    inner: set[int] = set()
    for n in ast.walk(node) if node is not None else ():
        if id(n) in inner:
            continue
        kind = infinity(n)
        if kind is not None:
            out.add(kind)
            inner.update(id(x) for x in ast.walk(n))
        elif isinstance(n, ast.Attribute) and n.attr == "nan" or isinstance(n, ast.Call) and getattr(
                n.func, "id", None) == "float" and n.args and isinstance(n.args[0], ast.Constant) \
                and str(n.args[0].value).lower() == "nan":
            out.add("nan")
    return sorted(out)


EXP_CALLS = frozenset({"exp", "exp2", "expm1"})
"""Calls whose result overflows for large inputs unless the body shifts them first."""
STABLE_CALLS = frozenset({"logaddexp", "logaddexp2", "log1p", "softplus", "logsigmoid", "log_sigmoid", "logsumexp",
                          "log_softmax", "xlogy", "xlog1py"})
"""Calls that exist to stay finite at large magnitudes: a body that uses one, and whose docstring promises large
inputs (``STABLE_WORDS``), is written for them, so the scan tries its float arrays scaled up."""
NAN_CALLS = frozenset({"nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanargmax", "nanargmin", "nancumsum"})
"""Reductions that skip nan: a body that uses one expects entries that make it (``0 * -inf``)."""
FINITE_CALLS = frozenset({"isfinite", "isnan", "isinf", "nan_to_num", "isposinf", "isneginf"})
"""Calls by which a body checks its inputs for nan and inf: it takes them, so the scan gives it one of each."""
STABLE_WORDS = re.compile(r"\bstabl[ey]|\bstability\b|\boverflows?\b|\bmay be large\b|\blarge (?:logits|values|inputs|"
                          r"magnitudes|scores)\b", re.IGNORECASE)
"""What a docstring says when the function must stay finite at large magnitudes: where it does not, a correct
answer may compute a sigmoid or a log directly, and large inputs would fail it."""


def _doc(node: ast.AST | None) -> str:
    """The docstring of the function ``node`` ('' when it has none)."""
    return (ast.get_docstring(node) or "") if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else ""


def _calls(node: ast.AST | None, names: frozenset[str]) -> bool:
    """True when the function ``node`` calls one of ``names`` (``np.exp``, ``torch.exp``, ``math.exp``)."""
    return node is not None and any(isinstance(n, ast.Call) and (getattr(n.func, "attr", None) or getattr(
        n.func, "id", None)) in names for n in ast.walk(node))


UNBATCHED = re.compile(r"\bor \[|\bor a scalar\b|\bunbatched\b", re.IGNORECASE)
"""What a docstring says when the function also takes one item without its batch axis (``[T, B] (or [T] for one
environment)``)."""


def _names_unbatched(node: ast.AST | None) -> bool:
    """True when the docstring names a form without the batch axis (``UNBATCHED``): the scan then gives one item
    of the batch alone."""
    return bool(UNBATCHED.search(_doc(node)))


def _splits_whitespace(node: ast.AST | None) -> bool:
    """True when the body splits text on runs of whitespace (``text.split()``, no separator): the scan then gives
    its text arguments doubled spaces, on which ``split(" ")`` finds empty tokens."""
    return node is not None and any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                                    and n.func.attr == "split" and not n.args and not n.keywords
                                    for n in ast.walk(node))


def _takes_banned(node: ast.AST | None) -> bool:
    """True when the body reduces with a nan-aware call (``np.nansum(p * log_p)``: an entry of ``0 * -inf``) or
    its docstring says an input may hold -inf (a banned token): the scan then gives its float arrays an entry of
    -inf."""
    return _calls(node, NAN_CALLS) or "-inf" in _doc(node)


def _promises_large(node: ast.AST | None) -> bool:
    """True when the docstring of the function ``node`` says it takes large magnitudes (``STABLE_WORDS``)."""
    return bool(STABLE_WORDS.search(_doc(node)))


def _checks_arguments(node: ast.AST | None, params: list[str]) -> bool:
    """True when the body checks an argument itself for nan or inf (``np.isfinite(x)``, or ``np.isfinite(g)`` for
    ``g`` in ``grads``): it takes such inputs. A check of what it computed (scores masked with -inf) says nothing
    of its inputs."""
    if node is None:
        return False
    names = set(params) | set(loop_items(node, params))
    return any(isinstance(n, ast.Call) and (getattr(n.func, "attr", None) or getattr(n.func, "id", None))
               in FINITE_CALLS and any(isinstance(a, ast.Name) and a.id in names for a in n.args)
               for n in ast.walk(node))


def _any_rank(node: ast.AST | None, params: list[str]) -> list[str]:
    """The array arguments whose rank the body reads (``x.ndim``, ``len(x.shape)``, ``x.dim()``): written for any
    number of axes, so the scan gives them one more."""
    out: list[str] = []
    for n in ast.walk(node) if node is not None else ():
        base = None
        if isinstance(n, ast.Attribute) and n.attr == "ndim":
            base = n.value
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "dim" and not n.args:
            base = n.func.value
        elif isinstance(n, ast.Call) and getattr(n.func, "id", None) == "len" and len(n.args) == 1 \
                and isinstance(n.args[0], ast.Attribute) and n.args[0].attr == "shape":
            base = n.args[0].value
        if isinstance(base, ast.Name) and base.id in params and base.id not in out:
            out.append(base.id)
    return out


NUMBER_DTYPES = frozenset({"float", "int", "float32", "float64", "int32", "int64"})
"""dtypes an explicit conversion of a mask names where it takes numbers: ``np.asarray(dones, dtype=np.float64)``."""


def _converts(node: ast.AST | None, params: list[str]) -> list[str]:
    """The arguments the body converts to numbers with a dtype it names (``np.asarray(dones, dtype=np.float64)``,
    ``mask.astype(float)``): their callers may pass numbers where the driver passed bools (``True, or 1``), so the
    scan gives a bool one as 0/1 ints."""
    out: list[str] = []
    for n in ast.walk(node) if node is not None else ():
        if not isinstance(n, ast.Call):
            continue
        called = getattr(n.func, "attr", None) or getattr(n.func, "id", None)
        if called in ("asarray", "array", "asanyarray") and n.args:
            arg, dtypes = n.args[0], [*n.args[1:2], *(k.value for k in n.keywords if k.arg == "dtype")]
        elif called == "astype" and isinstance(n.func, ast.Attribute):
            arg, dtypes = n.func.value, [*n.args[:1], *(k.value for k in n.keywords if k.arg == "dtype")]
        else:
            continue
        names = {getattr(d, "attr", None) or getattr(d, "id", None) for d in dtypes}
        if isinstance(arg, ast.Name) and arg.id in params and names & NUMBER_DTYPES and arg.id not in out:
            out.append(arg.id)
    return out
