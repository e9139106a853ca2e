"""``ast.parse`` that is safe to call from several threads at once.

CPython 3.11 before 3.11.9 keeps the recursion counter of its AST-to-Python conversion in state shared by all
threads, so two threads parsing at the same moment can fail with ``SystemError: AST constructor recursion depth
mismatch`` (seen here under ``--jobs 2``). Every parse in lmrbench goes through this lock; parsing is fast next to
what the threads wait on (containers, HTTP), so the lock costs nothing measurable.
"""

from __future__ import annotations

import ast
import codecs
import io
import re
import threading
import tokenize

_LOCK = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)`` under a process-wide lock."""
    with _LOCK:
        return ast.parse(source, filename=filename)


_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.M)


def source_encoding(raw: bytes) -> str:
    """The encoding Python reads a source file's bytes with (PEP 263: a BOM or a coding line in the first two
    lines, else UTF-8); ``utf-8`` for a BOM too (the BOM is kept in the text). SyntaxError for a coding line
    that names an unknown encoding or contradicts the BOM."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError:
        if _COOKIE.search(b"\n".join(raw.split(b"\n", 2)[:2])):
            raise
        return "utf-8"  # no coding line: the bytes are not UTF-8, and decoding says where
    return "utf-8" if encoding == "utf-8-sig" else encoding


def decode_source(raw: bytes) -> str:
    """A Python source file's text, decoded as Python decodes it (``source_encoding``); UnicodeDecodeError or
    SyntaxError when it cannot be."""
    return raw.decode(source_encoding(raw))


def encode_source(text: str) -> bytes:
    """The bytes of a source text in the encoding its own coding line declares (UTF-8 without one), so that
    Python reads back the same text; UnicodeEncodeError when a character has no place in that encoding."""
    head = "\n".join(text.split("\n", 2)[:2]).encode("utf-8", errors="replace")
    found = _COOKIE.search(head)
    if found is None or text.startswith("\ufeff"):
        return text.encode("utf-8")
    try:
        encoding = codecs.lookup(found.group(1).decode("ascii", errors="replace")).name
    except LookupError:
        return text.encode("utf-8")
    return text.encode(encoding)


def find_def(tree: ast.Module, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The definition of ``qualname`` (``f``, ``Class.method``, ``outer.inner``) in a module, or None."""
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


def imported_modules(tree: ast.Module) -> set[str]:
    """The top-level names of the modules a module imports absolutely, anywhere in it (``import torch.nn`` and
    ``from torch import nn`` give ``torch``; relative imports are left out)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module.split(".")[0])
    return out


_COMPOUND = ("For", "AsyncFor", "While", "If", "With", "AsyncWith", "Try", "TryStar", "Match", "FunctionDef",
             "AsyncFunctionDef", "ClassDef")


def simple_statement_spans(text: str) -> list[tuple[int, int]]:
    """(first, end) character offsets of the simple statements (assignments, calls, returns...) of an indented
    body's text, those nested in its loops and branches included; [] when it does not parse."""
    try:
        tree = parse("if 1:\n" + text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def offset(lineno: int, col: int) -> int:  # ast columns count UTF-8 bytes
        line = lines[lineno - 2]
        return starts[lineno - 2] + len(line.encode("utf-8")[:col].decode("utf-8", errors="ignore"))

    return [(offset(n.lineno, n.col_offset), offset(n.end_lineno or n.lineno, n.end_col_offset or 0))
            for n in ast.walk(tree) if isinstance(n, ast.stmt) and type(n).__name__ not in _COMPOUND
            and n.lineno >= 2]
