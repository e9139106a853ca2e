"""The first mutant kinds, and what every kind shares: an edit, where it is, the body after the docstring.

Whole-body edits (a constant return, an input returned unchanged) and single-site edits: a dropped term of a sum
or difference (an offset, ``drop_offset``, when the term is a name or an attribute: ``x - w`` as ``x``), a
flipped sign, an index or slice bound off by one, ``min``/``max`` swapped, a reduction swapped
(``mean``/``sum``/``max``), a comparison loosened. Each rule takes a matched node and yields edits.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import libcst as cst
import libcst.matchers as m

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
_REDUCTIONS = {"mean": ("sum", "max"), "sum": ("mean", "max"), "nanmean": ("nansum", "nanmax", "mean"),
               "nansum": ("nanmean", "nanmax", "sum")}
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
_OFFSET = m.Name(m.MatchIfTrue(lambda n: n not in ("True", "False", "None"))) | m.Attribute()
"""A term whose drop is an offset dropped (``step - warmup`` as ``step``): a name or an attribute chain."""


@dataclass(frozen=True)
class Edit:
    """One change: its kind, what it does in words, the node replaced and its replacement."""

    kind: str
    description: str
    old: cst.CSTNode
    new: cst.CSTNode
    pinned: str = ""
    """For ``pin_parameter``: the parameter pinned."""


def snippet(module: cst.Module, node: cst.CSTNode, limit: int = 48) -> str:
    text = " ".join(module.code_for_node(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def with_parens(node: cst.BaseExpression, like: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` wrapped in the parentheses that ``like`` had, so the grouping stays the same."""
    if not like.lpar:
        return node
    return node.with_changes(lpar=[*like.lpar, *node.lpar], rpar=[*node.rpar, *like.rpar])


def body_statements(func: cst.FunctionDef) -> list[cst.CSTNode]:
    """The statements of the body after the docstring."""
    body = list(func.body.body)
    docstring = _DOCSTRING if isinstance(func.body, cst.IndentedBlock) else m.Expr(m.SimpleString())
    return body[1:] if body and m.matches(body[0], docstring) else body


def params_of(func: cst.FunctionDef, in_class: bool) -> list[str]:
    names = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    if in_class and names and names[0] in ("self", "cls"):
        names = names[1:]
    return names


def array_modules(source_tree: ast.Module) -> list[str]:
    """Names under which numpy / torch are imported at the top of the file (``np``, ``torch``...)."""
    found: list[str] = []
    for node in source_tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in _ARRAY_MODULES:
                    found.append(alias.asname or alias.name)
    return found


def replace_body(func: cst.FunctionDef, statement: str) -> cst.FunctionDef:
    """``func`` with everything after its docstring replaced by one statement."""
    new = cst.parse_statement(statement)
    assert isinstance(new, cst.SimpleStatementLine)
    replaced = {id(s) for s in body_statements(func)}
    kept = [s for s in func.body.body if id(s) not in replaced]
    if isinstance(func.body, cst.SimpleStatementSuite):
        return func.with_changes(body=func.body.with_changes(body=[*kept, *new.body]))
    return func.with_changes(body=func.body.with_changes(body=[*kept, new], footer=()))


def whole_body_edits(func: cst.FunctionDef, params: list[str], arrays: list[str]) -> dict[str, list[Edit]]:
    """Edits that replace the whole body (after the docstring) with one return statement."""
    returns = {"constant_return": ["None", "0"], "return_input": params[:3]}
    if params:
        returns["constant_return"] += [f"{mod}.zeros_like({params[0]})" for mod in arrays]
    edits: dict[str, list[Edit]] = {}
    for kind, values in returns.items():
        what = "the input {} unchanged" if kind == "return_input" else "{} instead of the body"
        edits[kind] = [
            Edit(kind, "return " + what.format(v), func, replace_body(func, f"return {v}")) for v in values
        ]
    return edits


def _flip_add_sub(module: cst.Module, node: cst.BinaryOperation) -> Iterator[Edit]:
    text = snippet(module, node)
    for keep, drop in ((node.left, node.right), (node.right, node.left)):
        description = f"drop {snippet(module, drop)!r} from {text!r}"
        kind = "drop_offset" if m.matches(drop, _OFFSET) else "drop_term"
        yield Edit(kind, description, node, with_parens(keep, node))
    op = cast(cst.Add | cst.Subtract, node.operator)
    flipped = (cst.Subtract if isinstance(op, cst.Add) else cst.Add)(
        whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after
    )
    yield Edit("flip_sign", f"flip + and - in {text!r}", node, node.with_changes(operator=flipped))


def _drop_minus(module: cst.Module, node: cst.UnaryOperation) -> Iterator[Edit]:
    new = with_parens(node.expression, node)
    yield Edit("flip_sign", f"drop the minus of {snippet(module, node)!r}", node, new)


def _flip_aug_assign(module: cst.Module, node: cst.AugAssign) -> Iterator[Edit]:
    op = cast(cst.AddAssign | cst.SubtractAssign, node.operator)
    flipped = (cst.SubtractAssign if isinstance(op, cst.AddAssign) else cst.AddAssign)(
        whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after
    )
    text = snippet(module, node)
    yield Edit("flip_sign", f"flip += and -= in {text!r}", node, node.with_changes(operator=flipped))


def _negate_return(module: cst.Module, node: cst.Return) -> Iterator[Edit]:
    assert node.value is not None
    value = cst.parse_expression(f"-({module.code_for_node(node.value)})")
    yield Edit("flip_sign", f"negate {snippet(module, node)!r}", node, node.with_changes(value=value))


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


def _off_by_one(module: cst.Module, node: cst.SubscriptElement) -> Iterator[Edit]:
    text = snippet(module, node)
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
        yield Edit("off_by_one", f"{what} in [{text}]", node, node.with_changes(slice=new))


def _swap_min_max(module: cst.Module, node: cst.Call) -> Iterator[Edit]:
    func = node.func
    if isinstance(func, cst.Name):
        new_func: cst.BaseExpression = func.with_changes(value=_MIN_MAX_NAMES[func.value])
    else:
        assert isinstance(func, cst.Attribute)
        new_func = func.with_changes(attr=func.attr.with_changes(value=_MIN_MAX_NAMES[func.attr.value]))
    text = snippet(module, node)
    yield Edit("swap_min_max", f"swap min and max in {text!r}", node, node.with_changes(func=new_func))


def _swap_reduction(module: cst.Module, node: cst.Call) -> Iterator[Edit]:
    func = cst.ensure_type(node.func, cst.Attribute)
    text = snippet(module, node)
    for other in _REDUCTIONS[func.attr.value]:
        new_func = func.with_changes(attr=func.attr.with_changes(value=other))
        description = f"{func.attr.value} becomes {other} in {text!r}"
        yield Edit("swap_reduction", description, node, node.with_changes(func=new_func))


def _loosen_comparison(module: cst.Module, node: cst.ComparisonTarget) -> Iterator[Edit]:
    op = cast(cst.LessThan | cst.LessThanEqual | cst.GreaterThan | cst.GreaterThanEqual, node.operator)
    old_symbol, new_class, new_symbol = _COMPARISONS[type(op)]
    new_op = new_class(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)
    description = f"{old_symbol} becomes {new_symbol} in {snippet(module, node)!r}"
    yield Edit("compare", description, node, node.with_changes(operator=new_op))


Rule = Callable[[cst.Module, Any], Iterator[Edit]]
RULES: tuple[tuple[m.BaseMatcherNode, Rule], ...] = (
    (_ADD_SUB, _flip_add_sub),
    (_NEGATION, _drop_minus),
    (_AUG_ADD_SUB, _flip_aug_assign),
    (_RETURN_VALUE, _negate_return),
    (_SUBSCRIPT, _off_by_one),
    (_MIN_MAX_CALL, _swap_min_max),
    (_REDUCTION_CALL, _swap_reduction),
    (_COMPARE, _loosen_comparison),
)
