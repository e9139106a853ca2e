"""Static checks of a task folder: files declared in info.json exist, and no copy of a golden body leaks."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from lmrbench import jsonsafe, pyparse
from lmrbench.core.taskset import Task, load_taskset
from lmrbench.errors import LmrError
from lmrbench.schemas.task_info import Implementation

# Files searched for leaked golden bodies (text that could hold code).
LEAK_SUFFIXES = frozenset({".py", ".ipynb", ".txt", ".md", ".rst", ".pyx", ".cfg", ".json", ".yaml", ".yml", ".sh"})
MIN_LEAK_LINES = 2
_MAX_FILE_BYTES = 2_000_000


def _norm_line(line: str) -> str:
    return re.sub(r"\s+", "", line.split("#", 1)[0])


def golden_body_lines(source: str, qualname: str) -> list[str] | None:
    """The golden body of ``qualname`` (docstring excluded) as normalised, non-blank code lines."""
    tree = pyparse.parse(source)
    parts = qualname.split(".")
    scope: list[ast.stmt] = tree.body
    node: ast.AST | None = None
    for part in parts:
        matches = [n for n in scope if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                   and n.name == part]
        if not matches:
            return None
        node = matches[-1]  # the implementation comes after any typing.overload stubs
        scope = node.body  # type: ignore[attr-defined]
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    body = node.body
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        body = body[1:]
    if not body:
        return []
    lines = source.splitlines()[body[0].lineno - 1 : node.end_lineno]
    return [n for n in (_norm_line(ln) for ln in lines) if n]


def _file_lines(path: Path) -> list[str]:
    raw = path.read_bytes()[:_MAX_FILE_BYTES].decode("utf-8", errors="replace")
    if path.suffix == ".ipynb":
        try:
            cells = jsonsafe.loads(raw).get("cells", [])
            raw = "\n".join("".join(c.get("source", [])) if isinstance(c.get("source"), list)
                            else str(c.get("source", "")) for c in cells)
        except (json.JSONDecodeError, AttributeError):
            pass
    return [n for n in (_norm_line(ln) for ln in raw.splitlines()) if n]


def _contains_run(haystack: list[str], needle: list[str]) -> bool:
    """True when the distinctive lines of ``needle`` appear in order, contiguously, in ``haystack``."""
    k = len(needle)
    first = needle[0]
    return any(haystack[i : i + k] == needle for i, line in enumerate(haystack) if line == first)


def find_leaks(task: Task, impl: Implementation) -> list[str]:
    """Files of the task's repository that still hold the golden body of any goal function of ``impl``."""
    golden = task.golden_path(impl)
    if not golden.is_file():
        return []
    source = golden.read_bytes().decode("utf-8", errors="replace")
    bodies = []
    for qualname in impl.qualnames:
        try:
            body = golden_body_lines(source, qualname)
        except SyntaxError:
            return []
        if body and len(body) >= MIN_LEAK_LINES:
            bodies.append(body)
    if not bodies:
        return []
    leaks = []
    for path in sorted(task.repo_dir.rglob("*")):
        if path.is_file() and path.suffix in LEAK_SUFFIXES:
            lines = _file_lines(path)
            if any(_contains_run(lines, body) for body in bodies):
                leaks.append(path.relative_to(task.repo_dir).as_posix())
    return leaks


def check_task(task: Task) -> list[str]:
    """Every problem of one task as a one-line string naming the file; empty when the task is clean."""
    from lmrbench.authoring.dockerfile import DOCKERFILE, dockerfile_warnings

    problems: list[str] = []
    info_path = task.path / "info.json"
    dockerfile = task.path / DOCKERFILE
    if dockerfile.is_file():
        problems += dockerfile_warnings(dockerfile.read_text(errors="replace"), dockerfile)
    else:
        problems.append(f"{dockerfile}: missing; the task cannot be built in Docker")
    for impl in task.info.implementations:
        tag = f"{info_path}: implementation {impl.index}"
        for goal in impl.goal_files:
            if not (task.repo_dir / goal).is_file():
                problems.append(f"{tag}: goal_file {goal!r} does not exist in {task.info.repo_folder_name}/")
        for k in range(len(impl.golden_file) if isinstance(impl.golden_file, list) else 1):
            gp = task.golden_path(impl, k) if impl.golden_file else None
            if gp is None or not gp.is_file():
                problems.append(f"{tag}: golden_file {impl.golden_file!r} does not exist")
        if not impl.unit_test_files:
            problems.append(f"{tag}: no unit_test_file")
        for test in impl.unit_test_files:
            if not (task.repo_dir / test).is_file():
                problems.append(f"{tag}: unit_test_file {test!r} does not exist in {task.info.repo_folder_name}/")
        if impl.category is not None and impl.category.strip() and impl.category_normalized is None:
            problems.append(f"{tag}: category {impl.category!r} matches none of the nine categories")
        for ctx in impl.retrieval_context:
            if not (task.repo_dir / ctx).is_file():
                problems.append(f"{tag}: retrieval context {ctx!r} does not exist")
        if impl.goal_functions and impl.golden_file:
            for leak in find_leaks(task, impl):
                problems.append(f"{task.repo_dir / leak}: holds the golden body of "
                                f"{', '.join(impl.qualnames)} (leaked solution, implementation {impl.index})")
    return problems


def check_taskset(bench: Path) -> list[tuple[str, list[str]]]:
    """(task name, problems) for every task of a set; a task that does not load is one problem line."""
    tasks, errors = load_taskset(bench)
    out: list[tuple[str, list[str]]] = [(t.name, check_task(t)) for t in tasks]
    for err in errors:
        name = Path(err.path).parent.name if err.path else "?"
        out.append((name, [str(err)]))
    return sorted(out, key=lambda item: item[0])


__all__ = ["LmrError", "check_task", "check_taskset", "find_leaks", "golden_body_lines"]
