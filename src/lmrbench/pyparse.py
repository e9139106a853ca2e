"""``ast.parse`` that is safe to call from several threads at once.

CPython 3.11 before 3.11.9 keeps the recursion counter of its AST-to-Python conversion in state shared by all
threads, so two threads parsing at the same moment can fail with ``SystemError: AST constructor recursion depth
mismatch`` (seen here under ``--jobs 2``). Every parse in lmrbench goes through this lock; parsing is fast next to
what the threads wait on (containers, HTTP), so the lock costs nothing measurable.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)`` under a process-wide lock."""
    with _LOCK:
        return ast.parse(source, filename=filename)
