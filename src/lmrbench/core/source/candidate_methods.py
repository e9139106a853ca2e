"""A goal method's class, one level down from ``candidate_rebind``: an edited helper method the goal methods call
through ``self``, ``cls`` or the class's name is renamed for them alone, so the class's other methods keep the
pristine one."""

from __future__ import annotations

import ast
import copy

import libcst as cst

from lmrbench.core.source.candidate_rebind import SENTINEL, bound_names, fresh_name, per_statement, without_docstrings
from lmrbench.core.source.index import parse_python
from lmrbench.errors import LmrError


def _methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """A class's methods by name (the last definition of a name, as Python keeps)."""
    return {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def _own_attributes(node: ast.AST, cls: str) -> set[str]:
    """The attributes read through ``self``, ``cls`` or the class's own name in a method."""
    return {a.attr for a in ast.walk(node) if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name)
            and a.value.id in ("self", "cls", cls)}


def _code_of(node: ast.AST) -> str:
    return ast.dump(without_docstrings(copy.deepcopy(node)))


def rebind_methods(target_body: list[ast.stmt], donor: str, qualnames: list[str], donor_file: str
                   ) -> tuple[str, list[str]]:
    """``donor`` with each edited helper method of a goal method's class that the goal methods call (through
    ``self``, ``cls`` or the class's name) renamed, in its def and in those calls, and ``Class.old -> Class.new``
    for each: the class's other methods keep the pristine helper. Dunder methods and methods under decorators
    other than ``staticmethod``/``classmethod`` are never renamed (a property's setter names it)."""
    goals: dict[str, set[str]] = {}
    for q in qualnames:
        cls, _, method = q.partition(".")
        if method and "." not in method:
            goals.setdefault(cls, set()).add(method)
    tree = parse_python(donor, donor_file)
    plan: dict[str, dict[str, str]] = {}
    for cls, wanted in goals.items():
        pristine_cls = next((n for n in target_body if isinstance(n, ast.ClassDef) and n.name == cls), None)
        donor_cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None)
        if pristine_cls is None or donor_cls is None:
            continue
        pristine, methods = _methods(pristine_cls), _methods(donor_cls)
        edited = {name for name, node in methods.items() if name in set(pristine) - wanted
                  and not name.startswith("__") and _code_of(node) != _code_of(pristine[name])
                  and all(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
                          for d in node.decorator_list)}
        needed: set[str] = set()
        todo = [methods[g] for g in wanted if g in methods]
        while todo:
            for name in _own_attributes(todo.pop(), cls) & edited - needed:
                needed.add(name)
                todo.append(methods[name])
        taken = set(methods) | bound_names(pristine_cls.body) | {a.attr for a in ast.walk(tree)
                                                                 if isinstance(a, ast.Attribute)}
        if needed:
            plan[cls] = {old: fresh_name(old, taken) for old in sorted(needed)}
    if not plan:
        return donor, []
    def edit(node: ast.stmt, chunk: str) -> str:
        if not (isinstance(node, ast.ClassDef) and node.name in plan):
            return chunk
        within = goals[node.name] | set(plan[node.name])
        return _edit_chunk(chunk, _MethodRenamer(node.name, plan[node.name], within), donor_file)

    text = per_statement(donor, tree, edit)
    return text, [f"{c}.{old} -> {c}.{new}" for c, names in plan.items() for old, new in names.items()]


def _edit_chunk(chunk: str, transformer: cst.CSTTransformer, donor_file: str) -> str:
    """One module-level statement through a LibCST transformer, every other byte kept."""
    newline = "\r\n" if "\r\n" in chunk else "\n"
    suffix = ("" if chunk.endswith(("\n", "\r")) else newline) + SENTINEL
    try:
        code = cst.parse_module(chunk + suffix).visit(transformer).code
    except cst.ParserSyntaxError as exc:
        raise LmrError(f"LibCST cannot parse it: {exc.message}", donor_file) from None
    return code[: len(code) - len(suffix)]


class _MethodRenamer(cst.CSTTransformer):
    """Renames methods of one class (its direct defs) and, in the methods ``within``, the attribute reads of them
    through ``self``, ``cls`` or the class's name."""

    def __init__(self, cls: str, renamed: dict[str, str], within: set[str]) -> None:
        self.cls, self.renamed, self.within, self.depth, self.funcs = cls, renamed, within, 0, list[str]()

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.depth += 1
        return self.depth == 1  # the class itself; a nested class has methods of its own

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self.depth -= 1
        if self.depth:
            return updated_node
        body = [n.with_changes(name=cst.Name(self.renamed[n.name.value]))
                if isinstance(n, cst.FunctionDef) and n.name.value in self.renamed else n
                for n in updated_node.body.body]  # the class body's own defs
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.funcs.append(node.name.value)
        return True

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self.funcs.pop()
        return updated_node

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
        new = self.renamed.get(updated_node.attr.value)
        owner = updated_node.value
        if new and self.funcs and self.funcs[0] in self.within and isinstance(owner, cst.Name) \
                and owner.value in ("self", "cls", self.cls):  # fmt: skip
            return updated_node.with_changes(attr=cst.Name(new))
        return updated_node
