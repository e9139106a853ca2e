"""Mutants that pin a nested value to its recorded value (``pin_nested``): every read of a chain the body or a
helper reads (``self.cfg.loss.gamma``, or ``cfg.gamma`` through a local ``cfg = self.cfg.loss``), and, for a
chain also read in a check that only raises, each read where the value is computed with.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import libcst as cst
import libcst.matchers as m

from lmrbench.authoring.mutants.mutant_sites import Edit, body_statements


def literal_text(value: object) -> str | None:
    """Python source of a recorded scalar (``2.0``, ``'mean'``, ``True``); None for anything else."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return repr(value)
    try:
        number = float(value)  # type: ignore[arg-type]  # numpy scalars
    except (TypeError, ValueError):
        return None
    if math.isnan(number) or math.isinf(number):
        return f"float({str(number)!r})"
    if hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iub":
        return str(int(number))
    return repr(number)


def _path(module: cst.Module, node: cst.CSTNode) -> str:
    """A chain's text with spacing removed (``self.cfg["loss"].gamma``)."""
    return "".join(module.code_for_node(node).split())


class _Pin(cst.CSTTransformer):
    """Every read of one chain (or only the read number ``only``) replaced by a literal (assignment targets and
    longer chains left alone)."""

    def __init__(self, module: cst.Module, path: str, literal: str, only: int | None = None) -> None:
        self.module, self.path, self.literal, self.only = module, path, literal, only
        self.targets: set[int] = set()
        self.checked: set[int] = set()
        """Nodes inside a check that only raises (``if c <= 1.0: raise ...``) or inside a ``raise``."""
        self.hits = self.reads = 0
        self.computing: list[int] = []
        """The numbers of the reads outside such checks: where the value is computed with."""

    def visit_If(self, node: cst.If) -> None:
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
        if body and all(isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Raise) for x in s.body)
                        for s in body):
            self.checked |= {id(n) for n in m.findall(node.test, m.Attribute() | m.Subscript())}

    def visit_Raise(self, node: cst.Raise) -> None:
        self.checked |= {id(n) for n in m.findall(node, m.Attribute() | m.Subscript())}

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.targets.add(id(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.targets.add(id(node.target))

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return self._descend(node)

    def visit_Subscript(self, node: cst.Subscript) -> bool:
        return self._descend(node)

    def _descend(self, node: cst.Attribute | cst.Subscript) -> bool:
        # the chain read as the base of a longer one (``self.kl_ctl.value.item()``) is left as it is
        if _path(self.module, node.value) == self.path:
            self.targets.add(id(node.value))
        return True

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return self._swap(original_node, updated_node)

    def leave_Subscript(self, original_node: cst.Subscript, updated_node: cst.Subscript) -> cst.BaseExpression:
        return self._swap(original_node, updated_node)

    def _swap(self, original: cst.Attribute | cst.Subscript, updated: cst.BaseExpression) -> cst.BaseExpression:
        if id(original) in self.targets or _path(self.module, original) != self.path:
            return updated
        self.reads += 1
        if id(original) not in self.checked:
            self.computing.append(self.reads - 1)
        if self.only is not None and self.reads - 1 != self.only:
            return updated
        self.hits += 1
        return cst.parse_expression(self.literal).with_changes(lpar=original.lpar, rpar=original.rpar)


def pin_chain_edits(module: cst.Module, func: cst.FunctionDef, where: str,
                    values: Mapping[str, Sequence[object]]) -> list[Edit]:
    """One edit per chain of ``values`` (``self.cfg.loss.gamma`` -> recorded values) that ``func``'s body
    reads: every read of it replaced by its first recorded value; and, for a chain also read in a check that
    only raises, one edit per read outside such checks (``clip_ratio_c`` pinned where it scales the dual clip,
    not where it is checked: a pin of every read dies by the check alone). ``where`` names the function when it
    is a helper the goal body calls (``in helper Class._penalty``), else ""."""
    edits: list[Edit] = []
    sites: list[Edit] = []
    wanted = {"".join(path.split()): (path, vs) for path, vs in values.items()}
    statements = body_statements(func)
    present = {_path(module, n) for s in statements for n in m.findall(s, m.Attribute() | m.Subscript())}
    holder = m.Assign(targets=[m.AssignTarget(target=m.Name())], value=m.Attribute() | m.Subscript())
    assigns = [cst.ensure_type(n, cst.Assign) for s in statements for n in m.findall(s, holder)]
    local = {_path(module, n.value): cst.ensure_type(n.targets[0].target, cst.Name).value  # ``cfg = self.config``
             for n in assigns}
    for full, (path, recorded) in wanted.items():
        literal = next((t for t in map(literal_text, recorded) if t is not None), None)
        # as written: the chain itself, or through a local that holds its start (``cfg.clip_ratio_c``)
        written = [full, *(f"{name}{full[len(chain):]}" for chain, name in local.items()
                           if full.startswith(chain) and full[len(chain):len(chain) + 1] in (".", "["))]
        key = next((w for w in written if w in present), None)
        if key is None or literal is None:
            continue
        pin = _Pin(module, key, literal)
        new = func.visit(pin)
        if pin.hits:
            suffix = f" in {where}" if where else ""
            edits.append(Edit("pin_nested", f"pin {path} to {literal} (its recorded value){suffix}", func,
                              cst.ensure_type(new, cst.FunctionDef), pinned=path))
        for k in pin.computing if len(pin.computing) < pin.hits else []:
            one = _Pin(module, key, literal, only=k)
            sites.append(Edit("pin_nested", f"pin {path} to {literal} (its recorded value) where it is computed "
                              f"with, not where it is checked (read {k + 1} of {pin.hits}){suffix}", func,
                              cst.ensure_type(func.visit(one), cst.FunctionDef), pinned=path))
    return edits + sites  # every chain's pin first: the number of mutants is capped
