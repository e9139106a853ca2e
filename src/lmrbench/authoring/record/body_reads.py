"""What a golden body does with its scalar parameters, read from its source: the text literals it compares a
parameter with (``reduction == "sum"``), the attributes of ``self`` a method reads (``self.beta``), and the
pairs of parameters it combines (``beta * (1 - label_smoothing)``, ``max(top_k, min_tokens_to_keep)``, a branch
on one that uses the other). Amplification varies what the recording left out by these (``amplify``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from lmrbench import pyparse
from lmrbench.authoring.record.body_helpers import access_path, aliases, helpers, read_with_default, resolved
from lmrbench.authoring.record.body_values import (
    GUARD_CALLS,
    bounds,
    built_sizes,
    fallbacks,
    nones,
    number,
    relatives,
    signed,
    sizes,
    truth_tested,
)


@dataclass
class BodyReads:
    """What one function's body reads of its parameters and of ``self``."""

    literals: dict[str, list[str]] = field(default_factory=dict)
    """Parameter (or ``self.attr``) -> the text literals the body compares it with, in source order."""
    self_reads: list[str] = field(default_factory=list)
    """The attributes of ``self`` the body reads, as ``self.attr``, in source order."""
    pairs: list[tuple[str, str]] = field(default_factory=list)
    """Pairs of parameters (or ``self.attr``) the body combines, each once, in source order."""
    masks: list[str] = field(default_factory=list)
    """Parameters that may mask an operand: a factor of a product, the condition of a ``where``, an index."""
    paths: list[str] = field(default_factory=list)
    """The access paths below ``self`` or a parameter that the body and the helpers it calls read
    (``self.cfg.loss.gamma``, ``self.config["kl_penalty"]``, ``cfg.beta``), in source order."""
    bounds: dict[str, list[str]] = field(default_factory=dict)
    """Parameter (or path) -> what the body compares it with: another parameter or path, or a number
    (``step < warmup_steps``, ``alpha >= 0``); the search tries values on each side of the boundary."""
    signed: list[str] = field(default_factory=list)
    """Parameters the body compares with zero or a negative number (``top_k > 0``): their sign matters, so a
    negative value is worth a case even where the recording saw a positive one."""
    gets: dict[str, bool | int | float | str | None] = field(default_factory=dict)
    """Keys read with a literal default (``cfg.get("symmetric", False)``) -> that default, by the path the key
    would have (``self.config["loss"]["symmetric"]``): a setting the recorded dict may lack, so never varied."""
    guarded: bool = False
    """The body guards a value against a bound (``max(num_fg, 1)``, ``np.clip(x, eps, None)``, ``std > 0``): its
    author expects inputs where the guard binds (a count of zero, a spread of zero), so the search may try them."""
    scaled: list[str] = field(default_factory=list)
    """Leaves that a local the body compares with a number depends on (``coef = max_norm / (total + eps)`` in
    ``if coef < 1.0``): the search tries them ten times larger and smaller, to reach the other side."""
    nones: list[str] = field(default_factory=list)
    """Leaves the body compares with ``None`` (``if self.momentum is None``): the search tries None for them, the
    path a setting takes when it is left unset (a cumulative average instead of a momentum)."""
    lows: dict[str, tuple[float, bool]] = field(default_factory=dict)
    """Names the docstring bounds from below (``growth_interval`` (>= 1), ``n`` at least 2, ``k`` positive) ->
    (the bound, strict): the contract's domain, which no value tried leaves."""
    sizes: list[str] = field(default_factory=list)
    """Leaves that size what the body builds or loops over (``np.linspace(0, 1, n_bins + 1)``, ``range(self.k)``,
    ``np.zeros(num_classes)``): a size recorded at least 1 is not tried below 1 unless the body compares it with
    zero (a count of nothing is outside what its callers pass)."""
    relatives: dict[str, list[str]] = field(default_factory=dict)
    """Leaf -> the other leaves it meets in a comparison or a guard (``body_values.relatives``)."""
    deps: dict[str, set[str]] = field(default_factory=dict)
    """Local name -> the parameters and paths its value depends on (``low = correction_dim(beta_fast)``)."""
    tested: list[str] = field(default_factory=list)
    """Leaves whose truth a branch tests (``body_values.truth_tested``)."""
    fallbacks: dict[str, list[str]] = field(default_factory=dict)
    """Leaf -> the source of what it falls back to when unset (``body_values.fallbacks``: ``head_dim or hidden //
    heads``): tried unset where recorded set, and of the kind of its fallback where recorded unset."""
    built: list[str] = field(default_factory=list)
    """Attributes of ``self`` that the class's ``__init__`` sizes its arrays by (``body_values.built_sizes``)."""


def _name(node: ast.AST) -> str | None:
    """``beta`` for a name, ``self.cfg.loss.gamma`` or ``cfg["beta"]`` for an access path, else None."""
    return access_path(node)


def _paths(funcs: list[ast.FunctionDef | ast.AsyncFunctionDef], roots: set[str]) -> list[str]:
    """The access paths (``self.beta``, ``self.cfg.loss.gamma``, ``cfg["beta"]``) the functions read, rooted at
    ``roots``, each as far as it is written (not its prefixes, not a method called on ``self``), in order."""
    out: list[str] = []
    for func in funcs:
        inner: set[int] = set()
        named = aliases(func)
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and node.targets[0].id in named:
                inner.add(id(node.value))  # an alias: read where it is used, as the path it names
            if isinstance(node, ast.Attribute | ast.Subscript) and access_path(node) is not None:
                inner.add(id(node.value))
            if isinstance(node, ast.Call):
                inner.add(id(node.func))
                read = read_with_default(node)
                if read is not None and access_path(node) is not None:
                    inner.add(id(read[0]))  # ``scaling.get("factor")`` reads scaling["factor"], not all of scaling
        ordered = sorted((n for n in ast.walk(func) if isinstance(n, ast.Attribute | ast.Subscript)
                          or read_with_default(n) is not None),
                         key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
        for node in ordered:
            if id(node) in inner or not isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
                continue
            path = access_path(node)
            if path is not None and path.split(".")[0].split("[")[0] in roots and path not in out:
                out.append(path)
    return out


_COMBINING_CALLS = {"max", "min", "maximum", "minimum", "clip", "where", "fmax", "fmin", "clamp"}


class _Flow(ast.NodeVisitor):
    """Which parameters each local name depends on, and which pairs meet in one expression."""

    def __init__(self, params: set[str]) -> None:
        self.params = params
        self.deps: dict[str, set[str]] = {}
        self.control: list[set[str]] = []
        self.pairs: list[tuple[str, str]] = []
        self.masks: list[str] = []

    def masking(self, node: ast.AST) -> None:
        self.masks += [p for p in sorted(self.depends(node)) if p not in self.masks]

    def depends(self, node: ast.AST | None) -> set[str]:
        if node is None:
            return set()
        out: set[str] = set()
        for sub in ast.walk(node):
            name = _name(sub)
            if name is None:
                continue
            if name in self.params:
                out.add(name)
            out |= self.deps.get(name, set())
        return out

    def meet(self, *groups: set[str]) -> None:
        for i, a in enumerate(groups):
            for b in groups[i + 1:]:
                for p in sorted(a):
                    for q in sorted(b):
                        pair = (p, q) if p < q else (q, p)
                        if p != q and pair not in self.pairs:
                            self.pairs.append(pair)

    def _assign(self, targets: list[ast.expr], value: ast.AST | None) -> None:
        deps = self.depends(value).union(*self.control) if self.control else self.depends(value)
        for target in targets:
            for sub in ast.walk(target):
                name = _name(sub)
                if name is not None and isinstance(getattr(sub, "ctx", None), ast.Store):
                    self.deps[name] = (self.deps.get(name, set()) | deps) if self.control else set(deps)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        self._assign(node.targets, node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.generic_visit(node)
        self.meet(self.depends(node.target), self.depends(node.value))
        self._assign([node.target], ast.Tuple(elts=[node.target, node.value]))

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.generic_visit(node)
        self._assign([node.target], node.value)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        self.generic_visit(node)
        self.meet(self.depends(node.left), self.depends(node.right))
        if isinstance(node.op, ast.Mult):
            self.masking(node.left)
            self.masking(node.right)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self.generic_visit(node)
        self.masking(node.slice)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        self.generic_visit(node)
        self.meet(*(self.depends(v) for v in node.values))

    def visit_Compare(self, node: ast.Compare) -> None:
        self.generic_visit(node)
        self.meet(self.depends(node.left), *(self.depends(c) for c in node.comparators))

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.generic_visit(node)
        self.meet(self.depends(node.test), self.depends(node.body) | self.depends(node.orelse))

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        func = node.func
        called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if called in _COMBINING_CALLS:
            self.meet(*(self.depends(a) for a in node.args))
        if called in ("where", "masked_fill") and node.args:
            self.masking(node.args[0])

    def _branch(self, test: ast.expr, blocks: list[list[ast.stmt]]) -> None:
        self.visit(test)
        cond = self.depends(test)
        self.control.append(cond)
        for block in blocks:
            for stmt in block:
                self.visit(stmt)
                self.meet(cond, self.depends(stmt) - cond)
        self.control.pop()

    def visit_If(self, node: ast.If) -> None:
        self._branch(node.test, [node.body, node.orelse])

    def visit_While(self, node: ast.While) -> None:
        self._branch(node.test, [node.body, node.orelse])

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        self._assign([node.target], node.iter)
        self._branch(ast.Constant(value=None), [node.body, node.orelse])

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        return  # a nested function is read where it is called, not here

    def visit_Lambda(self, node: ast.Lambda) -> None:
        return


_QUOTED = re.compile(r'"([A-Za-z_][\w-]{0,30})"')


def _documented(func: ast.FunctionDef | ast.AsyncFunctionDef, literals: dict[str, list[str]]) -> None:
    """Add the quoted words of the docstring to the literals of the one text parameter, if there is one: the
    modes it documents (``"none"``) that no comparison names, since a mode may take an ``else``. The keys the
    body reads (``scaling.get("factor")``, ``cfg["beta"]``) are no modes."""
    doc = ast.get_docstring(func) or ""
    if len(literals) != 1 or not doc:
        return
    keys = {read[1] for n in ast.walk(func) if (read := read_with_default(n)) is not None}
    keys |= {n.slice.value for n in ast.walk(func) if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant)
             and isinstance(n.slice.value, str)}
    known = next(iter(literals.values()))
    known += [w for w in _QUOTED.findall(doc) if w not in known and w not in keys]


_LOW = re.compile(r"`*([A-Za-z_]\w*)`*\s*\(?\s*(>=|>|≥|is at least|at least|must be at least)\s*(-?\d+(?:\.\d+)?)")
_POSITIVE = re.compile(r"`*([A-Za-z_]\w*)`*\s*\(?\s*(?:is |must be |a )?(positive|non-negative|nonnegative)\b")


def _lows(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, tuple[float, bool]]:
    """What the docstring says bounds a name from below: ``growth_interval`` (>= 1), ``n`` at least 2, ``k``
    positive, ``eps`` non-negative."""
    doc = ast.get_docstring(func) or ""
    out: dict[str, tuple[float, bool]] = {}
    for name, op, value in _LOW.findall(doc):
        out.setdefault(name, (float(value), op == ">"))
    for name, word in _POSITIVE.findall(doc):
        out.setdefault(name, (0.0, word == "positive"))
    return out


def _literals(func: ast.AST, params: set[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for node in ast.walk(func):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        names = [n for n in map(_name, sides) if n in params]
        texts: list[str] = []
        for side in sides:
            if isinstance(side, ast.Constant) and isinstance(side.value, str):
                texts.append(side.value)
            elif isinstance(side, ast.Tuple | ast.List | ast.Set):
                texts += [e.value for e in side.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        for name in names:
            known = out.setdefault(name, [])
            known += [t for t in texts if t not in known]
    return {k: v for k, v in out.items() if v}


def body_reads(source: str, qualname: str, params: list[str]) -> BodyReads:
    """What the body of ``qualname`` in ``source`` reads of ``params`` and of ``self``; empty when the source
    does not parse or has no such function."""
    try:
        tree = pyparse.parse(source)
        func = pyparse.find_def(tree, qualname)
    except SyntaxError:
        return BodyReads()
    if func is None:
        return BodyReads()
    raw, func = func, resolved(func)  # raw: ``if n is None: n = cfg.n`` before ``n`` reads as ``cfg.n``
    called = helpers(tree, qualname, func, set(params))
    roots = {"self", *params}
    paths = _paths([func, *called], roots)
    reads = [p for p in paths if p.startswith("self.")]
    known = set(params) | set(paths)
    flow = _Flow(known)
    for stmt in func.body:
        flow.visit(stmt)
    literals = _literals(func, known)
    for helper in called:
        for name, texts in _literals(helper, known).items():
            literals.setdefault(name, []).extend(t for t in texts if t not in literals.get(name, []))
    _documented(func, literals)
    compared = bounds([func, *called], known)
    return BodyReads(literals, reads, flow.pairs, flow.masks, paths, compared, signed(func, known),
                     _gets([func, *called], roots), _guarded([func, *called], known), _scaled(func, flow, known),
                     nones([func, *called], known), _lows(func), sizes([func, *called], known, flow.deps),
                     _merged(relatives([func, *called], known), relatives([raw], known)), flow.deps,
                     truth_tested([func, *called], known), fallbacks([raw, func, *called], known),
                     built_sizes(tree, qualname))


def _merged(*found: dict[str, list[str]]) -> dict[str, list[str]]:
    """One name -> names mapping holding each one's names once, in order."""
    out: dict[str, list[str]] = {}
    for mapping in found:
        for key, names in mapping.items():
            out.setdefault(key, []).extend(n for n in names if n not in out[key])
    return out


def _scaled(func: ast.AST, flow: _Flow, known: set[str]) -> list[str]:
    """The known names that a local compared with a number depends on."""
    out: list[str] = []
    for node in ast.walk(func):
        sides = [node.left, *node.comparators] if isinstance(node, ast.Compare) else []
        if len(sides) != 2 or not any(number(s) is not None for s in sides):
            continue
        for side in sides:
            if isinstance(side, ast.Name) and side.id not in known:
                out += [d for d in sorted(flow.deps.get(side.id, set())) if d in known and d not in out]
    return out


def _gets(funcs: list[ast.FunctionDef | ast.AsyncFunctionDef],
          roots: set[str]) -> dict[str, bool | int | float | str | None]:
    """``base.get("key", default)`` with a literal key and default, on an access path rooted at ``roots``:
    {``base["key"]``: default}; ``base.get("key") or 32`` has the default 32, ``base.get("key")`` None."""
    out: dict[str, bool | int | float | str | None] = {}
    for func in funcs:
        for node in ast.walk(func):
            fallback = node.values[1] if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) \
                and len(node.values) == 2 else None
            call = node.values[0] if isinstance(node, ast.BoolOp) and fallback is not None else node
            read = read_with_default(call)
            path = access_path(call) if read is not None and not read[2] else None
            if path is None or path.split(".")[0].split("[")[0] not in roots:
                continue
            if fallback is not None:
                if isinstance(fallback, ast.Constant) and isinstance(fallback.value, int | float):
                    out.setdefault(path, fallback.value)
            elif isinstance(call, ast.Call) and len(call.args) == 1:  # ``scaling.get("attention_factor")``
                out.setdefault(path, None)
            elif isinstance(call, ast.Call) and len(call.args) == 2:
                try:
                    default = ast.literal_eval(call.args[1])
                except ValueError:
                    continue
                if type(default) in (bool, int, float, str):
                    out[path] = default
    return out


def _guarded(funcs: list[ast.FunctionDef | ast.AsyncFunctionDef], known: set[str]) -> bool:
    """True when a function bounds a value by a number (``max(count, 1.0)``, ``x.clamp(min=eps)``) or compares
    a local it computed with zero (``np.where(std > 0, ...)``, ``if count == 0``; not ``masks > 0`` of an
    argument, which reads a mask or a sign)."""
    for func in funcs:
        for node in ast.walk(func):
            if isinstance(node, ast.Call):
                called = node.func.id if isinstance(node.func, ast.Name) else \
                    node.func.attr if isinstance(node.func, ast.Attribute) else ""
                values = [*node.args, *(k.value for k in node.keywords)]
                if called in GUARD_CALLS and any(number(v) is not None for v in values):
                    return True
            sides = [node.left, *node.comparators] if isinstance(node, ast.Compare) else []
            if len(sides) == 2 and any(number(s) in ("0", "0.0") for s in sides) \
                    and any(isinstance(s, ast.Name) and s.id not in known for s in sides):
                return True
    return False
