"""Mutant kinds of control flow, guards and configuration: the mistakes that slip past tests of one call shape.

A branch forced each way (``if alpha >= 0`` always or never taken, ``elif`` arms included), a guard or clamp
dropped (``max(num_fg, 1)`` as ``num_fg``, ``np.clip(x, 0, 1)`` as ``x``), the default path of an optional
argument taken always or never (``if labels is None``), the axis of a reduction changed (``sum(axis=1)`` as
``sum(axis=0)``), a copy dropped (``value.copy()`` as ``value``: state that aliases its caller's array), a power
dropped (``target ** 2`` as ``target``: equal wherever the values are 0 and 1), a wrap dropped (``(ptr + i) % size``
as ``ptr + i``: equal until an index passes the end), the sign of zero taken as +1 (``np.sign(x)`` as ``np.where(x >= 0,
1.0, -1.0)``: equal until an entry is exactly zero), a change in place made a new array (``self.u[...] = u`` as
``self.u = u``: equal by value, wrong where something else holds the array), an axis never moved into place
(``np.moveaxis(w, dim, 0)`` as ``w``); ``helper_names`` finds the helpers
whose chains ``mutant_pins`` pins too. Each rule takes a matched node of the body and yields edits;
``default_path_edits`` needs the function's defaults.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping

import libcst as cst
import libcst.matchers as m

from lmrbench.authoring.mutants.mutant_sites import Edit, Rule, body_statements, snippet, with_parens

_IF = m.If()
_GUARDS = {"max", "min", "maximum", "minimum", "fmax", "fmin"}
"""Calls of two arguments that bound one by the other (``max(num_fg, 1)``)."""
_CLAMPS = {"clip", "clamp", "clamp_min", "clamp_max", "clip_by_value"}
_MODULE_NAMES = {"np", "numpy", "torch", "jnp", "jax", "tf", "F", "math", "scipy"}
_BOUND_WORDS = ("eps", "tiny", "min", "max", "floor", "clip", "lo", "hi")
_GUARD_CALL = m.Call(func=m.Name(m.MatchIfTrue(lambda n: n in _GUARDS | _CLAMPS))
                     | m.Attribute(attr=m.Name(m.MatchIfTrue(lambda n: n in _GUARDS | _CLAMPS))))
_AXIS_REDUCTIONS = {"sum", "mean", "max", "min", "prod", "std", "var", "logsumexp", "softmax", "log_softmax",
                    "argmax", "argmin", "cumsum", "cumprod", "norm", "any", "all", "nansum", "nanmean", "amax",
                    "amin", "median", "count_nonzero", "cat", "concatenate", "stack"}  # fmt: skip
_AXIS_CALL = m.Call(func=m.Attribute(attr=m.Name(m.MatchIfTrue(lambda n: n in _AXIS_REDUCTIONS))))
"""A reduction of an array module or method (``np.sum(x, 1)``, ``x.sum(axis=1)``; not the builtin ``max``)."""
_INT = m.Integer() | m.UnaryOperation(operator=m.Minus(), expression=m.Integer())
_ATOM = m.Name() | m.Attribute() | m.Call() | m.Subscript() | m.Integer() | m.Float() | m.SimpleString()


def _elif_arms(module: cst.Module) -> set[int]:
    """Ids of the ``If`` nodes that are ``elif`` arms of another ``if``."""
    arms: set[int] = set()
    for node in m.findall(module, m.If(orelse=m.If())):
        arms.add(id(cst.ensure_type(node, cst.If).orelse))
    return arms


def _forced(node: cst.If | cst.IfExp, holds: bool, arm: bool) -> cst.CSTNode:
    """The node with its test forced to ``holds``, written as an answer without the test would be: the branch
    taken (or the else) in its place, nothing for a branch never taken without an else; ``if True:`` only for
    the arms of an ``elif`` chain, which cannot be flattened in place."""
    if isinstance(node, cst.IfExp):
        return with_parens(node.body if holds else node.orelse, node)
    if arm or isinstance(node.orelse, cst.If):
        return node.with_changes(test=cst.Name(str(holds)))
    block = node.body if holds else node.orelse.body if node.orelse is not None else None
    if block is None:
        return cst.RemovalSentinel.REMOVE  # type: ignore[return-value]
    statements = list(block.body) if isinstance(block, cst.IndentedBlock) else []
    return cst.FlattenSentinel(statements) if statements else node.with_changes(test=cst.Name(str(holds)))  # type: ignore[return-value]


def _force_branch(module: cst.Module, node: cst.If) -> Iterator[Edit]:
    """``if test:`` always or never taken where ``drop_branch`` does not make it: an ``if`` without ``else``
    always taken (never taken is ``drop_branch``'s), the head of an ``elif`` chain and its arms each way."""
    arm = id(node) in _elif_arms(module)
    test = snippet(module, node.test)
    ways = [(True, "always"), (False, "never")] if arm or isinstance(node.orelse, cst.If) else \
        [(True, "always")] if node.orelse is None else []
    for holds, how in ways:
        yield Edit("force_branch", f"the branch `if {test}` {how} taken", node, _forced(node, holds, arm))


def _is_bound(module: cst.Module, expr: cst.BaseExpression) -> bool:
    """A value that bounds another: a number, or a name or attribute that reads like one (``eps``, ``min_n``)."""
    if m.matches(expr, m.Integer() | m.Float() | m.UnaryOperation(operator=m.Minus(),
                                                                   expression=m.Integer() | m.Float())):
        return True
    if m.matches(expr, m.Name() | m.Attribute()):
        last = module.code_for_node(expr).rsplit(".", 1)[-1].lower()
        return any(word in last for word in _BOUND_WORDS)
    return False


def _grouped(module: cst.Module, expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` in parentheses unless it is an atom, so that it can stand where a call stood."""
    if m.matches(expr, _ATOM) or expr.lpar:
        return expr
    return cst.parse_expression(f"({module.code_for_node(expr)})")


def _drop_guard(module: cst.Module, node: cst.Call) -> Iterator[Edit]:
    """``max(num_fg, 1)`` as ``num_fg``; ``np.clip(x, lo, hi)``, ``x.clamp(min=0)`` as ``x``."""
    func = node.func
    name = func.value if isinstance(func, cst.Name) else cst.ensure_type(func, cst.Attribute).attr.value
    positional = [a for a in node.args if a.keyword is None and not a.star]
    text = snippet(module, node)
    module_call = isinstance(func, cst.Name) or (isinstance(func, cst.Attribute)
                                                  and m.matches(func.value, m.Name())
                                                  and cst.ensure_type(func.value, cst.Name).value in _MODULE_NAMES)
    if name in _CLAMPS:
        if module_call and positional:
            kept: cst.BaseExpression = positional[0].value
        elif not module_call and isinstance(func, cst.Attribute):
            kept = func.value
        else:
            return
        yield Edit("drop_guard", f"drop the clamp {text!r}", node, _grouped(module, kept))
        return
    args = positional if module_call else []
    if len(args) != 2 or len(node.args) != 2:
        return
    for bound, other in ((args[1].value, args[0].value), (args[0].value, args[1].value)):
        if _is_bound(module, bound) and not _is_bound(module, other):
            yield Edit("drop_guard", f"drop the guard {snippet(module, bound)!r} of {text!r}", node,
                       _grouped(module, other))


def _axis_arg(node: cst.Call) -> int | None:
    """The index in ``node.args`` of the axis of a reduction: ``axis=``/``dim=``, or the first positional
    argument of a method (``x.sum(1)``) or the second of a module function (``np.sum(x, 1)``)."""
    for k, arg in enumerate(node.args):
        if arg.keyword is not None and arg.keyword.value in ("axis", "dim"):
            return k
    func = node.func
    module_call = isinstance(func, cst.Name) or (isinstance(func, cst.Attribute) and m.matches(func.value, m.Name())
                                                  and cst.ensure_type(func.value, cst.Name).value in _MODULE_NAMES)
    k = 1 if module_call else 0
    if len(node.args) > k and node.args[k].keyword is None and not node.args[k].star:
        return k
    return None


def _change_axis(module: cst.Module, node: cst.Call) -> Iterator[Edit]:
    """The axis of a reduction changed where the body reduces: ``-1``/``1``/``2`` as ``0``, ``0`` as ``-1``."""
    k = _axis_arg(node)
    if k is None or not m.matches(node.args[k].value, _INT):
        return
    old = module.code_for_node(node.args[k].value)
    new = "-1" if old.strip() == "0" else "0"
    args = list(node.args)
    args[k] = args[k].with_changes(value=cst.parse_expression(new))
    yield Edit("change_axis", f"axis {old} becomes {new} in {snippet(module, node)!r}", node,
               node.with_changes(args=args))


_INNER = {"max", "min", "any", "all", "amax", "amin", "sum"}
"""Reductions whose dropping keeps a plausible program when their result is compared or reduced again."""


def _drop_reduction(module: cst.Module, node: cst.Call) -> Iterator[Edit]:
    """A reduction along an axis of a method (``targets.max(axis=1)``) dropped where its result is compared
    (``(targets.max(axis=1) > 0).sum()`` as ``(targets > 0).sum()``): counting entries where rows were meant."""
    func = cst.ensure_type(node.func, cst.Attribute)
    if func.attr.value not in _INNER or _axis_arg(node) is None or m.matches(func.value, m.Name()) and \
            cst.ensure_type(func.value, cst.Name).value in _MODULE_NAMES:
        return
    compared = any(side is node for c in m.findall(module, m.Comparison()) if isinstance(c, cst.Comparison)
                   for side in (c.left, *(t.comparator for t in c.comparisons)))
    if compared:
        yield Edit("drop_reduction", f"drop the reduction {snippet(module, node)!r}", node,
                   _grouped(module, func.value))


_COPIES = {"copy", "clone", "deepcopy", "array"}
_COPY_CALL = m.Call(func=m.Name(m.MatchIfTrue(lambda n: n in ("deepcopy", "copy")))
                    | m.Attribute(attr=m.Name(m.MatchIfTrue(lambda n: n in _COPIES))))


def _drop_copy(module: cst.Module, node: cst.Call) -> Iterator[Edit]:
    """A copy dropped: ``value.copy()``, ``x.clone()``, ``np.copy(x)``, ``np.array(x, copy=True)``,
    ``copy.deepcopy(x)`` as the value itself, so the result or the state it goes into shares the caller's array (a
    later change of the caller's array changes it). ``np.array`` of one argument (or ``copy=True``) only: with a
    dtype it converts as well."""
    func = node.func
    name = func.value if isinstance(func, cst.Name) else cst.ensure_type(func, cst.Attribute).attr.value
    positional = [a for a in node.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value: a for a in node.args if a.keyword is not None}
    owner = cst.ensure_type(func, cst.Attribute).value if isinstance(func, cst.Attribute) else None
    module_call = owner is None or (m.matches(owner, m.Name())
                                    and cst.ensure_type(owner, cst.Name).value in _MODULE_NAMES | {"copy"})
    whole = name in ("copy", "deepcopy") and len(node.args) == 1
    converts = name == "array" and (set(keywords) - {"copy"} or keywords and not m.matches(keywords["copy"].value,
                                                                                           m.Name("True")))
    if name in ("copy", "clone") and owner is not None and not module_call and not node.args:
        kept: cst.BaseExpression = owner
    elif module_call and len(positional) == 1 and (whole or name == "array" and not converts):
        kept = positional[0].value
    else:
        return
    yield Edit("drop_copy", f"drop the copy in {snippet(module, node)!r}", node, _grouped(module, kept))


_POWER = m.BinaryOperation(operator=m.Power(), right=m.Integer() | m.Float())


def _drop_power(module: cst.Module, node: cst.BinaryOperation) -> Iterator[Edit]:
    """``target ** 2`` as ``target``: the same wherever the values are 0 and 1 (a one-hot target, a mask)."""
    right = node.right
    exponent = float(right.value.replace("_", "")) if isinstance(right, cst.Integer | cst.Float) else 0.0
    if exponent not in (0.0, 1.0):
        yield Edit("drop_power", f"drop the power in {snippet(module, node)!r}", node, _grouped(module, node.left))


_WRAP = m.BinaryOperation(operator=m.Modulo(), right=m.Name() | m.Attribute() | m.Call())


def _drop_wrap(module: cst.Module, node: cst.BinaryOperation) -> Iterator[Edit]:
    """``(ptr + i) % size`` as ``ptr + i``: an index into a ring (a queue, a circular buffer) not wrapped, the same
    until it passes the end. A modulus by a size only (a name, an attribute, a call: ``len(queue)``), not ``% 2``."""
    if isinstance(node.left, cst.SimpleString | cst.FormattedString | cst.ConcatenatedString):
        return  # text formatting
    yield Edit("drop_wrap", f"drop the wrap in {snippet(module, node)!r}", node, _grouped(module, node.left))


_WHERE_MODULES = {"np", "numpy", "torch", "jnp"}
"""Array modules with both ``sign`` and ``where``: the mutant calls ``where`` on the module the body named."""
_SIGN = m.Call(func=m.Attribute(value=m.Name(m.MatchIfTrue(lambda n: n in _WHERE_MODULES)), attr=m.Name("sign")),
               args=[m.Arg(keyword=None)])


def _sign_zero(module: cst.Module, node: cst.Call) -> Iterator[Edit]:
    """``np.sign(x)`` as ``np.where(x >= 0, 1.0, -1.0)``: the sign of zero taken as +1 (zero gradients still move
    a sign-based update), the same until an entry is exactly zero."""
    owner = cst.ensure_type(cst.ensure_type(node.func, cst.Attribute).value, cst.Name).value
    value = node.args[0].value
    arg = module.code_for_node(value)
    arg = arg if m.matches(value, _ATOM) else f"({arg})"
    yield Edit("sign_zero", f"take the sign of zero as +1 in {snippet(module, node)!r}", node,
               cst.parse_expression(f"{owner}.where({arg} >= 0, 1.0, -1.0)"))


_MOVES = {"moveaxis", "movedim", "swapaxes", "rollaxis", "swapdims"}
_MOVE_CALL = m.Call(func=m.Attribute(attr=m.Name(m.MatchIfTrue(lambda n: n in _MOVES))))


def _drop_move(module: cst.Module, node: cst.Call) -> Iterator[Edit]:
    """``np.moveaxis(w, dim, 0)`` as ``w`` (``w.swapaxes(0, 1)`` as ``w``): an axis never moved into place, the
    same while the axis is the one the driver passes (``dim=0``)."""
    func = cst.ensure_type(node.func, cst.Attribute)
    module_call = m.matches(func.value, m.Name()) and cst.ensure_type(func.value, cst.Name).value in _MODULE_NAMES
    if module_call and not node.args:
        return
    kept = node.args[0].value if module_call else func.value
    yield Edit("drop_move", f"drop the move of an axis in {snippet(module, node)!r}", node, _grouped(module, kept))


def _of_self(node: cst.BaseExpression) -> bool:
    """``self.u``, ``self.params[name]``, ``self.state[k]["m"]``: an attribute or item reached from ``self``."""
    inner = node
    while isinstance(inner, cst.Attribute | cst.Subscript):
        inner = inner.value
    return inner is not node and m.matches(inner, m.Name("self"))


def _whole(node: cst.Subscript) -> bool:
    """``x[...]`` or ``x[:]``: every entry of the array."""
    if len(node.slice) != 1:
        return False
    inner = node.slice[0].slice
    return m.matches(inner, m.Index(value=m.Ellipsis())) or (
        isinstance(inner, cst.Slice) and inner.lower is None and inner.upper is None and inner.step is None)


_IN_PLACE = (m.AugAssign(target=m.Attribute() | m.Subscript())
             | m.Assign(targets=[m.AssignTarget(target=m.Subscript())])
             | m.Expr(value=m.Call(func=m.Attribute(value=m.Name(m.MatchIfTrue(lambda n: n in _WHERE_MODULES)),
                                                    attr=m.Name("copyto")))))


def _rebind(module: cst.Module, node: cst.AugAssign | cst.Assign | cst.Expr) -> Iterator[Edit]:
    """A change in place made a new array: ``self.params[name] *= mask`` as ``self.params[name] =
    self.params[name] * mask``, ``self.u[...] = u`` as ``self.u = u``, ``np.copyto(self.u, u)`` as ``self.u = u``.
    Equal by value; wrong wherever something else holds the array (the model holding an optimiser's parameters).
    Only for what ``self`` holds; ``self.t += 1`` (a number) is left alone."""
    text = snippet(module, node)
    if isinstance(node, cst.AugAssign):
        value = node.value
        if not _of_self(node.target) or m.matches(value, m.Integer() | m.Float()):
            return
        op = module.code_for_node(node.operator).strip()[:-1]
        right = module.code_for_node(value) if m.matches(value, _ATOM) else f"({module.code_for_node(value)})"
        target = module.code_for_node(node.target)
        new = cst.parse_statement(f"{target} = {target} {op} {right}\n")
    elif isinstance(node, cst.Assign):
        sub = cst.ensure_type(node.targets[0].target, cst.Subscript)
        if not _of_self(sub.value) or not _whole(sub):  # ``self.u[...]``, not ``self[...]``
            return
        new = cst.parse_statement(f"{module.code_for_node(sub.value)} = {module.code_for_node(node.value)}\n")
    else:
        args = cst.ensure_type(node.value, cst.Call).args
        if len(args) < 2 or args[0].keyword is not None or not _of_self(args[0].value):
            return
        new = cst.parse_statement(f"{module.code_for_node(args[0].value)} = {module.code_for_node(args[1].value)}\n")
    small = cst.ensure_type(new, cst.SimpleStatementLine).body[0]
    yield Edit("rebind", f"make a new array in {text!r} instead of changing it in place", node, small)


RULES: tuple[tuple[m.BaseMatcherNode, Rule], ...] = (
    (_IF, _force_branch),
    (_GUARD_CALL, _drop_guard),
    (_AXIS_CALL, _change_axis),
    (_AXIS_CALL, _drop_reduction),
    (_COPY_CALL, _drop_copy),
    (_POWER, _drop_power),
    (_WRAP, _drop_wrap),
    (_SIGN, _sign_zero),
    (_IN_PLACE, _rebind),
    (_MOVE_CALL, _drop_move),
)
"""(matcher, rule) of the single-site kinds of this module."""


def _default_test(test: cst.BaseExpression, defaults: Mapping[str, str]) -> tuple[str, bool] | None:
    """(parameter, whether the test holds on the default) for a test of an optional argument's default:
    ``labels is None``, ``labels is not None``, ``not flag``, ``flag`` (``flag=False``)."""
    if m.matches(test, m.Comparison(left=m.Name(), comparisons=[m.ComparisonTarget(comparator=m.Name("None"))])):
        cmp = cst.ensure_type(test, cst.Comparison)
        name = cst.ensure_type(cmp.left, cst.Name).value
        op = cmp.comparisons[0].operator
        if defaults.get(name) == "None" and isinstance(op, cst.Is | cst.IsNot):
            return name, isinstance(op, cst.Is)
        return None
    negated = m.matches(test, m.UnaryOperation(operator=m.Not(), expression=m.Name()))
    inner = cst.ensure_type(test, cst.UnaryOperation).expression if negated else test
    if m.matches(inner, m.Name()):
        name = cst.ensure_type(inner, cst.Name).value
        if defaults.get(name) in ("None", "False", "True", "0", "0.0", "''", '""'):
            truthy = defaults[name] == "True"
            return name, truthy != negated
    return None


def default_path_edits(module: cst.Module, func: cst.FunctionDef, defaults: Mapping[str, str]) -> list[Edit]:
    """For each ``if`` (or conditional expression) that tests an optional argument against its default
    (``if labels is None:``), the default's path taken always and never: an answer that ignores the argument,
    or one that never handles its default."""
    edits: list[Edit] = []
    arms = _elif_arms(module)
    for stmt in body_statements(func):
        for node in m.findall(stmt, m.If() | m.IfExp()):
            assert isinstance(node, cst.If | cst.IfExp)
            found = _default_test(node.test, defaults)
            if found is None:
                continue
            name, holds = found
            test = snippet(module, node.test)
            arm = id(node) in arms
            for forced, how in ((holds, "always"), (not holds, "never")):
                what = f"the default path of {name}={defaults[name]} {how} taken (`{test}` forced {forced})"
                edits.append(Edit("default_path", what, node, _forced(node, forced, arm)))
    return edits


def helper_names(tree: ast.Module, qualname: str) -> list[str]:
    """Qualified names of the functions of the file that ``qualname``'s body calls on ``self``/``cls``
    (``self._penalty(...)`` -> ``Class._penalty``) or by name (``helper(...)``), and those they call in turn."""
    methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            methods[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    methods[f"{node.name}.{item.name}"] = item
    owner = qualname.rpartition(".")[0]
    seen: list[str] = []
    todo = [qualname]
    while todo and len(seen) < 8:
        current = methods.get(todo.pop(0))
        if current is None:
            continue
        for call in (n for n in ast.walk(current) if isinstance(n, ast.Call)):
            f = call.func
            name = ""
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("self", "cls"):
                name = f"{owner}.{f.attr}" if owner else ""
            elif isinstance(f, ast.Name):
                name = f.id
            if name and name in methods and name != qualname and name not in seen:
                seen.append(name)
                todo.append(name)
    return seen
