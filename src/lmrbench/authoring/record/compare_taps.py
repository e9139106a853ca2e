"""The golden file with each comparison inside a function tapped, for the search's boundaries
(``runtime/lmrbench_edges.py``): ``a > b`` becomes ``_lmrbench_compare(k, a, b, '>')``, which compares the same
way and notes whether both sides met. Each ``compare`` mutant (``line 30: > becomes >= in '> score_threshold'``)
is matched to its comparison by line and text, and each comparison names the leaf on one side of it
(``score_threshold``, ``self.cfg.clip``), which the search sets to what the other side took."""

from __future__ import annotations

import ast
import re
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from lmrbench.authoring.mutants.mutant_sites import snippet

TAP = "_lmrbench_compare"
"""What the tapped source calls (``lmrbench_edges.TAP``)."""
_OPS: dict[type[cst.BaseCompOp], str] = {cst.LessThan: "<", cst.LessThanEqual: "<=", cst.GreaterThan: ">",
                                         cst.GreaterThanEqual: ">="}
_COMPARE = re.compile(r"^line (\d+): \S+ becomes \S+ in (.+)$")


def _leaf(node: cst.BaseExpression, params: list[str]) -> str:
    """The leaf path of a name or attribute chain rooted at a parameter or at ``self`` (``self.cfg.clip``), else
    ''."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name) or not (node.value in params or node.value == "self" and parts):
        return ""
    return ".".join([node.value, *reversed(parts)])


class _Tapper(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, module: cst.Module, params: list[str]) -> None:
        super().__init__()
        self.module, self.params = module, params
        self.sites: list[dict[str, Any]] = []
        self.depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.depth += 1

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.depth -= 1
        return updated

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        if not self.depth or len(original.comparisons) != 1:
            return updated
        target = original.comparisons[0]
        op = _OPS.get(type(target.operator))
        if op is None:
            return updated
        right, left = _leaf(target.comparator, self.params), _leaf(original.left, self.params)
        self.sites.append({"line": self.get_metadata(PositionProvider, target).start.line,
                           "text": snippet(self.module, target), "leaf": right or left,
                           "side": "right" if right else "left"})
        args = [cst.Integer(str(len(self.sites) - 1)), updated.left, updated.comparisons[0].comparator,
                cst.SimpleString(repr(op))]
        return cst.Call(func=cst.Name(TAP), args=[cst.Arg(a) for a in args], lpar=updated.lpar, rpar=updated.rpar)


def _site_of(description: str, sites: list[dict[str, Any]]) -> int | None:
    """The comparison a ``compare`` mutant's description names (by line and text), or None."""
    found = _COMPARE.match(description)
    if found is None:
        return None
    try:
        text = ast.literal_eval(found.group(2))
    except (ValueError, SyntaxError):
        return None
    line = int(found.group(1))
    return next((k for k, s in enumerate(sites) if s["line"] == line and s["text"] == text), None)


def compare_taps(golden: str, params: list[str], mutants: list[Any]) -> tuple[dict[str, Any] | None,
                                                                             list[int | None]]:
    """(the tap: the tapped source and its comparisons, or None where no ``compare`` mutant has one; each
    mutant's comparison, None for the other kinds)."""
    if not any(m.kind == "compare" for m in mutants):
        return None, [None] * len(mutants)
    try:
        module = cst.parse_module(golden)
        wrapper = MetadataWrapper(module)
        tapper = _Tapper(wrapper.module, params)
        source = wrapper.visit(tapper).code
    except (cst.ParserSyntaxError, RecursionError):
        return None, [None] * len(mutants)
    sites = tapper.sites
    of = [_site_of(m.description, sites) if m.kind == "compare" else None for m in mutants]
    if all(k is None for k in of):
        return None, of
    return {"source": source, "sites": [{"text": s["text"], "leaf": s["leaf"], "side": s["side"]}
                                        for s in sites]}, of
