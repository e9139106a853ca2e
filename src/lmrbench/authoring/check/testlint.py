"""Static checks of a task's unit tests: tests that cannot tell a candidate from the golden code.

- T301: the test imports the golden code (``golden_files``, or the golden module by name), so it always tests
  the golden code;
- T302: the test never mentions the goal function, so it cannot call it;
- T303: an assertion compares values that all come from the goal function itself (``f(x) == f(x)``, or an
  expected value computed by ``f``): it holds for any candidate that does not crash;
- T304: an official script-style test looks for lowercase ``passed`` while its logs are read for ``Passed``.

What static reading cannot decide, ``lmrbench validate`` decides by running the masked stub and the mutants.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from lmrbench.authoring.check.findings import Finding
from lmrbench.core.taskset import Task
from lmrbench.core.testfiles import call_name, read_unit_tests
from lmrbench.schemas.task_info import Implementation

_ASSERT_FUNCS = re.compile(r"^(assert\w*|allclose|isclose|array_equal|equal)$", re.IGNORECASE)
_LOWER_PASSED = re.compile(r"\bpassed\b")


def _golden_modules(task: Task, impl: Implementation) -> set[str]:
    names = {"golden_files"}
    golden = impl.golden_file
    for g in [golden] if isinstance(golden, str) else list(golden or []):
        names.add(Path(g).stem)
    return names


def _imports_golden(tree: ast.Module, modules: set[str]) -> int:
    """The line of the first import of a golden module (0 when none)."""
    for node in ast.walk(tree):
        found: list[str] = []
        if isinstance(node, ast.Import):
            found = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            found = [node.module or ""] + [a.name for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "golden_files" in node.value:
            return node.lineno
        if any(set(name.split(".")) & modules for name in found):
            return getattr(node, "lineno", 0)
    return 0


def _mentions(tree: ast.Module, names: set[str]) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names:
            return True
        if isinstance(node, ast.Attribute) and node.attr in names:
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name).split(".")[-1] in names:
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
            return True
    return False


CALL_STYLE = frozenset({"forward", "__call__"})
"""Goal methods that run when the instance itself is called (``module(x)`` runs ``forward``)."""


def instance_call_names(impl: Implementation) -> set[str]:
    """Names whose mention lets a test reach the goal functions without naming them: the class of a goal
    ``forward``/``__call__`` (its instances are called), or a goal that is a class itself."""
    out = set()
    for q in impl.qualnames:
        parts = q.split(".")
        if len(parts) >= 2 and parts[-1] in CALL_STYLE | {parts[-2]}:
            out.add(parts[-2])
    return out


def _call_names(tree: ast.Module, goals: set[str]) -> set[str]:
    """Local names bound to a goal function (``from m import f as g``, ``g = obj.f``)."""
    out = set(goals)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            out |= {a.asname for a in node.names if a.asname and a.name in goals}
        elif isinstance(node, ast.Assign) and _calls_goal(node.value, goals, set(), bare=True):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def _calls_goal(expr: ast.AST, calls: set[str], tainted: set[str], *, bare: bool = False) -> bool:
    """True when ``expr`` calls a goal function or reads a value computed by one."""
    for node in ast.walk(expr):
        target = node.func if isinstance(node, ast.Call) else node if bare else None
        if isinstance(target, ast.Name) and target.id in calls:
            return True
        if isinstance(target, ast.Attribute) and target.attr in calls:
            return True
        if isinstance(node, ast.Name) and node.id in tainted:
            return True
    return False


_ONE_VALUE_ASSERTS = frozenset({"assertTrue", "assertFalse", "assert_", "assertIsNone", "assertIsNotNone"})


def _compared(node: ast.AST) -> list[ast.expr] | None:
    """The operands an assertion compares, or None when it is not a comparison (messages are never operands)."""
    if isinstance(node, ast.Assert):
        test = node.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq | ast.Is):
            return [test.left, test.comparators[0]]
        if isinstance(test, ast.Call):
            return _compared(ast.Expr(test))
        return None
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        name = call_name(call)
        if name in _ONE_VALUE_ASSERTS:
            first = call.args[0] if call.args else None
            return _compared(ast.Assert(test=first)) if first is not None else None
        if _ASSERT_FUNCS.match(name) and len(call.args) >= 2:
            return list(call.args[:2])
    return None


def _tautologies(tree: ast.Module, calls: set[str]) -> list[int]:
    """Lines of assertions whose compared values all come from the goal function."""
    lines = []
    scopes: list[ast.AST] = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    for scope in [tree, *scopes]:
        body = scope.body if isinstance(scope, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef) else []
        tainted: set[str] = set()
        for stmt in body:
            for node in ast.walk(stmt) if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) else []:
                if isinstance(node, ast.Assign) and _calls_goal(node.value, calls, tainted):
                    tainted |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
                ops = _compared(node)
                same = ops is not None and ast.dump(ops[0]) == ast.dump(ops[-1])  # T306's case
                if ops and not same and all(_calls_goal(op, calls, tainted) for op in ops):
                    lines.append(getattr(node, "lineno", 0))
    return sorted(set(lines))


def _is_legacy(text: str) -> bool:
    """A script-style test, or any test that logs its result for the official statistics (``logs/``)."""
    logs = "logging.basicConfig" in text or "'logs'" in text or '"logs"' in text
    return bool(re.search(r"test (passed|failed)", text, re.IGNORECASE)) and ("def test" not in text or logs)


def _lowercase_passed(tree: ast.Module) -> int:
    """The line of a lowercase "passed" string in a script that never writes "Passed" (0 when none)."""
    strings = [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    if any("Passed" in text for _, text in strings):
        return 0
    return next((line for line, text in strings if _LOWER_PASSED.search(text)), 0)


def test_findings(task: Task, impl: Implementation) -> list[Finding]:
    """The T301-T304 findings of one implementation's unit test files."""
    out: list[Finding] = []
    goals = {q.split(".")[-1] for q in impl.qualnames}
    callers = goals | instance_call_names(impl)
    modules = _golden_modules(task, impl)
    for tf in read_unit_tests(task, impl):
        tree, where = tf.tree, tf.where
        line = _imports_golden(tree, modules)
        if line:
            out.append(Finding("T301", task.name, where, "imports the golden code: it always tests the golden "
                               "code, never the candidate", line))
        if goals and not _mentions(tree, callers):
            out.append(Finding("T302", task.name, where, f"never calls {', '.join(sorted(goals))}: it cannot "
                               "test the candidate"))
        elif goals:
            for ln in _tautologies(tree, _call_names(tree, goals)):
                out.append(Finding("T303", task.name, where, "compares the goal function's result with values "
                                   "the goal function computed itself", ln))
        if _is_legacy(tf.text):
            line = _lowercase_passed(tree)
            if line:
                out.append(Finding("T304", task.name, where, 'logs lowercase "passed"; results are read for '
                                   '"Passed", so it can never pass', line))
    return out
