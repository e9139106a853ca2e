"""A task's unit test files, read and parsed, and the two names static readers of them take from a node.

Shared by ``task check`` (its test lint and smells) and the trust reader of the data tests read
(:mod:`lmrbench.core.datareads`), which the grader and ``export-agent`` use too.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from lmrbench import pyparse
from lmrbench.core.taskset import Task
from lmrbench.core.trust import impl_test_files
from lmrbench.schemas.task_info import Implementation


def dotted_name(expr: ast.AST) -> str:
    """``a.b.c`` for a name or an attribute chain on a name, '' for anything else (``f().x``)."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    return ".".join([expr.id, *reversed(parts)]) if isinstance(expr, ast.Name) else ""


def call_name(call: ast.Call) -> str:
    """The called name: ``f`` for ``f(x)`` and ``a.b.f(x)``, '' for anything else."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


@dataclass(frozen=True)
class UnitTestFile:
    """A unit test file of an implementation, read and parsed."""

    rel: str
    """Relative to the repository folder."""
    where: str
    """Relative to the task folder (the finding's path)."""
    text: str
    tree: ast.Module


def read_unit_tests(task: Task, impl: Implementation) -> list[UnitTestFile]:
    """The implementation's unit test files that exist and parse (``core.trust.impl_test_files``: the declared
    ones, else the official ``unit_test/unit_test_<index>.py``); when there are none, the
    ``unit_test/unit_test*.py`` files of the repository that no other implementation declares."""
    rels = impl_test_files(task, impl)  # the files the harness runs
    if not rels and (task.repo_dir / "unit_test").is_dir():
        found = (task.repo_dir / "unit_test").glob("unit_test*.py")
        others = {r for i in task.info.implementations if i.index != impl.index for r in i.unit_test_files}
        rels = sorted(r for p in found if (r := p.relative_to(task.repo_dir).as_posix()) not in others)
    out = []
    for rel in rels:
        path = task.repo_dir / rel
        if not path.is_file() or path.is_symlink():
            continue
        text = path.read_bytes()[:2_000_000].decode("utf-8", errors="replace")
        try:
            out.append(UnitTestFile(rel, f"{task.info.repo_folder_name}/{rel}", text, pyparse.parse(text)))
        except SyntaxError:
            continue
    return out
