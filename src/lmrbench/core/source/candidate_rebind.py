"""A candidate's redefinitions of names the pristine goal file binds, renamed so that only its own code uses them.

A whole-file answer often edits an existing helper (a new parameter, a rebinding by assignment, a local def
shadowing an imported one, an ``except ImportError`` fallback). Python runs the goal function with the
candidate's helper, so that is what is graded: each redefined name the candidate's code uses is renamed (the
definition and every module-level reference in the candidate's goal functions and kept statements), and
the splice keeps the renamed statements as new ones. The rest of the file keeps the pristine binding, so no
test of another function changes. A redefinition that cannot be taken (it sits in a loop, a ``with`` block,
an ``if __name__`` block) is dropped, and the drop is named when the goal functions use what it binds.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import Assignment, GlobalScope, MetadataWrapper, ScopeProvider

from lmrbench.core.source._cst import line_starts
from lmrbench.core.source.index import parse_python
from lmrbench.errors import LmrError

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SIMPLE = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Pass) + _DEFS
_BLOCKS = (ast.Try, ast.If)
SENTINEL = "pass\n"


@dataclass(frozen=True)
class Rebound:
    """A donor with the redefinitions its goal code uses renamed, and what became of the others."""

    donor: str
    renamed: dict[str, str] = field(default_factory=dict)
    """Pristine name -> the name the candidate's own definition goes by."""
    same: frozenset[str] = frozenset()
    """Pristine names the candidate binds exactly as the pristine file does, reading only names it binds the same
    way too (a kept statement may bind them again)."""
    as_written: frozenset[str] = frozenset()
    """Pristine names whose definitions the candidate left as they are (though they may read a redefined name)."""
    dropped_used: list[str] = field(default_factory=list)
    """Redefinitions the goal functions use that could not be taken (``for ...: (binds N)``)."""


def top_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a block and of the if/try/with/loop blocks in it (not inside defs or classes)."""
    for node in body:
        yield node
        if isinstance(node, _DEFS):
            continue
        for attr in ("body", "orelse", "finalbody"):
            yield from top_statements(getattr(node, attr, []) or [])
        for handler in getattr(node, "handlers", []) or []:
            yield from top_statements(handler.body)


def target_names(target: ast.expr) -> list[str] | None:
    """Names an assignment target binds; None when it binds anything else (an attribute, a subscript)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        out: list[str] = []
        for elt in target.elts:
            names = target_names(elt.value if isinstance(elt, ast.Starred) else elt)
            if names is None:
                return None
            out += names
        return out
    return None


def alias_name(alias: ast.alias) -> str:
    """The name an import alias binds."""
    return alias.asname or alias.name.split(".")[0]


def bound_names(body: list[ast.stmt]) -> set[str]:
    """Names bound at the top of a module (in its top-level if/try/with blocks too)."""
    names: set[str] = set()
    for node in top_statements(body):
        if isinstance(node, _DEFS):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update(alias_name(a) for a in node.names)
        elif isinstance(node, ast.Assign):
            for tgt in node.targets:
                names.update(target_names(tgt) or [])
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            names.update(target_names(node.target) or [])
        elif isinstance(node, ast.For | ast.AsyncFor | ast.With | ast.AsyncWith):
            targets = [node.target] if isinstance(node, ast.For | ast.AsyncFor) else \
                [i.optional_vars for i in node.items if i.optional_vars is not None]
            for tgt in targets:
                names.update(target_names(tgt) or [])
    return names


def keepable(node: ast.stmt) -> bool:
    """Whether a module-level statement is of a kind a splice takes: a def, a class, an import, an assignment
    to names, or a ``try``/``if`` block of those (an import fallback, a version switch)."""
    if isinstance(node, ast.ImportFrom | ast.Import):
        return not any(a.name == "*" for a in node.names)
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return all(target_names(t) is not None for t in targets)
    if isinstance(node, _BLOCKS):
        inner = [n for n in top_statements([node]) if n is not node]
        return all(isinstance(n, _SIMPLE + _BLOCKS) and (isinstance(n, _BLOCKS) or keepable(n)) for n in inner)
    return isinstance(node, _DEFS + (ast.Pass,))


def without_docstrings(node: ast.AST) -> ast.AST:
    for sub in ast.walk(node):
        body = getattr(sub, "body", None)
        if isinstance(sub, _DEFS + (ast.Module,)) and isinstance(body, list) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):  # fmt: skip
            sub.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return node


def _keys(node: ast.stmt, name: str) -> list[str]:
    """What binds ``name`` in a module-level statement, comparable between two files: an import by what it
    imports (``import a.b`` binds ``a`` as ``import a`` does), anything else by its code without docstrings."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        for alias in node.names:
            if alias_name(alias) == name:
                what = alias.name if alias.asname else alias.name.split(".")[0]
                module = f"{'.' * node.level}{node.module}." if isinstance(node, ast.ImportFrom) else ""
                return [f"import {module}{what}"]
        return []
    if isinstance(node, _BLOCKS):
        inner = [n for n in top_statements([node]) if n is not node and name in bound_names([n])]
        return [k for n in inner if not isinstance(n, _BLOCKS) for k in _keys(n, name)]
    if name not in bound_names([node]):
        return []
    return [ast.dump(without_docstrings(copy.deepcopy(node)))]


def _binding_keys(body: list[ast.stmt], name: str) -> list[str]:
    keys = [k for node in body for k in _keys(node, name)]
    return [k for i, k in enumerate(keys) if i == 0 or keys[i - 1] != k]


def names_used(node: ast.AST) -> set[str]:
    """Every name a statement reads or writes (more than the globals it uses: enough to follow helpers)."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | \
        {n for g in ast.walk(node) if isinstance(g, ast.Global) for n in g.names}


def fresh_name(name: str, taken: set[str]) -> str:
    new, k = f"{name}_candidate", 2
    while new in taken:
        new, k = f"{name}_candidate{k}", k + 1
    taken.add(new)
    return new


def rebind(target_body: list[ast.stmt], donor: str, goal_tops: set[str], goal_statements: list[ast.stmt],
           donor_file: str = "<candidate>") -> Rebound:
    """``donor`` with every pristine name it redefines and its goal code uses renamed (``goal_tops``: the goal
    functions' and goal classes' names, never renamed; ``goal_statements``: the donor's statements holding them).
    LmrError naming ``donor_file`` when the donor does not parse (for ``ast`` or for LibCST).
    """
    tree = parse_python(donor, donor_file)
    pristine = bound_names(target_body) - goal_tops
    binders = {n: [s for s in tree.body if n in bound_names([s])] for n in pristine}
    binders = {n: stmts for n, stmts in binders.items() if stmts}
    changed = {n for n, stmts in binders.items() if _binding_keys(stmts, n) != _binding_keys(target_body, n)}
    as_written = frozenset(set(binders) - changed)
    grew = True
    while grew:  # a definition that reads a changed name changed too (``SCALE = _norm(UNIT)``)
        more = {n for n in set(binders) - changed if any(names_used(s) & changed for s in binders[n])}
        changed |= more
        grew = bool(more)
    new_statements = [s for s in tree.body if not bound_names([s]) & (pristine | goal_tops) and bound_names([s])]
    every = {n: [s for s in tree.body if n in bound_names([s])] for n in bound_names(tree.body) - goal_tops}
    followed = set(every) - (pristine - changed)  # the candidate's own definitions
    needed: set[str] = set()
    todo = [names_used(s) for s in goal_statements + new_statements]
    while todo:
        for name in todo.pop() & followed - needed:
            needed.add(name)
            todo += [names_used(s) for s in every[name]]
    dropped_used = [f"{describe(s)} (binds {name}, which the goal functions use)" for name in sorted(needed - pristine)
                    if not any(keepable(s) for s in every[name]) for s in every[name]]
    taken = bound_names(target_body) | bound_names(tree.body) | names_used(tree)
    renamed: dict[str, str] = {}
    for name in sorted(needed & changed):
        blocked = [s for s in binders[name] if not keepable(s) or _dotted_import(s, name)]
        if blocked:
            dropped_used += [f"{describe(s)} (binds {name}, which the goal functions use)" for s in blocked]
        else:
            renamed[name] = fresh_name(name, taken)
    for name in sorted(changed - set(renamed)):  # a kept statement must not rebind a pristine name either
        if any(not isinstance(s, ast.Import | ast.ImportFrom)  # an import is kept in part: its new names
               and (bound_names([s]) - pristine - goal_tops or set(renamed) & bound_names([s])) for s in binders[name]):
            renamed[name] = fresh_name(name, taken)
    same = frozenset(set(binders) - changed)
    if not renamed:
        return Rebound(donor, {}, same, as_written, dropped_used)
    try:
        text = _rename(donor, tree, renamed)
    except cst.ParserSyntaxError as exc:
        raise LmrError(f"LibCST cannot parse it: {exc.message}", donor_file) from None
    return Rebound(text, renamed, same, as_written, dropped_used)


def _dotted_import(node: ast.stmt, name: str) -> bool:
    """``import a.b`` binding ``name`` (``a``): it cannot be renamed (``as`` would bind ``a.b``)."""
    return any(isinstance(n, ast.Import) and any(not a.asname and "." in a.name and alias_name(a) == name
                                                 for a in n.names) for n in top_statements([node]))


def describe(node: ast.stmt) -> str:
    """One line naming a module-level statement: ``def f``, ``class C``, or its first line (cut at 100)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return f"def {node.name}"
    if isinstance(node, ast.ClassDef):
        return f"class {node.name}"
    first = ast.unparse(node).splitlines()[0]
    return first if len(first) <= 100 else first[:97] + "..."


def per_statement(donor: str, tree: ast.Module, edit: Callable[[ast.stmt, str], str]) -> str:
    """``donor`` with each module-level statement's text (its decorators and trailing lines included) passed
    through ``edit``: a module-level statement's scopes are its own, so each can be parsed alone."""
    bom = "\ufeff" if donor.startswith("\ufeff") else ""
    text = donor[len(bom):]
    starts = line_starts(text)
    bounds = [starts[_first_line(n) - 1] for n in tree.body] + [len(text)]
    return bom + text[: bounds[0]] + "".join(edit(n, text[bounds[i]: bounds[i + 1]]) for i, n in enumerate(tree.body))


def _rename(donor: str, tree: ast.Module, renamed: dict[str, str]) -> str:
    """``donor`` with the module-level bindings and uses of each renamed name renamed."""
    def edit(node: ast.stmt, chunk: str) -> str:
        touched = (names_used(node) | bound_names([node])) & set(renamed)
        return _rename_chunk(chunk, renamed) if touched else chunk

    return per_statement(donor, tree, edit)


def _first_line(node: ast.stmt) -> int:
    return node.decorator_list[0].lineno if isinstance(node, _DEFS) and node.decorator_list else node.lineno


def _rename_chunk(chunk: str, renamed: dict[str, str]) -> str:
    """One module-level statement with its global bindings and uses of the renamed names renamed."""
    newline = "\r\n" if "\r\n" in chunk else "\n"
    prefix = " = ".join(renamed) + " = None" + newline  # so that every use of a global links to an assignment
    suffix = "" if chunk.endswith(("\n", "\r")) else newline
    suffix += SENTINEL  # as in ``_cst``: the trailing comments are owned the same way everywhere
    wrapper = MetadataWrapper(cst.parse_module(prefix + chunk + suffix))
    scopes = wrapper.resolve(ScopeProvider)
    module = wrapper.module
    names: dict[int, str] = {}
    aliases: dict[int, str] = {}
    for scope in {s for s in scopes.values() if isinstance(s, GlobalScope)}:
        for old, new in renamed.items():
            for assignment in scope.assignments[old]:
                if not isinstance(assignment, Assignment):
                    continue
                node = assignment.node
                if isinstance(node, cst.FunctionDef | cst.ClassDef):
                    names[id(node.name)] = new
                elif isinstance(node, cst.Import | cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
                    for alias in node.names:
                        if alias.evaluated_alias == old or (alias.asname is None and alias.evaluated_name == old):
                            aliases[id(alias)] = new
                elif isinstance(node, cst.Name):
                    names[id(node)] = new
                for access in assignment.references:
                    if isinstance(access.node, cst.Name):
                        names[id(access.node)] = new
    code = module.with_changes(body=module.body[1:]).visit(_Renamer(names, aliases, renamed)).code
    if not code.endswith(SENTINEL):
        raise AssertionError("the sentinel statement was lost")
    return code[: len(code) - len(suffix)]


class _Renamer(cst.CSTTransformer):
    def __init__(self, names: dict[int, str], aliases: dict[int, str], renamed: dict[str, str]) -> None:
        self.names, self.aliases, self.renamed = names, aliases, renamed

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        new = self.names.get(id(original_node))
        return updated_node.with_changes(value=new) if new else updated_node

    def leave_ImportAlias(self, original_node: cst.ImportAlias, updated_node: cst.ImportAlias) -> cst.ImportAlias:
        new = self.aliases.get(id(original_node))
        if new is None:
            return updated_node
        return updated_node.with_changes(asname=cst.AsName(name=cst.Name(new)))

    def leave_Global(self, original_node: cst.Global, updated_node: cst.Global) -> cst.Global:
        items = [i.with_changes(name=cst.Name(self.renamed[i.name.value])) if i.name.value in self.renamed else i
                 for i in updated_node.names]  # ``global name`` names the module's binding
        return updated_node.with_changes(names=items)

