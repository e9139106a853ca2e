"""Splice a candidate into the pristine goal file: its goal functions plus what they need from its own file.

A candidate (a model's reply, an agent's edited goal file) is its goal functions and the module-level
statements of its goal file that the pristine file lacks: new imports (those used only in annotations too),
new helper functions and classes, new constants and type aliases, import fallbacks (a ``try``/``if`` block of
those, kept whole) and a ``from __future__`` import. A statement is new when every name it binds is unbound at
the top of the pristine file. A candidate's redefinition of a name the pristine file binds is what its own goal
functions use: renamed (``candidate_rebind``), so that the rest of the file keeps the pristine binding. Nothing
else (calls, ``if __name__`` blocks, docstrings) is taken; what differs from the pristine file and is not taken
is listed as dropped. The kept statements go, in the candidate's order, just above the first statement holding
a goal function (a ``__future__`` import at the top of the file). A goal function defined several times in one
block is its last definition, as Python runs it.

A goal method's class is treated the same way one level down: the candidate's new methods and class constants
(names the pristine class does not bind) go into the pristine class, re-indented to its indentation, just
above the class's first goal method; an edited helper method its goal methods call is renamed for them alone
(``candidate_methods``), and its other edits of existing methods (``__init__``, say) are dropped and listed.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field

from lmrbench import pyparse
from lmrbench.core.source._cst import line_starts
from lmrbench.core.source.candidate_methods import rebind_methods
from lmrbench.core.source.candidate_rebind import (
    Rebound,
    alias_name,
    bound_names,
    describe,
    keepable,
    rebind,
    target_names,
    top_statements,
)
from lmrbench.core.source.index import index_source, parse_python
from lmrbench.core.source.splice import replace_functions
from lmrbench.errors import LmrError

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class SplicedCandidate:
    """A goal file with a candidate's goal functions and the statements kept beside them."""

    source: str
    kept: list[str] = field(default_factory=list)
    """One line per kept statement: ``import ...``, ``def name``, ``class Name``, ``NAME = ...``."""
    kept_source: str = ""
    """The kept statements' text, in the candidate's order (what a judge reads beside the goal functions)."""
    renamed: list[str] = field(default_factory=list)
    """``old -> new`` for each pristine name whose candidate definition its goal functions use under a new name."""
    dropped: list[str] = field(default_factory=list)
    """One line per statement of the candidate's file not taken that differs from the pristine file's (those the
    goal functions use first, each saying so)."""
    dropped_used: list[str] = field(default_factory=list)
    """The drops that bind a name the goal functions use: a failure may be theirs."""

    def notes(self) -> dict[str, list[str]]:
        """What the splice took, renamed and dropped, by the names of ``candidate.json``'s fields."""
        return {"helpers": self.kept, "renamed": self.renamed, "dropped": self.dropped,
                "dropped_used": self.dropped_used}


def merge_notes(into: dict[str, list[str]], spliced: SplicedCandidate) -> dict[str, list[str]]:
    """``into`` with the notes of one more spliced goal file, each line once."""
    for key, lines in spliced.notes().items():
        into[key] = into.get(key, []) + [line for line in lines if line not in into.get(key, [])]
    return into


@dataclass
class _Kept:
    text: str
    line: str
    future: bool = False


def _segment(lines: list[str], node: ast.stmt, shared: bool) -> str:
    """A statement's whole lines (its decorators included), or its unparsed text when it shares a line."""
    if shared:
        return ast.unparse(node) + "\n"
    first = node.decorator_list[0].lineno if isinstance(node, _DEFS) and node.decorator_list else node.lineno
    return "".join(lines[first - 1 : node.end_lineno]).rstrip("\r\n") + "\n"


def _new_statements(target_body: list[ast.stmt], donor: str, skip: set[str], rebound: Rebound
                    ) -> tuple[list[_Kept], list[str]]:
    """The donor's module-level statements to keep, in its order, and those left out that differ from the
    pristine file's (a docstring, a goal function and a statement binding what the pristine file binds the same
    way are not listed)."""
    bound = bound_names(target_body)
    imported = {ast.unparse(n) for n in top_statements(target_body) if isinstance(n, ast.Import | ast.ImportFrom)}
    tree = pyparse.parse(donor)
    lines = donor.splitlines(keepends=True)
    used_lines: dict[int, int] = {}
    for node in tree.body:
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
            used_lines[line] = used_lines.get(line, 0) + 1
    out: list[_Kept] = []
    dropped: list[str] = []
    for i, node in enumerate(tree.body):
        shared = any(used_lines[ln] > 1 for ln in (node.lineno, node.end_lineno or node.lineno))
        kept = _keep(node, bound, imported, skip, rebound.same)
        if kept is None:
            names = bound_names([node])
            docstring = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            as_written = names and names <= rebound.as_written
            if not (docstring or names & skip or as_written or ast.unparse(node) in imported):
                dropped.append(describe(node))
            continue
        text = _segment(lines, node, shared) if kept is node else ast.unparse(kept) + "\n"
        if isinstance(kept, _DEFS):
            text += "\n\n"  # two blank lines after a def or class, as in any module
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        out.append(_Kept(text, describe(kept), future))  # a later statement may rebind it, as in the candidate
        imported.add(ast.unparse(kept))
    return out, dropped


def _keep(node: ast.stmt, bound: set[str], imported: set[str], skip: set[str], same: frozenset[str]
          ) -> ast.stmt | None:
    """``node`` (or the part of an import that binds new names) when it is kept, else None."""
    if isinstance(node, ast.ImportFrom) and node.module == "__future__":
        new = [a for a in node.names if ast.unparse(ast.ImportFrom("__future__", [a], 0)) not in imported]
        return None if not new else node if len(new) == len(node.names) else ast.ImportFrom("__future__", new, 0)
    if isinstance(node, ast.Import | ast.ImportFrom):
        if any(a.name == "*" for a in node.names) or ast.unparse(node) in imported:
            return None
        new = [a for a in node.names if alias_name(a) not in bound | skip or _submodule(a, node, imported)]
        if not new:
            return None
        if len(new) == len(node.names):
            return node
        if isinstance(node, ast.Import):
            return ast.Import(new)
        return ast.ImportFrom(node.module, new, node.level)
    names = bound_names([node])
    if isinstance(node, _DEFS):
        return node if node.name not in bound | skip else None
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        return node if keepable(node) and names and not names & (bound | skip) else None
    if isinstance(node, ast.Try | ast.If) and names - bound and not names & skip and names & bound <= same:
        return node if keepable(node) else None  # an import fallback is kept whole
    return None


def _submodule(alias: ast.alias, node: ast.stmt, imported: set[str]) -> bool:
    """``import a.b`` beside the file's ``import a``: it loads a submodule and binds ``a`` to the same package."""
    return isinstance(node, ast.Import) and "." in alias.name and not alias.asname \
        and f"import {alias.name}" not in imported and f"import {alias.name.split('.')[0]}" in imported


def _first_goal_line(tree: ast.Module, source: str, qualnames: list[str], file: str) -> int:
    """The first line (1-based, decorators included) of the top-level statement holding the first goal def."""
    lines = [f.lineno for f in index_source(source, file) if f.qualname in qualnames]
    first_def = min(lines) if lines else 1
    for node in tree.body:
        if first_def <= (node.end_lineno or node.lineno):
            return node.decorator_list[0].lineno if isinstance(node, _DEFS) and node.decorator_list else node.lineno
    return len(source.splitlines()) + 1


def _future_line(tree: ast.Module) -> int:
    """The line after a module docstring and the existing ``__future__`` imports (1-based insertion line)."""
    at = 1
    for i, node in enumerate(tree.body):
        is_doc = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
            and isinstance(node.value.value, str)  # fmt: skip
        if is_doc or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            at = (node.end_lineno or node.lineno) + 1
        else:
            break
    return at


def _top_class(body: list[ast.stmt], name: str) -> ast.ClassDef | None:
    return next((n for n in body if isinstance(n, ast.ClassDef) and n.name == name), None)


def _class_members(spliced: str, donor: str, qualnames: list[str]) -> tuple[str, list[_Kept], list[str]]:
    """``spliced`` with the donor's new members of each goal method's (top-level) class, what was kept, and the
    edited existing methods left out (the pristine ones stay)."""
    goals_by_class: dict[str, set[str]] = {}
    for q in qualnames:
        cls, _, method = q.partition(".")
        if method and "." not in method:
            goals_by_class.setdefault(cls, set()).add(method)
    if not goals_by_class:
        return spliced, [], []
    donor_body, donor_lines = pyparse.parse(donor).body, donor.splitlines(keepends=True)
    kept: list[_Kept] = []
    dropped: list[str] = []
    for cls, goals in goals_by_class.items():
        target_cls, donor_cls = _top_class(pyparse.parse(spliced).body, cls), _top_class(donor_body, cls)
        if target_cls is None or donor_cls is None:
            continue
        bound = bound_names(target_cls.body) | goals
        pristine = {n.name: ast.dump(n) for n in target_cls.body
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        members: list[_Kept] = []
        for node in donor_cls.body:
            if node.__class__ in (ast.FunctionDef, ast.AsyncFunctionDef) and node.name in set(pristine) - goals \
                    and ast.dump(node) != pristine[node.name]:  # fmt: skip
                used = _attributes(donor_cls, goals) & _provides(node)
                dropped.append(f"def {cls}.{node.name}" + (f" (sets {', '.join(sorted(used))}, which the goal "
                                                            "methods use)" if used else ""))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name not in bound:
                text = textwrap.dedent(_segment(donor_lines, node, False)) + "\n"
                members.append(_Kept(text, f"def {cls}.{node.name}"))
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                names = bound_names([node])
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if names and not names & bound and all(target_names(t) is not None for t in targets):
                    members.append(_Kept(ast.unparse(node) + "\n", f"{cls}.{describe(node)}"))
            else:
                continue
            bound |= bound_names([node])
        goal_nodes = [n for n in target_cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                      and n.name in goals]
        if not members or not goal_nodes:
            continue
        first = goal_nodes[0]
        at_line = first.decorator_list[0].lineno if first.decorator_list else first.lineno
        indent = " " * first.col_offset
        newline = "\r\n" if "\r\n" in spliced else "\n"
        text = "".join(textwrap.indent(m.text, indent, lambda line: bool(line.strip())) for m in members)
        text = text.replace("\r\n", "\n").replace("\n", newline)
        at = line_starts(spliced)[at_line - 1]
        spliced = spliced[:at] + text + spliced[at:]
        kept += members
    return spliced, kept, dropped


def _attributes(cls: ast.ClassDef, goals: set[str]) -> set[str]:
    """The attribute names the goal methods of a class read."""
    methods = [n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name in goals]
    return {a.attr for m in methods for a in ast.walk(m) if isinstance(a, ast.Attribute)}


def _provides(method: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The method's own name and the attributes it sets (``self.x = ...``)."""
    return {method.name} | {a.attr for a in ast.walk(method) if isinstance(a, ast.Attribute)
                            and isinstance(a.ctx, ast.Store)}


def splice_candidate(
    target: str, donor: str, qualnames: list[str], *, file: str = "<source>", donor_file: str = "<candidate>"
) -> SplicedCandidate:
    """``target`` (the pristine goal file) with the donor's goal functions, its new module-level statements,
    its redefinitions of existing names that its goal functions use (renamed: ``candidate_rebind``) and the new
    members of the goal methods' classes.

    LmrError for a donor that does not parse or lacks a goal function, or a result that does not parse.
    """
    skip = {q.split(".")[0] for q in qualnames} | {q.rpartition(".")[2] for q in qualnames}
    target_body = pyparse.parse(target.lstrip("\ufeff")).body
    rebound = rebind(target_body, donor, skip, _goal_statements(donor, qualnames, donor_file), donor_file)
    donor, methods_renamed = rebind_methods(target_body, rebound.donor, qualnames, donor_file)
    spliced = replace_functions(target, donor, qualnames, file=file, donor_file=donor_file)
    bom = "\ufeff" if spliced.startswith("\ufeff") else ""
    body, members, dropped_members = _class_members(spliced[len(bom):], donor.lstrip("\ufeff"), qualnames)
    kept, dropped = _new_statements(target_body, donor.lstrip("\ufeff"), skip, rebound)
    if kept:
        body = _insert_statements(body, kept, qualnames, file)
    kept += members
    if kept:
        try:
            parse_python(body, file)
        except LmrError as exc:
            raise LmrError(f"the statements kept from {donor_file} do not fit: {exc.problem}", file) from None
    renamed = [f"{old} -> {new}" for old, new in rebound.renamed.items()] + methods_renamed
    used = rebound.dropped_used + [d for d in dropped_members if d.endswith("use)")]
    others = [d for d in dropped + dropped_members if d not in used and not any(u.startswith(d + " (") for u in used)]
    return SplicedCandidate(bom + body, [k.line for k in kept], "".join(k.text for k in kept), renamed,
                            used + others, used)


def _goal_statements(donor: str, qualnames: list[str], donor_file: str) -> list[ast.stmt]:
    """The donor's module-level statements that hold a goal function."""
    tree = parse_python(donor, donor_file)
    lines = {f.lineno for f in index_source(donor.lstrip("\ufeff"), donor_file) if f.qualname in qualnames}
    first = {id(n): n.decorator_list[0].lineno if isinstance(n, _DEFS) and n.decorator_list else n.lineno
             for n in tree.body}  # the index counts a def from its first decorator
    return [n for n in tree.body if any(first[id(n)] <= line <= (n.end_lineno or n.lineno) for line in lines)]


def _insert_statements(body: str, kept: list[_Kept], qualnames: list[str], file: str) -> str:
    """``body`` with the kept module-level statements above its first goal statement (``__future__`` imports at
    the top)."""
    newline = "\r\n" if "\r\n" in body else "\n"
    tree = pyparse.parse(body)
    starts = line_starts(body)

    def offset(line: int) -> int:
        return starts[line - 1] if line - 1 < len(starts) else len(body)

    def block(items: list[_Kept]) -> str:
        text = "".join(k.text for k in items)
        return text.replace("\r\n", "\n").replace("\n", newline)

    future_at = offset(_future_line(tree))
    goal_at = offset(_first_goal_line(tree, body, qualnames, file))
    futures, others = [k for k in kept if k.future], [k for k in kept if not k.future]
    if goal_at >= len(body) and body and not body.endswith(("\n", "\r")):
        body += newline
    others_text = block(others).rstrip("\r\n") + newline * 3 if others else ""
    result = body[:goal_at] + others_text + body[goal_at:]
    return result[:future_at] + block(futures) + result[future_at:]
