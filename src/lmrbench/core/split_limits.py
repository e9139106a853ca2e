"""What a split run cannot carry, read from the golden code before any run.

A split run keeps every object a goal call shares with its caller the same on both sides (arguments, the
instance, what they hold, closures: ``runtime/lmrbench_identity.py``), but not the state of the goal module or
of a class itself: the worker imports its own copy of the module, so a goal function that rebinds a module global
(``global STEP``) or sets an attribute of its class (``cls.cache = ...``, ``type(self).count += 1``) changes the
worker's copy, which the tests and the rest of the module on the trusted side never see. Such an implementation
runs shared (weaker evidence), and the reason says which function and which name.
"""

from __future__ import annotations

import ast

from lmrbench import pyparse
from lmrbench.core.taskset import Task
from lmrbench.schemas.task_info import Implementation, as_list


def split_obstacle(task: Task, impl: Implementation) -> str:
    """Why ``impl``'s goal functions cannot run in a process of their own ("" when they can, or when no golden
    file can be read: the run then says what is wrong)."""
    for k, _ in enumerate(as_list(impl.golden_file)):
        try:
            tree = pyparse.parse(task.golden_path(impl, k).read_bytes())
        except (OSError, SyntaxError, ValueError, IndexError):
            continue
        for qualname in impl.qualnames:
            node = pyparse.find_def(tree, qualname)
            if node is None:
                continue
            why = _module_or_class_state(node, qualname)
            if why:
                return f"the goal function {qualname} {why}, which a split run keeps in the candidate's process"
    return ""


def _module_or_class_state(node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str) -> str:
    """What module or class state the body of ``node`` changes ("" when none)."""
    owner = qualname.rpartition(".")[0]
    first = node.args.args[0].arg if node.args.args else ""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Global):
            return f"rebinds the module global {sub.names[0]} (`global {', '.join(sub.names)}`)"
        targets = sub.targets if isinstance(sub, ast.Assign) else (
            [sub.target] if isinstance(sub, ast.AugAssign | ast.AnnAssign) else [])
        for target in targets:
            if isinstance(target, ast.Attribute) and _is_class(target.value, owner, first, node):
                return f"sets the class attribute {ast.unparse(target)}"
    return ""


def _is_class(expr: ast.expr, owner: str, first: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether ``expr`` names the goal method's class: ``cls`` of a classmethod, ``type(self)``,
    ``self.__class__`` or the class by its name."""
    if not owner:
        return False
    classmethod_ = any(isinstance(d, ast.Name) and d.id == "classmethod" for d in node.decorator_list)
    if isinstance(expr, ast.Name):
        return expr.id == owner.rpartition(".")[2] or (classmethod_ and expr.id == first)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "type":
        return len(expr.args) == 1 and isinstance(expr.args[0], ast.Name) and expr.args[0].id == first
    return (isinstance(expr, ast.Attribute) and expr.attr == "__class__" and isinstance(expr.value, ast.Name)
            and expr.value.id == first)
