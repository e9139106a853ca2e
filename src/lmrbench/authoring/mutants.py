"""Cheap mutants of one function: whole-file sources that a good test suite should fail.

Each mutant changes one thing in the function's body (the docstring is kept): a constant return, an input
returned unchanged, a dropped term of a sum or difference, a flipped sign, an index or slice bound off by one,
``min``/``max`` or ``mean``/``sum`` swapped, a comparison loosened. The order is deterministic: the kinds take
turns, and within a kind the sites come in source order; mutants are de-duplicated, differ from the source and
all parse.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, TypeVar, cast

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, PositionProvider

from lmrbench import pyparse
from lmrbench.authoring._cst import Located

MAX_MUTANTS = 25
_T = TypeVar("_T")

_DOCSTRING = m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString() | m.ConcatenatedString())])
_ADD_SUB = m.BinaryOperation(operator=m.Add() | m.Subtract())
_NEGATION = m.UnaryOperation(operator=m.Minus())
_AUG_ADD_SUB = m.AugAssign(operator=m.AddAssign() | m.SubtractAssign())
_RETURN_VALUE = m.Return(value=m.MatchIfTrue(lambda v: v is not None))
_SUBSCRIPT = m.SubscriptElement()
_MIN_MAX_NAMES = {"min": "max", "max": "min", "amin": "amax", "amax": "amin", "argmin": "argmax",
                  "argmax": "argmin", "minimum": "maximum", "maximum": "minimum", "nanmin": "nanmax",
                  "nanmax": "nanmin"}  # fmt: skip
_MIN_MAX_CALL = m.Call(
    func=m.Name(m.MatchIfTrue(lambda n: n in ("min", "max")))
    | m.Attribute(attr=m.Name(m.MatchIfTrue(lambda n: n in _MIN_MAX_NAMES)))
)
_REDUCTIONS = {"mean": "sum", "sum": "mean", "nanmean": "nansum", "nansum": "nanmean"}
_REDUCTION_CALL = m.Call(func=m.Attribute(attr=m.Name(m.MatchIfTrue(lambda n: n in _REDUCTIONS))))
_COMPARISONS: dict[type, tuple[str, type, str]] = {
    cst.LessThan: ("<", cst.LessThanEqual, "<="),
    cst.LessThanEqual: ("<=", cst.LessThan, "<"),
    cst.GreaterThan: (">", cst.GreaterThanEqual, ">="),
    cst.GreaterThanEqual: (">=", cst.GreaterThan, ">"),
}
_COMPARE = m.ComparisonTarget(
    operator=m.LessThan() | m.LessThanEqual() | m.GreaterThan() | m.GreaterThanEqual()
)
_ARRAY_MODULES = ("numpy", "torch")
_NEGATIVE_INTEGER = m.UnaryOperation(operator=m.Minus(), expression=m.Integer())
_INTEGER = m.Integer() | _NEGATIVE_INTEGER


@dataclass
class Mutant:
    """One mutant: what kind of change, where (in words), and the whole mutated file."""

    kind: str
    description: str
    source: str


@dataclass(frozen=True)
class _Edit:
    kind: str
    description: str
    old: cst.CSTNode
    new: cst.CSTNode


def _snippet(module: cst.Module, node: cst.CSTNode, limit: int = 48) -> str:
    text = " ".join(module.code_for_node(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _with_parens(node: cst.BaseExpression, like: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` wrapped in the parentheses that ``like`` had, so the grouping stays the same."""
    if not like.lpar:
        return node
    return node.with_changes(lpar=[*like.lpar, *node.lpar], rpar=[*node.rpar, *like.rpar])


def _body_statements(func: cst.FunctionDef) -> list[cst.CSTNode]:
    """The statements of the body after the docstring."""
    body = list(func.body.body)
    docstring = _DOCSTRING if isinstance(func.body, cst.IndentedBlock) else m.Expr(m.SimpleString())
    return body[1:] if body and m.matches(body[0], docstring) else body


def _params(func: cst.FunctionDef, in_class: bool) -> list[str]:
    names = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    if in_class and names and names[0] in ("self", "cls"):
        names = names[1:]
    return names


def _array_modules(source_tree: ast.Module) -> list[str]:
    """Names under which numpy / torch are imported at the top of the file (``np``, ``torch``...)."""
    found: list[str] = []
    for node in source_tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in _ARRAY_MODULES:
                    found.append(alias.asname or alias.name)
    return found


def _replace_body(func: cst.FunctionDef, statement: str) -> cst.FunctionDef:
    """``func`` with everything after its docstring replaced by one statement."""
    new = cst.parse_statement(statement)
    assert isinstance(new, cst.SimpleStatementLine)
    replaced = {id(s) for s in _body_statements(func)}
    kept = [s for s in func.body.body if id(s) not in replaced]
    if isinstance(func.body, cst.SimpleStatementSuite):
        return func.with_changes(body=func.body.with_changes(body=[*kept, *new.body]))
    return func.with_changes(body=func.body.with_changes(body=[*kept, new], footer=()))


def _whole_body_edits(func: cst.FunctionDef, params: list[str], arrays: list[str]) -> dict[str, list[_Edit]]:
    """Edits that replace the whole body (after the docstring) with one return statement."""
    returns = {"constant_return": ["None", "0"], "return_input": params[:3]}
    if params:
        returns["constant_return"] += [f"{mod}.zeros_like({params[0]})" for mod in arrays]
    edits: dict[str, list[_Edit]] = {}
    for kind, values in returns.items():
        what = "the input {} unchanged" if kind == "return_input" else "{} instead of the body"
        edits[kind] = [
            _Edit(kind, "return " + what.format(v), func, _replace_body(func, f"return {v}")) for v in values
        ]
    return edits


def _flip_add_sub(module: cst.Module, node: cst.BinaryOperation) -> Iterator[_Edit]:
    text = _snippet(module, node)
    for keep, drop in ((node.left, node.right), (node.right, node.left)):
        description = f"drop {_snippet(module, drop)!r} from {text!r}"
        yield _Edit("drop_term", description, node, _with_parens(keep, node))
    op = cast(cst.Add | cst.Subtract, node.operator)
    flipped = (cst.Subtract if isinstance(op, cst.Add) else cst.Add)(
        whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after
    )
    yield _Edit("flip_sign", f"flip + and - in {text!r}", node, node.with_changes(operator=flipped))


def _drop_minus(module: cst.Module, node: cst.UnaryOperation) -> Iterator[_Edit]:
    new = _with_parens(node.expression, node)
    yield _Edit("flip_sign", f"drop the minus of {_snippet(module, node)!r}", node, new)


def _flip_aug_assign(module: cst.Module, node: cst.AugAssign) -> Iterator[_Edit]:
    op = cast(cst.AddAssign | cst.SubtractAssign, node.operator)
    flipped = (cst.SubtractAssign if isinstance(op, cst.AddAssign) else cst.AddAssign)(
        whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after
    )
    text = _snippet(module, node)
    yield _Edit("flip_sign", f"flip += and -= in {text!r}", node, node.with_changes(operator=flipped))


def _negate_return(module: cst.Module, node: cst.Return) -> Iterator[_Edit]:
    assert node.value is not None
    value = cst.parse_expression(f"-({module.code_for_node(node.value)})")
    yield _Edit("flip_sign", f"negate {_snippet(module, node)!r}", node, node.with_changes(value=value))


def _plus_one(expr: cst.BaseExpression | None) -> tuple[cst.BaseExpression, str] | None:
    """The expression one more (``2`` -> ``3``, ``-1`` -> ``0``, ``n`` -> ``n + 1``), and how it changed."""
    if expr is None:
        return None
    if m.matches(expr, m.Integer()):
        assert isinstance(expr, cst.Integer)
        value = int(expr.value.replace("_", ""), 0)
        return cst.Integer(str(value + 1)), f"{expr.value} becomes {value + 1}"
    if m.matches(expr, _NEGATIVE_INTEGER):
        assert isinstance(expr, cst.UnaryOperation) and isinstance(expr.expression, cst.Integer)
        value = int(expr.expression.value.replace("_", ""), 0)
        new = cst.parse_expression(str(1 - value))
        return new, f"-{value} becomes {1 - value}"
    if m.matches(expr, m.Name() | m.Attribute() | m.Call() | m.BinaryOperation()):
        assert isinstance(expr, cst.BaseExpression)
        left = expr
        if m.matches(expr, m.BinaryOperation(lpar=[])):
            left = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return cst.BinaryOperation(left=left, operator=cst.Add(), right=cst.Integer("1")), "+ 1"
    return None


def _off_by_one(module: cst.Module, node: cst.SubscriptElement) -> Iterator[_Edit]:
    text = _snippet(module, node)
    sl = node.slice
    changes: list[tuple[cst.BaseSlice, str]] = []
    if m.matches(sl, m.Index(value=_INTEGER)):
        assert isinstance(sl, cst.Index)
        changed = _plus_one(sl.value)
        if changed:
            changes.append((sl.with_changes(value=changed[0]), f"index {changed[1]}"))
    elif m.matches(sl, m.Slice()):
        assert isinstance(sl, cst.Slice)
        for name, bound in (("lower", sl.lower), ("upper", sl.upper)):
            changed = _plus_one(bound)
            if changed:
                changes.append((sl.with_changes(**{name: changed[0]}), f"{name} bound {changed[1]}"))
    for new, what in changes:
        yield _Edit("off_by_one", f"{what} in [{text}]", node, node.with_changes(slice=new))


def _swap_min_max(module: cst.Module, node: cst.Call) -> Iterator[_Edit]:
    func = node.func
    if isinstance(func, cst.Name):
        new_func: cst.BaseExpression = func.with_changes(value=_MIN_MAX_NAMES[func.value])
    else:
        assert isinstance(func, cst.Attribute)
        new_func = func.with_changes(attr=func.attr.with_changes(value=_MIN_MAX_NAMES[func.attr.value]))
    text = _snippet(module, node)
    yield _Edit("swap_min_max", f"swap min and max in {text!r}", node, node.with_changes(func=new_func))


def _swap_reduction(module: cst.Module, node: cst.Call) -> Iterator[_Edit]:
    func = cst.ensure_type(node.func, cst.Attribute)
    new_func = func.with_changes(attr=func.attr.with_changes(value=_REDUCTIONS[func.attr.value]))
    text = _snippet(module, node)
    yield _Edit("swap_reduction", f"swap mean and sum in {text!r}", node, node.with_changes(func=new_func))


def _loosen_comparison(module: cst.Module, node: cst.ComparisonTarget) -> Iterator[_Edit]:
    op = cast(cst.LessThan | cst.LessThanEqual | cst.GreaterThan | cst.GreaterThanEqual, node.operator)
    old_symbol, new_class, new_symbol = _COMPARISONS[type(op)]
    new_op = new_class(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)
    description = f"{old_symbol} becomes {new_symbol} in {_snippet(module, node)!r}"
    yield _Edit("compare", description, node, node.with_changes(operator=new_op))


_Rule = Callable[[cst.Module, Any], Iterator[_Edit]]
_RULES: tuple[tuple[m.BaseMatcherNode, _Rule], ...] = (
    (_ADD_SUB, _flip_add_sub),
    (_NEGATION, _drop_minus),
    (_AUG_ADD_SUB, _flip_aug_assign),
    (_RETURN_VALUE, _negate_return),
    (_SUBSCRIPT, _off_by_one),
    (_MIN_MAX_CALL, _swap_min_max),
    (_REDUCTION_CALL, _swap_reduction),
    (_COMPARE, _loosen_comparison),
)
_ANY_SITE = m.OneOf(*(matcher for matcher, _ in _RULES))


def _site_edits(module: cst.Module, func: cst.FunctionDef) -> dict[str, list[_Edit]]:
    """Edits at single sites of the body (after the docstring), by kind, in source order."""
    edits: dict[str, list[_Edit]] = {}
    for stmt in _body_statements(func):
        for node in m.findall(stmt, _ANY_SITE):
            for matcher, rule in _RULES:
                if m.matches(node, matcher):
                    for edit in rule(module, node):
                        edits.setdefault(edit.kind, []).append(edit)
    return edits


def _round_robin(groups: list[list[_T]]) -> Iterator[_T]:
    """Items of the groups taking turns: a1, b1, c1, a2, b2, ..."""
    longest = max((len(g) for g in groups), default=0)
    for i in range(longest):
        for group in groups:
            if i < len(group):
                yield group[i]


KINDS = (
    "constant_return",
    "return_input",
    "drop_term",
    "flip_sign",
    "off_by_one",
    "swap_min_max",
    "swap_reduction",
    "compare",
)


def generate_mutants(
    source: str, qualname: str, *, file: str = "<source>", limit: int = MAX_MUTANTS
) -> list[Mutant]:
    """Up to ``limit`` mutants of one function, each a whole-file source with one change in its body.

    LmrError (naming the file) for a syntax error or an unknown function.
    """
    located = Located(source, file, [qualname])
    arrays = _array_modules(pyparse.parse(source))
    is_method = any(i.is_method for i in located.index if i.qualname == qualname)
    by_kind: dict[str, list[tuple[cst.FunctionDef, _Edit]]] = {k: [] for k in KINDS}
    for which, func in enumerate(located.defs(qualname)):
        module = located.module_of(qualname, which)
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        offset = located.line_offset(qualname, which)
        whole = _whole_body_edits(func, _params(func, is_method), arrays)
        for kind, edits in whole.items():
            by_kind[kind].extend((func, e) for e in edits)
        for kind, edits in _site_edits(module, func).items():
            for e in edits:
                line = positions[e.old].start.line + offset
                by_kind[kind].append((func, replace(e, description=f"line {line}: {e.description}")))
    seen = {source}
    out: list[Mutant] = []
    for func, edit in _round_robin(list(by_kind.values())):
        if len(out) >= limit:
            break
        new = edit.new if edit.old is func else func.deep_replace(edit.old, edit.new)
        try:
            new_func = cst.ensure_type(new, cst.FunctionDef)
            text = located.rebuild({id(func): new_func})
            pyparse.parse(text)
        except (SyntaxError, ValueError, cst.CSTValidationError):
            continue
        if text not in seen:
            seen.add(text)
            out.append(Mutant(kind=edit.kind, description=edit.description, source=text))
    return out
