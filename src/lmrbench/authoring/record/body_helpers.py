"""What a goal body reads through names: access paths as written (``self.cfg.loss.gamma``,
``self.config["beta"]``), through local aliases (``loss_cfg = self.cfg.loss``), and in the helpers it calls
on ``self`` or by name in the golden file, followed with their parameters renamed to the caller's arguments
(``self._penalty(logprob)`` reads ``self.config.kl_penalty`` when ``_penalty`` does).
"""

from __future__ import annotations

import ast
import copy
import json

MAX_DEPTH = 3
"""How deep the calls of helpers are followed."""


def access_path(node: ast.AST) -> str | None:
    """``beta``, ``self.cfg.loss.gamma``, ``self.config["beta"]``, ``betas[0]``: a name followed by attributes
    and constant subscripts, as written, also when read with a default (``getattr(config, "head_dim", None)`` is
    ``config.head_dim``, ``scaling.get("factor", 1.0)`` is ``scaling["factor"]``); None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    read = read_with_default(node)
    if read is not None:
        inner = access_path(read[0])
        if inner is None:
            return None
        return f"{inner}.{read[1]}" if read[2] else f"{inner}[{json.dumps(read[1])}]"
    if isinstance(node, ast.Attribute):
        inner = access_path(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
            and type(node.slice.value) in (str, int):
        inner = access_path(node.value)
        key = node.slice.value
        return None if inner is None else f"{inner}[{json.dumps(key)}]"  # as lmrbench_leaves.key_text writes it
    return None


def read_with_default(node: ast.AST) -> tuple[ast.expr, str | int, bool] | None:
    """(the object, the name or key, True for an attribute) of ``getattr(obj, "name"[, default])`` or
    ``obj.get("key"[, default])``; None for any other node."""
    if not isinstance(node, ast.Call) or node.keywords or not node.args:
        return None
    func, args = node.func, node.args
    if isinstance(func, ast.Name) and func.id == "getattr" and len(args) in (2, 3) \
            and isinstance(args[1], ast.Constant) and isinstance(args[1].value, str):
        return args[0], str(args[1].value), True
    if isinstance(func, ast.Attribute) and func.attr == "get" and len(args) in (1, 2) \
            and isinstance(args[0], ast.Constant) and type(args[0].value) in (str, int):
        key = args[0].value
        return func.value, key if isinstance(key, str) else int(key), False  # type: ignore[arg-type]
    return None


class _Rename(ast.NodeTransformer):
    """Names replaced by expressions (a helper's parameters by the caller's arguments; aliases by what they
    alias)."""

    def __init__(self, mapping: dict[str, ast.expr], chained: bool = False) -> None:
        self.mapping = mapping
        self.chained = chained
        self.inside: list[str] = []

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.mapping and isinstance(node.ctx, ast.Load) and node.id not in self.inside:
            new = ast.copy_location(copy.deepcopy(self.mapping[node.id]), node)
            if not self.chained:
                return new
            self.inside.append(node.id)  # an alias of an alias (``t = cfg["t"]`` after ``cfg = self.config``)
            try:
                return self.visit(new)
            finally:
                self.inside.pop()
        return node


def aliases(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
    """Local names assigned once from an access path rooted elsewhere (``cfg = self.cfg.loss``, ``scaling =
    config.rope_scaling or {}``, ``kind = scaling.get("rope_type", "default")``) or from a parameter the body never
    assigns (``n = no_repeat_ngram_size``: ``n <= 0`` compares the parameter)."""
    params = {a.arg for a in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]}
    found: dict[str, ast.expr] = {}
    counts: dict[str, int] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):  # not ``n`` of ``out[n] = v``
                        counts[sub.id] = counts.get(sub.id, 0) + 1
            value = node.value.values[0] if isinstance(node, ast.Assign) and isinstance(node.value, ast.BoolOp) \
                and isinstance(node.value.op, ast.Or) else getattr(node, "value", None)  # ``cfg or {}``: cfg
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and (isinstance(value, ast.Attribute | ast.Subscript | ast.Call) and access_path(value)
                         or isinstance(value, ast.Name) and value.id in params):
                found[node.targets[0].id] = value
    return {k: v for k, v in found.items() if counts.get(k) == 1
            and not (isinstance(v, ast.Name) and counts.get(v.id, 0))}


def resolved(func: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """A copy of ``func`` with its aliases of access paths replaced by the paths."""
    mapping = aliases(func)
    if not mapping:
        return func
    return _Rename(mapping, chained=True).visit(copy.deepcopy(func))  # type: ignore[no-any-return]


def _defs(body: list[ast.stmt]) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {n.name: n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def _bound(helper: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call, skip_first: bool,
           caller_params: set[str]) -> ast.FunctionDef | ast.AsyncFunctionDef:
    """``helper`` with its parameters renamed to the call's arguments where those are access paths, and to
    names no caller uses elsewhere."""
    params = [a.arg for a in helper.args.posonlyargs + helper.args.args]
    if skip_first:
        params = params[1:]
    mapping: dict[str, ast.expr] = {}
    for name, arg in zip(params, call.args, strict=False):
        mapping[name] = arg if access_path(arg) is not None else ast.Name(id=f"_helper_{name}", ctx=ast.Load())
    for kw in call.keywords:
        if kw.arg is not None:
            mapping[kw.arg] = kw.value if access_path(kw.value) is not None else \
                ast.Name(id=f"_helper_{kw.arg}", ctx=ast.Load())
    every = params + [a.arg for a in helper.args.kwonlyargs]
    for name in every:
        if name not in mapping and name in caller_params:
            mapping[name] = ast.Name(id=f"_helper_{name}", ctx=ast.Load())
    return _Rename(mapping).visit(copy.deepcopy(resolved(helper)))  # type: ignore[no-any-return]


def helpers(tree: ast.Module, qualname: str, func: ast.FunctionDef | ast.AsyncFunctionDef,
            params: set[str]) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The helpers ``func`` calls (methods of its class on ``self``, functions of the module by name), each a
    copy whose parameters read as the caller's arguments, followed ``MAX_DEPTH`` calls deep."""
    module_defs = _defs(tree.body)
    cls_name = qualname.rpartition(".")[0]
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls_name), None)
    methods = _defs(cls.body) if cls is not None else {}
    out: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    seen = {func.name}
    todo = [(func, 0)]
    while todo:
        body, depth = todo.pop(0)
        if depth >= MAX_DEPTH:
            continue
        for node in ast.walk(body):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" \
                    and f.attr in methods and f.attr not in seen:
                seen.add(f.attr)
                made = _bound(methods[f.attr], node, True, params)
            elif isinstance(f, ast.Name) and f.id in module_defs and f.id not in seen:
                seen.add(f.id)
                made = _bound(module_defs[f.id], node, False, params)
            else:
                continue
            out.append(made)
            todo.append((made, depth + 1))
    return out


def loop_items(node: ast.AST, params: list[str]) -> dict[str, str]:
    """The loop variables that take the items of a list argument, and that argument: ``g`` of ``for g in grads``,
    ``for p, g in zip(self.params, grads)`` and ``for i, g in enumerate(grads)``; and the names given a value of a
    dict argument (``g = grads.get(name)``)."""
    out: dict[str, str] = {}
    for assign in (n for n in ast.walk(node) if isinstance(n, ast.Assign) and len(n.targets) == 1):
        value, target = assign.value, assign.targets[0]
        if isinstance(target, ast.Name) and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr == "get" and isinstance(value.func.value, ast.Name) \
                and value.func.value.id in params:
            out[target.id] = value.func.value.id
    for loop in (n for n in ast.walk(node) if isinstance(n, ast.For)):
        targets = loop.target.elts if isinstance(loop.target, ast.Tuple) else [loop.target]
        it = loop.iter
        sources: list[ast.expr] = [it]
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("zip", "enumerate"):
            sources = list(it.args) if it.func.id == "zip" else [ast.Constant(None), *it.args[:1]]
        if len(sources) != len(targets):
            continue
        for target, source in zip(targets, sources, strict=True):
            if isinstance(target, ast.Name) and isinstance(source, ast.Name) and source.id in params:
                out[target.id] = source.id
    return out


def none_items(node: ast.AST | None, params: list[str]) -> list[str]:
    """The list (or dict) arguments whose items the body tests for None (``if g is None: continue`` for ``g`` in
    ``grads``, or ``g = grads.get(name)``): a caller may leave an item out (a parameter with no gradient), so the
    search gives one None."""
    if node is None:
        return []
    items = loop_items(node, params)
    return list(dict.fromkeys(items[c.left.id] for c in ast.walk(node) if isinstance(c, ast.Compare)
                              and isinstance(c.left, ast.Name) and c.left.id in items
                              and any(isinstance(op, ast.Is | ast.IsNot) for op in c.ops)
                              and any(isinstance(x, ast.Constant) and x.value is None for x in c.comparators)))
