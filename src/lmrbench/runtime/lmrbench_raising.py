"""Cases that expect an exception: an input of the search's plan on which the golden code raises a builtin
exception by a ``raise`` statement of its own file (an unknown mode, a value out of range) is a call
whose right outcome is that exception, and a program that returns instead is wrong (``lmrbench_scan`` looks for
such inputs).

An exception raised elsewhere (numpy refusing a shape, an index out of range, a lookup) is no such case: a
correct program may fail there otherwise, or not at all.
"""

from __future__ import annotations

import builtins
import json
import linecache
from typing import Any


def deliberate(exc: BaseException, func: Any) -> str:
    """The name of the builtin exception ``exc`` when the golden function ``func`` raised it from a ``raise``
    statement of its own file (its body, or a helper beside it that it calls), else '' (an ``assert`` is a sanity
    check that a correct program may leave out)."""
    name = type(exc).__name__
    if not isinstance(exc, Exception) or getattr(builtins, name, None) is not type(exc):
        return ""
    last = last_traceback(exc)
    code = getattr(func, "__code__", None)
    if last is None or code is None or last.tb_frame.f_code.co_filename != code.co_filename:
        return ""
    line = linecache.getline(code.co_filename, last.tb_lineno).strip()
    return name if line.startswith("raise ") else ""


def last_traceback(exc: BaseException) -> Any:
    """The innermost entry of ``exc``'s traceback (where it was raised), or None."""
    tb, last = exc.__traceback__, None
    while tb is not None:
        last, tb = tb, tb.tb_next
    return last


def raising_case(case: dict[str, Any], arrays: dict[str, Any], name: str) -> tuple[dict[str, Any], Any]:
    """The case of a call on which the golden code raises ``name``: no expected value, nothing changed."""
    new = {**json.loads(json.dumps(case)), "expected": None, "changed": {}, "self_after": None, "raises": name}
    new.pop("held", None)
    new.pop("shares", None)
    return new, {k: a for k, a in arrays.items() if not k.startswith("out")}


def raised_as(exc: BaseException, want: Any) -> bool:
    """True when ``exc`` is what the case ``want`` expects: the builtin exception it names, or one derived."""
    cls = getattr(builtins, want.raises, None) if want.raises else None
    return isinstance(cls, type) and isinstance(exc, cls)
