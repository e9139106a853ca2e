"""What a goal body compares its leaves with, and what they size: the numbers and other leaves on the other side
of a comparison (``bounds``: ``step < warmup_steps``, ``alpha >= 0``), zero or a negative number (``signed``:
``top_k > 0``), ``None`` (``nones``: ``self.momentum is None``), and the arguments of calls that build or loop
over something of that size (``sizes``: ``np.linspace(0, 1, n_bins + 1)``). ``body_reads`` gathers them.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from lmrbench import pyparse
from lmrbench.authoring.record.body_helpers import access_path, read_with_default


def _name(node: ast.AST) -> str | None:
    return access_path(node)


def signed(func: ast.AST, params: set[str]) -> list[str]:
    out: list[str] = []
    for node in ast.walk(func):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        numbers = [float(s.value) for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, int | float)]
        numbers += [-1.0 for s in sides if isinstance(s, ast.UnaryOp) and isinstance(s.op, ast.USub)
                    and isinstance(s.operand, ast.Constant) and type(s.operand.value) in (int, float)]
        if any(n <= 0 for n in numbers):
            out += [n for n in map(_name, sides) if n in params and n not in out]
    return out


def nones(funcs: list[ast.FunctionDef | ast.AsyncFunctionDef], known: set[str]) -> list[str]:
    """The known names compared with ``None`` (``is``, ``is not``, ``==``, ``!=``)."""
    out: list[str] = []
    for func in funcs:
        for node in ast.walk(func):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(isinstance(x, ast.Constant) and x.value is None for x in sides):
                    out += [n for n in map(_name, sides) if n in known and n not in out]
    return out


SIZE_CALLS = frozenset({"range", "arange", "zeros", "ones", "empty", "full", "eye", "identity", "tile", "repeat",
                        "array_split", "split", "linspace", "logspace", "randn", "rand", "reshape", "view",
                        "broadcast_to", "expand"})
"""Calls whose arguments (``linspace``: its count) size what they build."""


def sizes(funcs: list[ast.FunctionDef | ast.AsyncFunctionDef], known: set[str],
          deps: dict[str, set[str]] | None = None) -> list[str]:
    """The known names inside the size arguments of ``SIZE_CALLS`` (``n_bins`` of ``np.linspace(0, 1, n_bins +
    1)``), and those the locals there depend on (``deps``: local name -> known names)."""
    out: list[str] = []
    for func in funcs:
        for node in ast.walk(func):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if name not in SIZE_CALLS:
                continue
            args = [*node.args, *(k.value for k in node.keywords)]
            if name in ("linspace", "logspace"):
                args = node.args[2:3] + [k.value for k in node.keywords if k.arg == "num"]
            for arg in args:
                for sub in ast.walk(arg):
                    name = _name(sub)
                    # a local computed from known names sizes it too (``closest = 2 ** floor(log2(n_heads))``)
                    found = {name} if name in known else (deps or {}).get(name or "", set()) & known
                    out += [n for n in sorted(found) if n not in out]
    return out


def built_sizes(tree: ast.Module, qualname: str) -> list[str]:
    """The attributes of ``self`` that the ``__init__`` of the method's class sizes its arrays by
    (``self.capacity = capacity`` where ``self.sum_tree = np.zeros(2 * capacity)``): one changed alone gives an
    object no constructor makes (a capacity of 255 over trees of 512 leaves), so no case varies it."""
    owner, _, _ = qualname.rpartition(".")
    init = pyparse.find_def(tree, f"{owner}.__init__") if owner else None
    if not isinstance(init, ast.FunctionDef):
        return []
    params = {a.arg for a in [*init.args.args, *init.args.kwonlyargs]}
    sizing = set(sizes([init], params))
    out: list[str] = []
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in sizing:
            out += [t for target in node.targets if (t := access_path(target) or "").startswith("self.")]
    return out


def bounds(funcs: list[ast.FunctionDef | ast.AsyncFunctionDef], known: set[str]) -> dict[str, list[str]]:
    """What each known name is compared with (``<``, ``<=``, ``>``, ``>=``, ``==``): another known name, or a
    number, as source text."""
    out: dict[str, list[str]] = {}
    for func in funcs:
        for node in ast.walk(func):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            for a, b in zip(sides, sides[1:], strict=False):
                for x, y in ((a, b), (b, a)):
                    name = _name(x)
                    if name not in known:
                        continue
                    other = _name(y)
                    text = other if other in known else number(y)
                    if text is not None and text not in out.setdefault(name, []):
                        out[name].append(text)
    return {k: v for k, v in out.items() if v}


GUARD_CALLS = frozenset({"min", "max", "minimum", "maximum", "fmin", "fmax", "clip", "clamp", "clamp_min",
                         "clamp_max"})
"""Calls that bound one value by another: a guard binds where the bound reaches the other side."""


def relatives(funcs: list[ast.FunctionDef | ast.AsyncFunctionDef], known: set[str]) -> dict[str, list[str]]:
    """What each known name meets in a comparison or a guard, as other known names inside the other side
    (``good_steps >= growth_interval``; ``max(self.scale * self.backoff_factor, self.min_scale)`` gives
    ``self.min_scale`` -> ``self.scale``), or falls back to when unset (``cfg.clip_low if cfg.clip_low is not
    None else cfg.clip``): the search sets it near their values in each call it varies, where a branch flips or a
    guard binds whatever the run's magnitudes, and gives a leaf left None a value of the kind it stands in for."""
    out: dict[str, list[str]] = {}
    for func in funcs:
        for node in ast.walk(func):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                groups = list(zip(sides, sides[1:], strict=False))
            elif isinstance(node, ast.Call) and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) \
                    in GUARD_CALLS:
                args = [*node.args, *(k.value for k in node.keywords)]
                groups = [(a, b) for i, a in enumerate(args) for b in args[i + 1:]]
            elif (unset := _fallback(node)) is not None:  # ``low or clip``, ``if n is None: n = cfg.n``
                side, to = unset
                # ``low if low is not None else c``: both branches
                groups = [(side, b) for b in ([node.body, node.orelse] if isinstance(node, ast.IfExp) else to)]
            else:
                continue
            for a, b in groups:
                for x, y in ((a, b), (b, a)):
                    name = _name(x)
                    if name not in known:
                        continue
                    found = [o for o in (_name(sub) for sub in ast.walk(y)) if o in known and o not in (name, "self")]
                    others = [o for o in found if not any(f.startswith((f"{o}.", f"{o}[")) for f in [*found, name])]
                    out.setdefault(name, []).extend(o for o in others if o not in out[name])
    return {k: v for k, v in out.items() if v}


def _none_test(node: ast.AST) -> ast.expr | None:
    """``x`` of ``if x is None:`` (a statement), else None."""
    if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1 \
            and isinstance(node.test.ops[0], ast.Is) and isinstance(node.test.comparators[0], ast.Constant) \
            and node.test.comparators[0].value is None:
        return node.test.left
    return None


def _fallback(node: ast.AST) -> tuple[ast.expr, list[ast.expr]] | None:
    """(the name that may be unset, what it falls back to) of ``x or y``, ``x if x is not None else y`` (either
    way round), ``if x is None: x = y`` and a key or attribute read with another as its default
    (``scaling.get("rope_type", scaling.get("type"))``: a legacy name); None for any other node."""
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and len(node.values) == 2:
        return node.values[0], [node.values[1]]
    if isinstance(node, ast.IfExp) and isinstance(node.test, ast.Compare) and any(
            isinstance(c, ast.Constant) and c.value is None for c in node.test.comparators):
        return node.test.left, [node.orelse if isinstance(node.test.ops[0], ast.IsNot | ast.NotEq) else node.body]
    read = read_with_default(node)
    if read is not None and isinstance(node, ast.Call) and len(node.args) == 3 - (not read[2]) \
            and read_with_default(node.args[-1]) is not None:  # ``cfg.get("rope_type", cfg.get("type"))``
        return node, [node.args[-1]]
    side = _none_test(node)
    if side is None:
        return None
    return side, [s.value for s in node.body if isinstance(s, ast.Assign)]  # type: ignore[attr-defined]


def fallbacks(funcs: list[ast.FunctionDef | ast.AsyncFunctionDef], known: set[str]) -> dict[str, list[str]]:
    """The known names that fall back to another value when unset (``_fallback``) -> the source of what they
    fall back to. A driver that always sets them never runs the fallback, and one that never does never varies
    them: the search tries them unset and set."""
    out: dict[str, list[str]] = {}
    for func in funcs:
        for node in ast.walk(func):
            unset = _fallback(node)
            name = _name(unset[0]) if unset is not None else None
            if unset is not None and name in known:
                texts = out.setdefault(name, [])
                texts += [t for t in map(ast.unparse, unset[1]) if t not in texts]
    return out


def value_of(text: str, values: Mapping[str, object]) -> float | int | None:
    """The number an expression of numbers and known leaves gives with the leaves' ``values`` (``hidden_size //
    num_heads`` with 64 and 4 gives 16); None where it holds anything else or fails."""
    import operator

    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv}

    def ev(node: ast.AST) -> float | int:
        path = _name(node)
        if path is not None and type(values.get(path)) in (int, float):
            return values[path]  # type: ignore[return-value]
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            return ops[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        raise ValueError(ast.unparse(node))

    try:
        stmt = pyparse.parse(text).body[0]
        return ev(stmt.value) if isinstance(stmt, ast.Expr) else None
    except (ValueError, SyntaxError, ArithmeticError, TypeError, IndexError):
        return None


def truth_tested(funcs: list[ast.FunctionDef | ast.AsyncFunctionDef], known: set[str]) -> list[str]:
    """The known names whose truth a branch tests (``if mscale and mscale_all_dim:``, ``if not cfg.flag``)."""
    out: list[str] = []
    for func in funcs:
        for node in ast.walk(func):
            if not isinstance(node, ast.If | ast.IfExp | ast.While):
                continue
            sides = [node.test]
            while sides:
                side = sides.pop()
                if isinstance(side, ast.BoolOp):
                    sides += side.values
                elif isinstance(side, ast.UnaryOp) and isinstance(side.op, ast.Not):
                    sides.append(side.operand)
                elif (name := _name(side)) in known and name not in out:
                    out.append(name)
    return out


def infinity(node: ast.AST) -> str | None:
    """``inf`` or ``-inf`` for ``float("inf")``, ``math.inf``, ``np.inf`` (negated too), else None."""
    sign = ""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        sign, node = "-", node.operand
    if isinstance(node, ast.Attribute) and node.attr == "inf" and isinstance(node.value, ast.Name):
        return f"{sign}inf"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float" and node.args \
            and isinstance(node.args[0], ast.Constant) and node.args[0].value in ("inf", "-inf", "infinity"):
        text = str(node.args[0].value).replace("infinity", "inf")
        return text if not sign else text.lstrip("-") if text.startswith("-") else f"-{text}"
    return None


def number(node: ast.AST) -> str | None:
    infinite = infinity(node)
    if infinite is not None:
        return infinite
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return repr(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, int | float) and not isinstance(node.operand.value, bool):
        return repr(-node.operand.value)
    return None
