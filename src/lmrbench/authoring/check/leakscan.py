"""The golden code left in a task's repository (L2xx): copies and near-copies of the golden bodies, compiled Python.

One pass over the repository serves every implementation of the task: each file worth reading
(:mod:`lmrbench.authoring.check.scanfiles`) is read once and searched for all golden bodies at once. In a goal file,
the masked goal function itself is left out (a partly masked stub repeats part of its own body by design), and
its whole-line comments are searched too, uncommented (the official 14 keeps its golden body there). A function
the golden body calls is the repository's code that the golden code relies on: a place inside it is no leak.
"""

from __future__ import annotations

import ast
import keyword
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from lmrbench import pyparse
from lmrbench.authoring.check import nearcopy
from lmrbench.authoring.check.scanfiles import Skips, scan_texts, walk_files
from lmrbench.core.taskset import Task
from lmrbench.schemas.task_info import Implementation

MIN_LEAK_LINES = 2
"""Bodies shorter than this many code lines are not searched for exact copies."""
COMPILED = (".pyc", ".pyo")
_MAX_PYC_BYTES = 5_000_000


def golden_body_text(source: str, qualname: str) -> str | None:
    """The source lines of ``qualname``'s body without its docstring (None when there is no such function)."""
    node = pyparse.find_def(pyparse.parse(source), qualname)
    if node is None:
        return None
    body = node.body
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        body = body[1:]
    if not body:
        return ""
    return "\n".join(source.splitlines()[body[0].lineno - 1 : node.end_lineno])


def golden_bodies(task: Task, impl: Implementation) -> dict[str, str]:
    """Each goal function's golden body text, by qualname (functions that cannot be read are left out)."""
    out: dict[str, str] = {}
    golden = impl.golden_file if isinstance(impl.golden_file, list) else [impl.golden_file] if impl.golden_file else []
    for k in range(len(golden)):
        try:
            source = task.golden_path(impl, k).read_bytes().decode("utf-8", errors="replace")
            for q in impl.qualnames:
                if q not in out and (body := golden_body_text(source, q)) is not None:
                    out[q] = body
        except (OSError, SyntaxError):
            continue
    return out


def _code_lines(text: str) -> int:
    return sum(1 for ln in text.splitlines() if ln.split("#", 1)[0].strip())


def _blanked(text: str, pick: Callable[[ast.Module], list[ast.AST]]) -> str:
    """``text`` with the definitions ``pick`` chooses in its tree blanked, decorators included (line numbers
    kept); ``text`` itself when it does not parse."""
    try:
        tree = pyparse.parse(text)
    except SyntaxError:
        return text
    lines = text.split("\n")
    for node in pick(tree):
        first = min([getattr(node, "lineno", 1), *(d.lineno for d in getattr(node, "decorator_list", []))])
        for i in range(first - 1, min(getattr(node, "end_lineno", 0) or 0, len(lines))):
            lines[i] = ""
    return "\n".join(lines)


def _without_stubs(text: str, qualnames: list[str]) -> str:
    """``text`` with the goal functions' own definitions blanked (line numbers kept)."""
    return _blanked(text, lambda tree: [n for q in qualnames if (n := pyparse.find_def(tree, q)) is not None])


_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_COMMENT = re.compile(r"^\s*(?:#+[ \t]?)+")


def called_names(body: str, goals: set[str]) -> frozenset[str]:
    """Names a golden body calls (``sophiag(...)``, ``self.helper(...)``), less dunders, the goals and the
    functions the body defines itself."""
    own = set(re.findall(r"\bdef\s+([A-Za-z_]\w*)", body))
    return frozenset(n for n in _CALLED.findall(body)
                     if not n.startswith("__") and n not in goals and n not in own and not keyword.iskeyword(n))


def _blank_defs(text: str, names: frozenset[str]) -> str:
    """``text`` with the definitions of functions named in ``names`` blanked (line numbers kept)."""
    return _blanked(text, lambda tree: [n for n in ast.walk(tree)
                                        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name in names])


def comment_text(text: str) -> str:
    """The whole-line comments of a Python text with their ``#`` marks taken off, every other line blank (line
    numbers kept): code kept in comments, as it reads uncommented."""
    return "\n".join(_COMMENT.sub("", ln) if ln.lstrip().startswith("#") else "" for ln in text.split("\n"))


@dataclass
class LeakScan:
    """What one pass over a task's repository found."""

    copies: dict[int, list[nearcopy.NearCopy]] = field(default_factory=dict)
    """Copies and near-copies by implementation index, best first. A place inside a function that the golden
    body itself calls (29-Sophia's ``sophiag``, called by the golden ``step``) is the repository's own code,
    which the golden code relies on, and is not counted. A near-copy whose ``lacks`` is not empty is a relative
    of the body without its distinguishing statements (L207, a warning), not the answer."""
    commented: dict[int, list[nearcopy.NearCopy]] = field(default_factory=dict)
    """Copies and near-copies kept in whole-line comments of a masked goal file, by implementation index."""
    skips: Skips = field(default_factory=Skips)
    """Files not read, by reason."""


def scan_task(task: Task, impls: list[Implementation] | None = None) -> LeakScan:
    """Copies and near-copies of the golden bodies of ``impls`` (default: all) in the task's repository."""
    impls = task.info.implementations if impls is None else impls
    result = LeakScan()
    bodies: dict[str, nearcopy.Body] = {}
    called: dict[str, frozenset[str]] = {}
    stubs: dict[str, list[str]] = {}
    goals = {q.split(".")[-1] for impl in impls for q in impl.qualnames}
    for impl in impls:
        result.copies[impl.index], result.commented[impl.index] = [], []
        for q, text in golden_bodies(task, impl).items():
            key = f"{impl.index}\0{q}"
            body = nearcopy.prepare(key, text, exact_ok=_code_lines(text) >= MIN_LEAK_LINES)
            if body is not None:
                bodies[key] = body
                called[key] = called_names(text, goals)
        for goal in impl.goal_files:
            stubs.setdefault(goal, []).extend(impl.qualnames)
    if not bodies or not task.repo_dir.is_dir():
        return result
    for rel, text in scan_texts(task.repo_dir, result.skips):
        if rel in stubs:
            text = _without_stubs(text, stubs[rel])
            for c in nearcopy.scan_text(rel, comment_text(text), list(bodies.values())):
                index, q = c.qualname.split("\0", 1)
                result.commented[int(index)].append(replace(c, qualname=q))
        for c in nearcopy.scan_text(rel, text, list(bodies.values())):
            if rel.endswith(".py") and called[c.qualname]:
                blanked = _blank_defs(text, called[c.qualname])
                if blanked != text:
                    again = nearcopy.scan_text(rel, blanked, [bodies[c.qualname]])
                    if not again:
                        continue  # the copy lay in a function the golden body calls
                    c = again[0]
            index, q = c.qualname.split("\0", 1)
            result.copies[int(index)].append(replace(c, qualname=q))
    for found in [*result.copies.values(), *result.commented.values()]:
        found.sort(key=lambda c: (-c.score, c.path))
    return result


def compiled_files(repo: Path) -> list[str]:
    """Compiled Python files (``.pyc``, ``.pyo``) under ``repo``, relative to it."""
    return [p.relative_to(repo).as_posix() for p in walk_files(repo) if p.name.endswith(COMPILED)]


def pyc_contents(path: Path, goal_names: set[str], golden_only: set[str]) -> tuple[list[str], list[str]]:
    """(goal function names, names only the golden bodies use) found in a compiled file's bytes.

    Names and string constants are stored verbatim in a code object, so a byte search finds them whatever
    Python version wrote the file.
    """
    try:
        raw = path.read_bytes()[:_MAX_PYC_BYTES]
    except OSError:
        return [], []
    return ([n for n in sorted(goal_names) if n.encode() in raw],
            [n for n in sorted(golden_only) if n.encode() in raw])
