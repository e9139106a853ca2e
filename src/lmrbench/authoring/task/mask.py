"""Mask functions: keep decorators, signature and docstring, replace the rest of the body with a stub.

Every byte outside the replaced part of the body is kept: comments, blank lines, line endings, tabs, unicode.
The replaced part runs from the first statement after the docstring (with the comments above it) to the end of
the body, including the comments after its last statement up to the last one indented like the body.
Inserted lines take the body's indentation and the file's line ending. A one-line def stays on one line:
``def f(x): raise NotImplementedError  # TODO: Implement this function``.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from lmrbench.authoring.task.mask_style import MaskStyle
from lmrbench.core.source._cst import Located, outermost
from lmrbench.core.source.index import split_line

TODO_COMMENT = "# TODO: Implement this function"

_DOCSTRING = m.Expr(value=m.SimpleString() | m.ConcatenatedString())


def _stub(style: MaskStyle) -> cst.BaseSmallStatement:
    if style is MaskStyle.PASS:
        return cst.Pass()
    return cst.Raise(exc=cst.Name("NotImplementedError"))


def _masked_block(block: cst.IndentedBlock, style: MaskStyle) -> cst.IndentedBlock:
    first = block.body[0] if block.body else None
    kept: list[cst.BaseStatement] = []
    if isinstance(first, cst.SimpleStatementLine) and m.matches(first.body[0], _DOCSTRING):
        if len(first.body) == 1:
            kept.append(first)
        else:  # '"""doc"""; rest' on one line: keep the docstring alone on its line
            doc = first.body[0].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            kept.append(first.with_changes(body=[doc], trailing_whitespace=cst.TrailingWhitespace()))
    leading = [cst.EmptyLine(comment=cst.Comment(TODO_COMMENT))] if style is MaskStyle.TODO_RAISE else []
    kept.append(cst.SimpleStatementLine(body=[_stub(style)], leading_lines=leading))
    # the footer runs to the last comment indented like the body after its last statement; lines in it
    # indented less would belong elsewhere once that comment is gone, so the whole footer goes
    return block.with_changes(body=kept, footer=())


def _masked_suite(suite: cst.SimpleStatementSuite, style: MaskStyle) -> cst.SimpleStatementSuite:
    body: list[cst.BaseSmallStatement] = []
    if m.matches(suite.body[0], _DOCSTRING):
        body.append(suite.body[0])
    body.append(_stub(style))
    comment = cst.Comment(TODO_COMMENT) if style is MaskStyle.TODO_RAISE else None
    space = cst.SimpleWhitespace("  " if comment else "")
    trailing = cst.TrailingWhitespace(whitespace=space, comment=comment)
    return suite.with_changes(body=body, trailing_whitespace=trailing)


def mask_def(node: cst.FunctionDef, style: MaskStyle = MaskStyle.TODO_RAISE) -> cst.FunctionDef:
    """The same def with its body masked."""
    body = node.body
    if isinstance(body, cst.IndentedBlock):
        return node.with_changes(body=_masked_block(body, style))
    return node.with_changes(body=_masked_suite(cst.ensure_type(body, cst.SimpleStatementSuite), style))


def mask_source(
    source: str, qualnames: list[str], style: MaskStyle = MaskStyle.TODO_RAISE, *, file: str = "<source>"
) -> str:
    """The source with each named function's body masked (overload stubs are left alone).

    A name is ``func``, ``Class.method``, ``outer.inner``, ``Class.prop`` (a property getter) or
    ``Class.prop.setter``; a name defined several times (conditional definitions) masks every definition, and
    ``name@147`` only the one whose first line is 147; a name inside another named function is covered by it.
    LmrError naming the file for a syntax error, an unknown name (with the closest names) or a wrong line.
    """
    wanted = [split_line(q) for q in qualnames]
    names = outermost([q for q, _ in wanted])
    located = Located(source, file, names)
    replace: dict[int, cst.FunctionDef] = {}
    for q in names:
        lines = [line for name, line in wanted if name == q]
        at = sorted({line for line in lines if line is not None})
        nodes = located.defs(q) if None in lines else [located.def_at(q, line) for line in at]
        replace.update({id(node): mask_def(node, MaskStyle(style)) for node in nodes})
    return located.rebuild(replace)
