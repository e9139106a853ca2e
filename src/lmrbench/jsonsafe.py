"""JSON from files and replies that lmrbench did not write: nesting bounded before it is parsed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lmrbench.errors import LmrError
from lmrbench.runtime.lmrbench_wire import json_depth


class TooDeep(LmrError, ValueError):
    """JSON nested deeper than allowed (a ValueError too, so that reply parsers treat it as a bad reply)."""


MAX_DEPTH = 100
"""Deepest nesting accepted: far beyond any real info.json, notebook or reply, far below Python's recursion
limit."""


def loads(text: str | bytes, *, where: Path | str | None = None, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` that refuses deeper nesting than ``max_depth`` with an LmrError naming ``where``;
    malformed JSON stays a ``json.JSONDecodeError`` (a ValueError) for the caller to word."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if json_depth(text) > max_depth:
        raise TooDeep(f"JSON nested deeper than {max_depth} levels; refused", where)
    return json.loads(text)
