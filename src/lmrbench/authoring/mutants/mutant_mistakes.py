"""Mutant kinds shaped like the mistakes real wrong answers make.

A parameter pinned to its recorded or default value, an arithmetic operator swapped (``*``/``/``, ``**``,
``//``), a condition negated, a mask or ``where`` dropped, arguments of a call swapped, a constant or a term
scaled, a branch removed, an update of ``self`` dropped from a branch (a counter not reset on an overflow), a result
detached from the autograd graph, a ``dict.get`` taken as an index (a key taken to be there), a check for None
dropped from a condition. Each rule takes a matched node of the body and yields edits; ``pin_edits`` and
``detach`` depend on what the recording saw.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import libcst as cst
import libcst.matchers as m

from lmrbench.authoring.mutants.mutant_sites import Edit, Rule, body_statements, snippet, with_parens

_ARITH: dict[type, tuple[type, str, str]] = {cst.Multiply: (cst.Divide, "*", "/"), cst.Divide: (cst.Multiply, "/", "*"),
          cst.Power: (cst.Multiply, "**", "*"), cst.FloorDivide: (cst.Divide, "//", "/")}  # fmt: skip
_AUG_ARITH: dict[type, tuple[type, str, str]] = {
    cst.MultiplyAssign: (cst.DivideAssign, "*=", "/="), cst.DivideAssign: (cst.MultiplyAssign, "/=", "*=")}
_SWAPS: dict[type, tuple[type, str, str]] = {**_ARITH, **_AUG_ARITH}
_NEGATED: dict[type, tuple[type, str, str]] = {
    cst.Equal: (cst.NotEqual, "==", "!="), cst.NotEqual: (cst.Equal, "!=", "=="),
    cst.LessThan: (cst.GreaterThanEqual, "<", ">="), cst.GreaterThan: (cst.LessThanEqual, ">", "<="),
    cst.LessThanEqual: (cst.GreaterThan, "<=", ">"), cst.GreaterThanEqual: (cst.LessThan, ">=", "<"),
    cst.Is: (cst.IsNot, "is", "is not"), cst.IsNot: (cst.Is, "is not", "is"),
    cst.In: (cst.NotIn, "in", "not in"), cst.NotIn: (cst.In, "not in", "in"),
}  # fmt: skip
_ARITH_OP = m.BinaryOperation(operator=m.Multiply() | m.Divide() | m.Power() | m.FloorDivide())
_AUG_ARITH_OP = m.AugAssign(operator=m.MultiplyAssign() | m.DivideAssign())
_SINGLE_COMPARISON = m.Comparison(comparisons=[m.ComparisonTarget()])
_BOOL_OP = m.BooleanOperation()
_NOT = m.UnaryOperation(operator=m.Not())
_CONDITION = m.If() | m.IfExp()
_WHERE = m.Call(func=m.Name("where") | m.Attribute(attr=m.Name("where")), args=[m.Arg(), m.Arg(), m.Arg()])
_MASKED_FILL = m.Call(func=m.Attribute(attr=m.Name(m.MatchIfTrue(lambda n: n.startswith("masked_fill")))))
_MULTIPLY = m.BinaryOperation(operator=m.Multiply())
_SUBSCRIPT_ONE = m.Subscript(slice=[m.SubscriptElement(slice=m.Index())])
_POSITIONAL_CALL = m.Call(args=m.MatchIfTrue(lambda args: len(args) >= 2))
_FLOAT = m.Float()
_ADD_SUB = m.BinaryOperation(operator=m.Add() | m.Subtract())
_IF_STATEMENT = m.If(orelse=m.MatchIfTrue(lambda o: o is None or isinstance(o, cst.Else)))
_SELF_CHAIN = m.Attribute(value=m.Name("self") | m.Attribute(value=m.Name("self")) |
                           m.Attribute(value=m.Attribute(value=m.Name("self"))))
"""``self.x``, ``self.a.x``, ``self.a.b.x``: state a method keeps."""
_LITERAL = m.Integer() | m.Float() | m.SimpleString() | m.Name("True") | m.Name("False") | m.Name("None") | \
    m.UnaryOperation(operator=m.Minus(), expression=m.Integer() | m.Float())


def _swap_arith(module: cst.Module, node: cst.BinaryOperation | cst.AugAssign) -> Iterator[Edit]:
    op: Any = node.operator
    new_class, old, new = _SWAPS[type(op)]
    new_op = new_class(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)
    yield Edit("arith_swap", f"{old} becomes {new} in {snippet(module, node)!r}", node,
               node.with_changes(operator=new_op))


def _negate_comparison(module: cst.Module, node: cst.Comparison) -> Iterator[Edit]:
    target = node.comparisons[0]
    if type(target.operator) not in _NEGATED:
        return
    new_class, old, new = _NEGATED[type(target.operator)]
    op: Any = target.operator
    kwargs = {"whitespace_before": op.whitespace_before, "whitespace_after": op.whitespace_after}
    if hasattr(op, "whitespace_between"):
        kwargs.pop("whitespace_after")
    new_op = new_class(**kwargs) if new_class not in (cst.IsNot, cst.NotIn) else new_class()
    new_node = node.with_changes(comparisons=[target.with_changes(operator=new_op)])
    yield Edit("negate", f"{old} becomes {new} in {snippet(module, node)!r}", node, new_node)


def _swap_and_or(module: cst.Module, node: cst.BooleanOperation) -> Iterator[Edit]:
    op = node.operator
    ws = {"whitespace_before": op.whitespace_before, "whitespace_after": op.whitespace_after}
    new_op = cst.Or(**ws) if isinstance(op, cst.And) else cst.And(**ws)
    old, new = ("and", "or") if isinstance(op, cst.And) else ("or", "and")
    yield Edit("negate", f"{old} becomes {new} in {snippet(module, node)!r}", node, node.with_changes(operator=new_op))


def _drop_not(module: cst.Module, node: cst.UnaryOperation) -> Iterator[Edit]:
    yield Edit("negate", f"drop the not of {snippet(module, node)!r}", node, with_parens(node.expression, node))


def _negate_condition(module: cst.Module, node: cst.If | cst.IfExp) -> Iterator[Edit]:
    test = node.test
    if m.matches(test, _NOT | _SINGLE_COMPARISON):
        return  # the comparison and not rules already negate it
    negated = cst.parse_expression(f"not ({module.code_for_node(test)})")
    yield Edit("negate", f"negate the condition {snippet(module, test)!r}", node, node.with_changes(test=negated))


def _drop_where(module: cst.Module, node: cst.Call) -> Iterator[Edit]:
    text = snippet(module, node)
    for k, which in ((1, "where true"), (2, "where false")):
        kept = node.args[k].value
        yield Edit("drop_mask", f"drop the mask of {text!r} (keep the value {which})", node, kept)


def _drop_masked_fill(module: cst.Module, node: cst.Call) -> Iterator[Edit]:
    func = node.func
    assert isinstance(func, cst.Attribute)
    yield Edit("drop_mask", f"drop {snippet(module, node)!r}", node, func.value)


_MASK_VALUE = m.Comparison() | m.UnaryOperation(operator=m.BitInvert()) | \
    m.BinaryOperation(operator=m.BitAnd() | m.BitOr(), left=m.Comparison() | m.Name())


def _mask_names(module: cst.Module) -> set[str]:
    """Names the module assigns a comparison to (``valid = targets != ignore_index``): boolean masks."""
    found = m.findall(module, m.Assign(targets=[m.AssignTarget(target=m.Name())], value=_MASK_VALUE))
    return {cst.ensure_type(cst.ensure_type(a, cst.Assign).targets[0].target, cst.Name).value for a in found}


def _looks_like_mask(module: cst.Module, expr: cst.BaseExpression) -> bool:
    if m.matches(expr, m.Comparison()) or "mask" in module.code_for_node(expr).lower():
        return True
    return m.matches(expr, m.Name()) and cst.ensure_type(expr, cst.Name).value in _mask_names(module)


def _drop_mask_factor(module: cst.Module, node: cst.BinaryOperation) -> Iterator[Edit]:
    for mask, kept in ((node.right, node.left), (node.left, node.right)):
        if _looks_like_mask(module, mask):
            yield Edit("drop_mask", f"drop the mask {snippet(module, mask)!r} of {snippet(module, node)!r}", node,
                       with_parens(kept, node))


def _drop_mask_index(module: cst.Module, node: cst.Subscript) -> Iterator[Edit]:
    index = node.slice[0].slice
    assert isinstance(index, cst.Index)
    if _looks_like_mask(module, index.value):
        yield Edit("drop_mask", f"drop the mask of {snippet(module, node)!r}", node, with_parens(node.value, node))


_SYMMETRIC = {"max", "min", "maximum", "minimum", "fmax", "fmin", "add", "multiply", "logaddexp", "hypot",
              "logical_and", "logical_or", "logical_xor", "array_equal", "allclose", "isclose", "equal",
              "not_equal", "bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm",
              "transpose", "swapaxes", "swapdims"}  # fmt: skip
"""Calls whose first two arguments commute (``max(n, 1)``, ``x.transpose(1, 2)``) or whose swap is no answer
anyone writes (``np.swapaxes(x, 1, 2)`` as ``np.swapaxes(1, x, 2)``): no ``swap_args`` mutant, since no input
could tell it or it teaches nothing."""


def _swap_args(module: cst.Module, node: cst.Call) -> Iterator[Edit]:
    func = node.func
    called = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
    if called in _SYMMETRIC:
        return
    args = list(node.args)
    first, second = args[0], args[1]
    if first.keyword is not None or second.keyword is not None or first.star or second.star:
        return
    if module.code_for_node(first.value) == module.code_for_node(second.value):
        return
    args[0] = first.with_changes(value=second.value)
    args[1] = second.with_changes(value=first.value)
    description = f"swap the first two arguments of {snippet(module, node)!r}"
    yield Edit("swap_args", description, node, node.with_changes(args=args))


def _scale_float(module: cst.Module, node: cst.Float) -> Iterator[Edit]:
    value = float(node.value.replace("_", ""))
    if value != 0.0:
        yield Edit("scale_constant", f"{node.value} becomes {value * 2!r}", node, cst.Float(repr(value * 2)))


def _scale_term(module: cst.Module, node: cst.BinaryOperation) -> Iterator[Edit]:
    term = node.right
    if m.matches(term, m.Integer() | m.Float()):
        return
    scaled = cst.parse_expression(f"2 * ({module.code_for_node(term)})" if not m.matches(term, m.Name())
                                  else f"2 * {module.code_for_node(term)}")
    description = f"scale {snippet(module, term)!r} by 2 in {snippet(module, node)!r}"
    yield Edit("scale_constant", description, node, node.with_changes(right=scaled))


def _drop_if_branch(module: cst.Module, node: cst.If) -> Iterator[Edit]:
    test = snippet(module, node.test)
    body = list(node.body.body) if isinstance(node.body, cst.IndentedBlock) else []
    orelse = node.orelse
    if orelse is None:
        yield Edit("drop_branch", f"drop the branch `if {test}`", node, cst.RemovalSentinel.REMOVE)  # type: ignore[arg-type]
        return
    other = list(orelse.body.body) if isinstance(orelse.body, cst.IndentedBlock) else []
    if other:
        yield Edit("drop_branch", f"drop the branch `if {test}` (always the else)", node,
                   cst.FlattenSentinel(other))  # type: ignore[arg-type]
    if body:
        yield Edit("drop_branch", f"drop the else of `if {test}` (always the if)", node,
                   cst.FlattenSentinel(body))  # type: ignore[arg-type]


def _state_update(stmt: cst.CSTNode) -> bool:
    """True for ``self.x = ...``, ``self.cfg.n += ...``: one statement that sets state of ``self``."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    small = stmt.body[0]
    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
        [small.target] if isinstance(small, cst.AugAssign) else []
    return bool(targets) and all(m.matches(t, _SELF_CHAIN) for t in targets)


def _without(block: cst.BaseSuite, stmt: cst.CSTNode) -> cst.BaseSuite:
    rest = [s for s in block.body if s is not stmt] if isinstance(block, cst.IndentedBlock) else []
    return block.with_changes(body=rest or [cst.SimpleStatementLine([cst.Pass()])])


def _drop_update(module: cst.Module, node: cst.If) -> Iterator[Edit]:
    """Each update of ``self`` in the branch or the else of ``node``, dropped: state a branch the driver seldom
    takes must set (a count of good steps reset on an overflow, a tolerance restored on a growth)."""
    test = snippet(module, node.test)
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
    for stmt in body:
        if _state_update(stmt):
            yield Edit("drop_update", f"drop the update `{snippet(module, stmt)}` under `if {test}`", node,
                       node.with_changes(body=_without(node.body, stmt)))
    orelse = node.orelse
    if isinstance(orelse, cst.Else) and isinstance(orelse.body, cst.IndentedBlock):
        for stmt in orelse.body.body:
            if _state_update(stmt):
                yield Edit("drop_update", f"drop the update `{snippet(module, stmt)}` under the else of `if {test}`",
                           node, node.with_changes(orelse=orelse.with_changes(body=_without(orelse.body, stmt))))


def _drop_ifexp_branch(module: cst.Module, node: cst.IfExp) -> Iterator[Edit]:
    test = snippet(module, node.test)
    yield Edit("drop_branch", f"drop the branch `if {test}` (always the else)", node, with_parens(node.orelse, node))
    yield Edit("drop_branch", f"drop the else of `if {test}` (always the if)", node, with_parens(node.body, node))


_GET = m.Call(func=m.Attribute(value=m.Name() | m.Attribute(), attr=m.Name("get")),
              args=m.MatchIfTrue(lambda args: 1 <= len(args) <= 2 and all(a.keyword is None for a in args)))


def _strict_get(module: cst.Module, node: cst.Call) -> Iterator[Edit]:
    """``grads.get(name)`` as ``grads[name]``: a key taken to be there (KeyError where the caller leaves one out,
    a parameter with no gradient); the same while every key is present. Only for a key the body computes (a name
    it loops over): a literal key (``scaling.get("factor")``) is a setting, whose absence the search tries as an
    unset setting, and no input removes a key the caller passes."""
    owner = cst.ensure_type(node.func, cst.Attribute).value
    key = node.args[0].value
    if isinstance(key, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString | cst.Integer):
        return
    yield Edit("strict_get", f"index for {snippet(module, node)!r}", node,
               cst.Subscript(value=owner, slice=[cst.SubscriptElement(slice=cst.Index(value=key))]))


_NONE_TEST = m.Comparison(comparisons=[m.ComparisonTarget(operator=m.Is() | m.IsNot(), comparator=m.Name("None"))])


def _drop_none_check(module: cst.Module, node: cst.BooleanOperation) -> Iterator[Edit]:
    """``start is not None and epoch >= start`` as ``epoch >= start`` (``x is None or x < 0`` as ``x < 0``): a
    setting taken to be set, which fails (or takes the other path) where the caller leaves it None."""
    joins = {cst.And: cst.IsNot, cst.Or: cst.Is}
    for check, other in ((node.left, node.right), (node.right, node.left)):
        if m.matches(check, _NONE_TEST) and isinstance(
                cst.ensure_type(check, cst.Comparison).comparisons[0].operator, joins[type(node.operator)]):
            yield Edit("drop_none_check", f"drop the check {snippet(module, check)!r}", node,
                       with_parens(other, node))


RULES: tuple[tuple[m.BaseMatcherNode, Rule], ...] = (
    (_GET, _strict_get),
    (m.BooleanOperation(operator=m.And() | m.Or()), _drop_none_check),
    (_ARITH_OP, _swap_arith),
    (_AUG_ARITH_OP, _swap_arith),
    (_SINGLE_COMPARISON, _negate_comparison),
    (_BOOL_OP, _swap_and_or),
    (_NOT, _drop_not),
    (_CONDITION, _negate_condition),
    (_WHERE, _drop_where),
    (_MASKED_FILL, _drop_masked_fill),
    (_MULTIPLY, _drop_mask_factor),
    (_SUBSCRIPT_ONE, _drop_mask_index),
    (_POSITIONAL_CALL, _swap_args),
    (_FLOAT, _scale_float),
    (_ADD_SUB, _scale_term),
    (_IF_STATEMENT, _drop_if_branch),
    (m.IfExp(), _drop_ifexp_branch),
    (m.If(), _drop_update),
)
"""(matcher, rule) of the single-site kinds of this module."""


def literal_defaults(module: cst.Module, func: cst.FunctionDef) -> dict[str, str]:
    """Parameters with a literal default, and the default's source (``label_smoothing`` -> ``0.0``)."""
    out: dict[str, str] = {}
    for p in (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params):
        if p.default is not None and m.matches(p.default, _LITERAL):
            out[p.name.value] = module.code_for_node(p.default)
    return out


def pin_edits(module: cst.Module, func: cst.FunctionDef, params: list[str], pins: dict[str, str]) -> list[Edit]:
    """One edit per parameter the body uses: the parameter pinned to its recorded value (``pins``) and to its
    literal default, where they differ; the body then starts ``beta = 0.1``."""
    statements = body_statements(func)
    used = {cst.ensure_type(n, cst.Name).value for s in statements for n in m.findall(s, m.Name())}
    defaults = literal_defaults(module, func)
    edits: list[Edit] = []
    for name in params:
        if name not in used:
            continue
        values: dict[str, str] = {}
        if name in pins:
            values[pins[name]] = "its recorded value"
        if name in defaults:
            values.setdefault(defaults[name], "its default")
        for value, why in values.items():
            edits.append(Edit("pin_parameter", f"pin {name} to {value} ({why})", func,
                              _prepend(func, f"{name} = {value}"), pinned=name))
    return edits


def _prepend(func: cst.FunctionDef, statement: str) -> cst.FunctionDef:
    """``func`` with one statement put before its body (after the docstring)."""
    new = cst.parse_statement(statement)
    body = list(func.body.body)
    first = body.index(body_statements(func)[0]) if body_statements(func) else len(body)
    body.insert(first, new)
    if isinstance(func.body, cst.SimpleStatementSuite):
        return func.with_changes(body=cst.IndentedBlock(body=body))  # type: ignore[arg-type]
    return func.with_changes(body=func.body.with_changes(body=body))


def detach_edits(module: cst.Module, func: cst.FunctionDef) -> list[Edit]:
    """The returned value (each element of a returned tuple) detached from the autograd graph."""
    edits: list[Edit] = []
    for stmt in body_statements(func):
        for node in m.findall(stmt, m.Return(value=m.MatchIfTrue(lambda v: v is not None))):
            assert isinstance(node, cst.Return) and node.value is not None
            value = node.value
            parts = list(value.elements) if isinstance(value, cst.Tuple) else [None]
            for k, element in enumerate(parts[:3]):
                target = value if element is None else element.value
                code = module.code_for_node(target)
                detached = cst.parse_expression(f"({code}).detach()" if not m.matches(target, m.Name())
                                                else f"{code}.detach()")
                if element is None:
                    new_value: cst.BaseExpression = detached
                else:
                    elements = list(value.elements)  # type: ignore[attr-defined]
                    elements[k] = element.with_changes(value=detached)
                    new_value = value.with_changes(elements=elements)
                edits.append(Edit("detach", f"detach {snippet(module, target)!r} from the autograd graph",
                                  node, node.with_changes(value=new_value)))
    return edits
