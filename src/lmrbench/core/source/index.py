"""Index every function and method of a repository with the stdlib ``ast`` (fast enough for a picker).

Naming rules, shared with masking and splicing (``core/source/_cst.py``):

- a qualified name joins the enclosing classes and functions with dots: ``func``, ``Class.method``,
  ``outer.inner``, ``Outer.Inner.method``; ``if``/``try``/``with``/``for``/``while``/``match`` blocks add
  nothing;
- a property getter is ``Class.prop``; its setter and deleter (``@prop.setter``, ``@prop.deleter``) are
  ``Class.prop.setter`` and ``Class.prop.deleter``;
- ``typing.overload`` stubs share the implementation's name and are flagged ``is_overload``; masking and
  splicing address the implementation and leave the stubs alone;
- ``lineno`` is the first line of the definition (its first decorator, if any), ``end_lineno`` its last line;
- a name defined more than once in a file (in two branches of an ``if``) is told apart by that line:
  ``Class.method@147`` (``function_refs``, ``split_line``).
"""

from __future__ import annotations

import ast
import contextlib
import gc
import os
import re
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lmrbench import pyparse
from lmrbench.errors import LmrError
from lmrbench.progress import Progress, check_cancel

#: Folder names never indexed (besides every folder whose name starts with a dot and every virtualenv).
SKIP_DIRS = frozenset({"__pycache__", "node_modules", "build", "dist", "site-packages", "venv"})
_ACCESSORS = ("setter", "deleter", "getter")
_PROPERTY_DECORATORS = frozenset(
    {"property", "cached_property", "functools.cached_property", "abc.abstractproperty", "abstractproperty"}
)


@dataclass(frozen=True, slots=True)
class FunctionInfo:
    """One function or method of a file."""

    file: str
    qualname: str
    name: str
    class_name: str
    lineno: int
    end_lineno: int
    is_async: bool
    is_method: bool
    is_property: bool
    is_nested: bool
    is_overload: bool
    decorators: tuple[str, ...]

    @property
    def length(self) -> int:
        """Number of lines of the definition, decorators included."""
        return self.end_lineno - self.lineno + 1

    @property
    def ref(self) -> str:
        """``file::qualname``, the form the command line takes."""
        return f"{self.file}::{self.qualname}"


_AT_LINE = re.compile(r"^(?P<name>.*?)\s*@\s*(?P<line>\d+)$")


def split_line(name: str) -> tuple[str, int | None]:
    """``("Class.method", 147)`` for ``Class.method@147``; ``(name, None)`` for a name without a line."""
    m = _AT_LINE.match(name)
    if m is None:
        return name, None
    return m["name"], int(m["line"])


def function_refs(functions: Sequence[FunctionInfo]) -> list[str]:
    """The reference of each function, in order: ``file::qualname``, with ``@line`` added when the file defines
    that name more than once (not counting ``typing.overload`` stubs, which stand for their implementation)."""
    counts = Counter((f.file, f.qualname) for f in functions if not f.is_overload)
    return [f"{f.ref}@{f.lineno}" if not f.is_overload and counts[(f.file, f.qualname)] > 1 else f.ref
            for f in functions]


@dataclass
class RepoIndex:
    """The functions of a repository and the files that could not be indexed (one LmrError each)."""

    functions: list[FunctionInfo] = field(default_factory=list)
    problems: list[LmrError] = field(default_factory=list)
    files: int = 0


def name_segment(name: str, decorators: tuple[str, ...]) -> str:
    """The last part of a qualified name: ``name``, or ``name.setter`` for a property accessor."""
    for deco in decorators:
        head, _, attr = deco.rpartition(".")
        if head == name and attr in _ACCESSORS:
            return deco
    return name


def is_overload_decorator(deco: str) -> bool:
    """True for ``overload``, ``typing.overload`` and the like."""
    return deco == "overload" or deco.endswith(".overload")


def _is_property(name: str, decorators: tuple[str, ...]) -> bool:
    return any(d in _PROPERTY_DECORATORS for d in decorators) or name_segment(name, decorators) != name


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is ast.Name:
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _decorator_text(node: ast.expr) -> str:
    """``name`` or ``a.b`` for a dotted decorator, ``a.b(...)`` for a call of one, else its source text."""
    dotted = _dotted(node)
    if dotted is not None:
        return dotted
    if type(node) is ast.Call:
        dotted = _dotted(node.func)
        if dotted is not None:
            return dotted + "(...)"
    return ast.unparse(node)


_FUNC = ast.FunctionDef
_ASYNC = ast.AsyncFunctionDef
_CLASS = ast.ClassDef
_BLOCK_FIELDS: dict[type, tuple[str, ...]] = {
    ast.If: ("body", "orelse"),
    ast.For: ("body", "orelse"),
    ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"),
    ast.With: ("body",),
    ast.AsyncWith: ("body",),
    ast.Try: ("body", "handlers", "orelse", "finalbody"),
    ast.TryStar: ("body", "handlers", "orelse", "finalbody"),
    ast.ExceptHandler: ("body",),
    ast.Match: ("cases",),
    ast.match_case: ("body",),
}


def _walk(body: list, file: str, out: list[FunctionInfo]) -> None:
    """Append the functions under ``body`` to ``out``; visits statements only, never expressions."""
    found: list[FunctionInfo] = []
    blocks = _BLOCK_FIELDS
    # (statements, qualname prefix, innermost class, directly in a class, inside a function)
    stack: list[tuple[list, str, str, bool, bool]] = [(body, "", "", False, False)]
    while stack:
        stmts, prefix, cls, in_class, in_func = stack.pop()
        for node in stmts:
            kind = type(node)
            if kind is _FUNC or kind is _ASYNC:
                if node.decorator_list:
                    decos = tuple(_decorator_text(d) for d in node.decorator_list)
                    segment = name_segment(node.name, decos)
                    start = node.decorator_list[0].lineno
                    is_prop = _is_property(node.name, decos)
                    is_over = any(is_overload_decorator(d) for d in decos)
                else:
                    decos, segment, start, is_prop, is_over = (), node.name, node.lineno, False, False
                qualname = prefix + segment
                found.append(
                    FunctionInfo(
                        file, qualname, node.name, cls, start, node.end_lineno or node.lineno,
                        kind is _ASYNC, in_class, is_prop, in_func, is_over, decos,
                    )
                )  # fmt: skip
                stack.append((node.body, qualname + ".", cls, False, True))
            elif kind is _CLASS:
                stack.append((node.body, prefix + node.name + ".", node.name, True, in_func))
            elif kind in blocks:
                for name in blocks[kind]:
                    stack.append((getattr(node, name), prefix, cls, in_class, in_func))
    found.sort(key=_start_and_depth)
    out.extend(found)


def _start_and_depth(info: FunctionInfo) -> tuple[int, int]:
    return (info.lineno, info.qualname.count("."))


def index_tree(tree: ast.Module, file: str) -> list[FunctionInfo]:
    """The functions of an already parsed module, in source order."""
    out: list[FunctionInfo] = []
    _walk(tree.body, file, out)
    return out


def parse_python(source: str | bytes, file: str) -> ast.Module:
    """``ast.parse`` with a one-line LmrError naming the file for a syntax error or a non-UTF-8 file."""
    if isinstance(source, str) and source.startswith("\ufeff"):
        source = source[1:]  # a decoded byte order mark
    try:
        return pyparse.parse(source, filename=file)
    except SyntaxError as exc:
        msg = exc.msg or "invalid syntax"
        if "codec can't decode" in msg:
            raise LmrError(f"not valid UTF-8 ({msg.split(': ', 1)[-1]})", file) from None
        raise LmrError(f"syntax error at line {exc.lineno}: {msg}", file) from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise LmrError(f"cannot be parsed: {exc}", file) from None


def index_source(source: str, file: str) -> list[FunctionInfo]:
    """Every function of one source text, in source order; LmrError for a syntax error."""
    return index_tree(parse_python(source, file), file)


def _skip_dir(entry: os.DirEntry[str]) -> bool:
    name = entry.name
    if name.startswith(".") or name in SKIP_DIRS or name.endswith(".egg-info"):
        return True
    return os.path.exists(os.path.join(entry.path, "pyvenv.cfg"))


def python_files(root: Path) -> list[str]:
    """Paths (posix, relative to ``root``) of the ``.py`` files to index, sorted.

    Skipped: dot folders (``.git``, ``.venv``, ``.tox``...), virtualenvs (a ``pyvenv.cfg``), ``__pycache__``,
    ``node_modules``, ``build``, ``dist``, ``site-packages`` and ``*.egg-info``.
    """
    found: list[str] = []
    stack = [("", os.fspath(root))]
    while stack:
        rel, path = stack.pop()
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if not _skip_dir(entry):
                    stack.append((rel + entry.name + "/", entry.path))
            elif entry.name.endswith(".py") and entry.is_file():
                found.append(rel + entry.name)
    found.sort()
    return found


_gc_lock = threading.Lock()
_gc_users = 0
_gc_was_enabled = True


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while indexing (safe when several threads index at once).

    Syntax trees and FunctionInfo objects hold no reference cycles, so reference counting frees everything;
    without the pause, collections triggered by ``ast.parse``'s allocations keep re-scanning the growing
    result list, which cost about a quarter of the indexing time on a 2,000-file repository.
    """
    global _gc_users, _gc_was_enabled
    with _gc_lock:
        if _gc_users == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_users += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_users -= 1
            if _gc_users == 0 and _gc_was_enabled:
                gc.enable()


def index_repo_report(
    root: Path, *, progress: Progress | None = None, cancel: threading.Event | None = None
) -> RepoIndex:
    """Index every Python file under ``root``; files that cannot be read or parsed go to ``problems``."""
    root = Path(root)
    if not root.is_dir():
        raise LmrError("not a folder", root)
    files = python_files(root)
    if progress is not None:
        progress.start("indexing functions", len(files))
    result = RepoIndex(files=len(files))
    base = os.fspath(root) + os.sep
    with _gc_paused():
        for i, rel in enumerate(files):
            if i % 64 == 0:
                check_cancel(cancel)
            try:
                with open(base + rel, "rb") as fh:
                    data = fh.read()
                tree = parse_python(data, rel)
            except OSError as exc:
                result.problems.append(LmrError(f"cannot be read: {exc.strerror}", rel))
            except LmrError as exc:
                result.problems.append(exc)
            else:
                _walk(tree.body, rel, result.functions)
            if progress is not None:
                progress.advance(1, rel)
    return result


def index_repo(
    root: Path, *, progress: Progress | None = None, cancel: threading.Event | None = None
) -> list[FunctionInfo]:
    """Every function of the repository under ``root`` (files that do not parse are left out).

    Use :func:`index_repo_report` to also learn which files were skipped and why.
    """
    return index_repo_report(root, progress=progress, cancel=cancel).functions
