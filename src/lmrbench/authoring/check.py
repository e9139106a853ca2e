"""Static checks of a task folder (``lmrbench tasks check``): every problem as a :class:`Finding`.

Files declared in info.json exist and parse, the goal functions exist, no symlink leaves the task, no test is
offered as retrieval context, no copy or near-copy of a golden body and no compiled Python is left in the
repository (:mod:`lmrbench.authoring.nearcopy`), the tests can tell a candidate from the golden code
(:mod:`lmrbench.authoring.testlint`), the recorded tests use the checker info.json names, and the Dockerfile
follows the conventions. The codes are listed in :data:`lmrbench.authoring.findings.RULES`.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

from lmrbench import pyparse
from lmrbench.authoring import nearcopy
from lmrbench.authoring.findings import Finding
from lmrbench.core.taskset import Task, load_taskset
from lmrbench.defaults import recording_folder
from lmrbench.errors import LmrError
from lmrbench.schemas.task_info import Implementation

MIN_LEAK_LINES = 2
"""Bodies shorter than this many code lines are not searched for exact copies."""
_MAX_FILE_BYTES = 2_000_000
_COMPILED = (".pyc", ".pyo")


def _norm_line(line: str) -> str:
    return re.sub(r"\s+", "", line.split("#", 1)[0])


def _find_def(tree: ast.Module, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    scope: list[ast.stmt] = tree.body
    node: ast.AST | None = None
    for part in qualname.split("."):
        matches = [n for n in scope if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                   and n.name == part]
        if not matches:
            return None
        node = matches[-1]  # the implementation comes after any typing.overload stubs
        scope = node.body  # type: ignore[attr-defined]
    return node if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else None


def golden_body_text(source: str, qualname: str) -> str | None:
    """The source lines of ``qualname``'s body without its docstring (None when there is no such function)."""
    node = _find_def(pyparse.parse(source), qualname)
    if node is None:
        return None
    body = node.body
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        body = body[1:]
    if not body:
        return ""
    return "\n".join(source.splitlines()[body[0].lineno - 1 : node.end_lineno])


def golden_body_lines(source: str, qualname: str) -> list[str] | None:
    """The golden body of ``qualname`` (docstring excluded) as normalised, non-blank code lines."""
    text = golden_body_text(source, qualname)
    if text is None:
        return None
    return [n for n in (_norm_line(ln) for ln in text.splitlines()) if n]


def _find_run(haystack: list[str], needle: list[str]) -> int:
    """Where ``needle`` first appears contiguously in ``haystack`` (-1 when it does not)."""
    k = len(needle)
    first = needle[0]
    return next((i for i, tok in enumerate(haystack) if tok == first and haystack[i : i + k] == needle), -1)


def golden_bodies(task: Task, impl: Implementation) -> dict[str, str]:
    """Each goal function's golden body text, by qualname (functions that cannot be read are left out)."""
    out: dict[str, str] = {}
    golden = impl.golden_file if isinstance(impl.golden_file, list) else [impl.golden_file] if impl.golden_file else []
    for k in range(len(golden)):
        path = task.golden_path(impl, k)
        try:
            source = path.read_bytes().decode("utf-8", errors="replace")
            for q in impl.qualnames:
                if q not in out and (body := golden_body_text(source, q)) is not None:
                    out[q] = body
        except (OSError, SyntaxError):
            continue
    return out


def find_copies(task: Task, impl: Implementation) -> list[nearcopy.NearCopy]:
    """Copies and near-copies of ``impl``'s golden bodies in the task's repository, best first.

    The one entry point of the leak scan: a fingerprint scan for bodies long enough to compare fuzzily, and a
    search for the whole normalized token sequence of the short ones (score 1.0).
    """
    bodies = golden_bodies(task, impl)
    if not bodies or not task.repo_dir.is_dir():
        return []
    found = nearcopy.scan(task.repo_dir, bodies)
    fuzzy = {q for q, b in bodies.items() if len(nearcopy.body_fingerprints(b)[0]) >= nearcopy.MIN_FINGERPRINTS}
    short = {q: [t.text for t in nearcopy.tokens(b)] for q, b in bodies.items() if q not in fuzzy
             and len([n for n in (_norm_line(ln) for ln in b.splitlines()) if n]) >= MIN_LEAK_LINES}
    if short:
        for path in nearcopy.text_files(task.repo_dir):
            text = nearcopy.read_text(path)
            if text is None:
                continue
            toks = nearcopy.tokens(text)
            words = [t.text for t in toks]
            for q, body in short.items():
                at = _find_run(words, body)
                if at >= 0:
                    line = toks[at].line
                    end = toks[at + len(body) - 1].line
                    found.append(nearcopy.NearCopy(path.relative_to(task.repo_dir).as_posix(), line, end, 1.0, q))
    return sorted(found, key=lambda c: (-c.score, c.path))


def find_leaks(task: Task, impl: Implementation) -> list[str]:
    """Files of the task's repository that hold a copy or near-copy of a golden body of ``impl``."""
    return sorted({c.path for c in find_copies(task, impl)})


def compiled_files(repo: Path) -> list[str]:
    """Compiled Python files (``.pyc``, ``__pycache__``) under ``repo``, relative to it."""
    out = []
    for root, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d not in nearcopy.SKIP_DIRS]
        out += [(Path(root) / f).relative_to(repo).as_posix() for f in files if f.endswith(_COMPILED)]
    return sorted(out)


def escaping_symlinks(task_dir: Path) -> list[str]:
    """Symlinks in the task folder whose target resolves outside it, relative to the folder."""
    root = task_dir.resolve()
    out = []
    for base, dirs, files in os.walk(task_dir):
        for name in [*dirs, *files]:
            p = Path(base) / name
            if p.is_symlink():
                target = p.resolve()
                if target != root and root not in target.parents:
                    out.append(p.relative_to(task_dir).as_posix())
    return sorted(out)


def _impl_findings(task: Task, impl: Implementation) -> list[Finding]:
    from lmrbench.authoring.testlint import test_findings

    out: list[Finding] = []
    repo = task.info.repo_folder_name
    tag = f"implementation {impl.index}"

    def add(code: str, path: str, message: str, line: int = 0) -> None:
        out.append(Finding(code, task.name, path, f"{tag}: {message}", line))

    if not impl.qualnames:
        add("F106", "info.json", "names no goal_function")
    goldens = impl.golden_file if isinstance(impl.golden_file, list) else [impl.golden_file] if impl.golden_file else []
    golden_src: dict[str, str] = {}
    for k, rel in enumerate(goldens):
        gp = task.golden_path(impl, k)
        if not gp.is_file():
            add("F102", "info.json", f"golden_file {rel!r} does not exist")
            continue
        text = gp.read_bytes().decode("utf-8", errors="replace")
        try:
            pyparse.parse(text)
            golden_src[rel] = text
        except SyntaxError as exc:
            add("F103", rel, f"golden file does not parse: {exc.msg}", exc.lineno or 0)
    if not goldens:
        add("F102", "info.json", "has no golden_file")
    for goal in impl.goal_files:
        if not (task.repo_dir / goal).is_file():
            add("F101", "info.json", f"goal_file {goal!r} does not exist in {repo}/")
    for q in impl.qualnames:
        if golden_src and not any(_find_def(pyparse.parse(s), q) for s in golden_src.values()):
            add("F104", next(iter(golden_src)), f"{q} is not defined in the golden file")
        masked = [task.repo_dir / g for g in impl.goal_files if (task.repo_dir / g).is_file()]
        defined = False
        for m in masked:
            try:
                defined = defined or _find_def(pyparse.parse(m.read_bytes().decode("utf-8", "replace")), q) is not None
            except SyntaxError:
                defined = True  # a masked file that does not parse is the stub's business, not this rule's
        if masked and not defined:
            add("F105", f"{repo}/{impl.goal_files[0]}", f"{q} is not defined in the masked goal file")
    if not impl.unit_test_files:
        add("F107", "info.json", "has no unit_test_file")
    for test in impl.unit_test_files:
        if not (task.repo_dir / test).is_file():
            add("F108", "info.json", f"unit_test_file {test!r} does not exist in {repo}/")
    if impl.category is not None and impl.category.strip() and impl.category_normalized is None:
        add("F111", "info.json", f"category {impl.category!r} matches none of the nine categories")
    tests = set(impl.unit_test_files)
    for ctx in impl.retrieval_context:
        if ctx in tests or Path(ctx).name.startswith(("unit_test", "test_")) or "unit_test/" in ctx:
            add("F110", "info.json", f"retrieval context {ctx!r} is a test file: it shows the model the tests")
        elif not (task.repo_dir / ctx).is_file():
            add("F109", "info.json", f"retrieval context {ctx!r} does not exist")
    for c in find_copies(task, impl):
        where = f"{repo}/{c.path}"
        if c.score >= 1.0:
            add("L201", where, f"holds the golden body of {c.qualname} (score 1.00)", c.start_line)
        else:
            add("L202", where, f"lines {c.start_line}-{c.end_line} repeat the golden body of {c.qualname} "
                f"(score {c.score:.2f})", c.start_line)
    out += test_findings(task, impl)
    out += _checker_findings(task, impl)
    out += _unvaried_findings(task, impl)
    return out


def _unvaried_findings(task: Task, impl: Implementation) -> list[Finding]:
    """T306: the recording says that no case varies a parameter (``unvaried`` in its index.json)."""
    from pydantic import ValidationError

    from lmrbench.schemas.recording import RecordingIndex

    index = task.repo_dir / recording_folder(impl.index) / "index.json"
    try:
        unvaried = RecordingIndex.model_validate_json(index.read_bytes()).unvaried if index.is_file() else []
    except (ValidationError, ValueError, OSError):
        return []
    rel = index.relative_to(task.path).as_posix()
    return [Finding("T306", task.name, rel, f"implementation {impl.index}: no test varies {param}; a candidate "
                    "that ignores it passes (record a run that varies it)") for param in unvaried]


def _checker_findings(task: Task, impl: Implementation) -> list[Finding]:
    """T305: the checker in info.json is not the one the recorded tests were written with."""
    from pydantic import ValidationError

    from lmrbench.authoring.recorded_tests import default_checker
    from lmrbench.schemas.recording import RecordingIndex

    index = task.repo_dir / recording_folder(impl.index) / "index.json"
    if impl.checker is None or not index.is_file():
        return []
    try:
        recorded = RecordingIndex.model_validate_json(index.read_bytes()).checker
    except (ValidationError, ValueError, OSError):
        return []
    now = default_checker(impl)
    if now == recorded:
        return []
    rel = index.relative_to(task.path).as_posix()
    return [Finding("T305", task.name, "info.json", f"implementation {impl.index}: checker "
                    f"{_checker_text(now)} differs from {_checker_text(recorded)} the tests were recorded with "
                    f"({rel}); run `lmrbench task record` again")]


def _checker_text(c: object) -> str:
    kind = getattr(c, "kind", "?")
    if kind == "numeric":
        return f"numeric(rtol={getattr(c, 'rtol', '?')}, atol={getattr(c, 'atol', '?')})"
    if kind == "text":
        return f"text(threshold={getattr(c, 'text_threshold', '?')})"
    return str(kind)


def leak_findings(task: Task) -> list[Finding]:
    """The L2xx findings of a task: copies and near-copies of its golden bodies, compiled Python."""
    return [f for f in task_findings(task) if f.code.startswith("L")]


def task_findings(task: Task) -> list[Finding]:
    """Every finding of one task."""
    from lmrbench.authoring.dockerfile import DOCKERFILE, dockerfile_findings

    out: list[Finding] = []
    dockerfile = task.path / DOCKERFILE
    if dockerfile.is_file():
        out += dockerfile_findings(dockerfile.read_text(errors="replace"), task.name)
    else:
        out.append(Finding("D401", task.name, DOCKERFILE, "missing; the task cannot be built in Docker"))
    for link in escaping_symlinks(task.path):
        out.append(Finding("F112", task.name, link, "is a symlink that leads out of the task folder"))
    pyc = compiled_files(task.repo_dir) if task.repo_dir.is_dir() else []
    if pyc:
        more = f" and {len(pyc) - 3} more" if len(pyc) > 3 else ""
        out.append(Finding("L203", task.name, f"{task.info.repo_folder_name}/{pyc[0]}",
                           f"compiled Python ({', '.join(pyc[:3])}{more}) holds the golden code's names and "
                           "constants; delete it"))
    for impl in task.info.implementations:
        out += _impl_findings(task, impl)
    return out


def check_task(task: Task) -> list[str]:
    """Every problem of one task as a one-line string naming the file; empty when the task is clean.

    Notes (conventions of lmrbench that a foreign task need not follow) are left out.
    """
    from lmrbench.authoring.findings import Severity

    return [f"{task.path / f.path if f.path else task.path}{':' + str(f.line) if f.line else ''}: "
            f"{f.code} {f.message}" for f in task_findings(task) if f.severity > Severity.NOTE]


def taskset_findings(bench: Path) -> tuple[list[str], list[Finding]]:
    """(names of the tasks checked, findings) of a task set; a task that does not load is one F001 finding."""
    tasks, errors = load_taskset(bench)
    names = [t.name for t in tasks]
    findings = [f for t in tasks for f in task_findings(t)]
    for err in errors:
        name = Path(err.path).parent.name if err.path else "?"
        names.append(name)
        findings.append(Finding("F001", name, "info.json", err.problem))
    return sorted(names), findings


def check_taskset(bench: Path) -> list[tuple[str, list[str]]]:
    """(task name, problems) for every task of a set; a task that does not load is one problem line."""
    tasks, errors = load_taskset(bench)
    out: list[tuple[str, list[str]]] = [(t.name, check_task(t)) for t in tasks]
    for err in errors:
        name = Path(err.path).parent.name if err.path else "?"
        out.append((name, [str(err)]))
    return sorted(out, key=lambda item: item[0])


__all__ = ["LmrError", "check_task", "check_taskset", "find_copies", "find_leaks", "golden_body_lines",
           "task_findings", "taskset_findings"]
