"""Messages between the trusted test process and the candidate's worker process of a split run.

A message is a frame on a pipe: ``LMRB``, an 8-byte big-endian length, then the body: an 8-byte length, a JSON
header (the message, and the offset and size of each array), then the arrays as .npy bytes. Values are encoded
with the value codec (``lmrbench_codec``, the same module as ``lmrbench_values``). Never pickle; numpy only
when a message holds arrays. A frame read from the candidate is
size-capped, its JSON depth-bounded, and its values decoded strictly (no import, no call of a named type).
"""

from __future__ import annotations

import io
import json
import os
from typing import Any

__tracebackhide__ = True  # pytest leaves this module's frames out of a failing test's traceback: the reader sees
# the test's line and the message, and pytest parses no source of this file per failure

MAGIC = b"LMRB"
MAX_DEPTH = 200
"""Deepest JSON nesting accepted in a message."""


class WireError(Exception):
    """A frame that cannot be read: the other side is gone, or sent something malformed or too large."""


def json_depth(text: str) -> int:
    """The deepest nesting of brackets in JSON text (strings skipped); linear, no recursion."""
    depth = deepest = 0
    in_str = escaped = False
    for ch in text:
        if in_str:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def loads_bounded(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` that refuses text nested deeper than ``max_depth`` (ValueError)."""
    if json_depth(text) > max_depth:
        raise ValueError(f"JSON nested deeper than {max_depth} levels")
    return json.loads(text)


def pack(message: dict[str, Any], arrays: dict[str, Any]) -> bytes:
    """The frame of one message: a JSON header (the message and where each array's .npy bytes lie), then
    the arrays' bytes. numpy is needed only when there are arrays."""
    blobs, spans, at = [], {}, 0
    for key, array in arrays.items():
        import numpy as np

        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.asarray(array), allow_pickle=False)
        blobs.append(buf.getvalue())
        spans[key] = [at, len(blobs[-1])]
        at += len(blobs[-1])
    head = json.dumps({"message": message, "arrays": spans}, ensure_ascii=False).encode("utf-8")
    body = len(head).to_bytes(8, "big") + head + b"".join(blobs)
    return MAGIC + len(body).to_bytes(8, "big") + body


def send(fd: int, message: dict[str, Any], arrays: dict[str, Any]) -> None:
    """Write one frame to ``fd`` (WireError when the reader is gone)."""
    data = memoryview(pack(message, arrays))
    try:
        while data:
            n = os.write(fd, data)
            data = data[n:]
    except OSError as exc:
        raise WireError(f"the other process is gone ({exc.strerror or exc})") from None


def _read_exact(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise WireError("the other process closed the channel")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def recv(fd: int, limit: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Read one frame of at most ``limit`` bytes: the message and its arrays."""
    head = _read_exact(fd, 12)
    if head[:4] != MAGIC:
        raise WireError("a malformed frame")
    size = int.from_bytes(head[4:], "big")
    if size > limit:
        raise WireError(f"a message of {size} bytes, over the {limit}-byte limit")
    body = _read_exact(fd, size)
    try:
        n = int.from_bytes(body[:8], "big")
        head = loads_bounded(body[8:8 + n].decode("utf-8"))
        message, spans = head["message"], dict(head["arrays"])
        arrays = {str(k): _array(body[8 + n + int(a):8 + n + int(a) + int(b)]) for k, (a, b) in spans.items()}
    except (ValueError, KeyError, TypeError, OSError, UnicodeDecodeError) as exc:
        raise WireError(f"a malformed message: {exc}") from None
    if not isinstance(message, dict):
        raise WireError("a malformed message: not an object")
    return message, arrays


def _array(blob: bytes) -> Any:
    import numpy as np

    return np.lib.format.read_array(io.BytesIO(blob), allow_pickle=False)
