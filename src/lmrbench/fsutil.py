"""Writes that never leave a half-written file or folder behind: write to a temp sibling, then rename."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# Temp files are created 0600; the renamed file gets the mode a plain open() would give it.
_FILE_MODE = 0o666 & ~_read_umask()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temp file in the same folder and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, _FILE_MODE)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write UTF-8 text atomically, keeping the line endings given (no newline translation)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, data: Any) -> None:
    """Write JSON (indent 4, UTF-8, trailing newline) atomically."""
    atomic_write_text(path, json.dumps(data, indent=4, ensure_ascii=False) + "\n")


@contextlib.contextmanager
def staging_dir(final: Path, *, replace: bool = False) -> Iterator[Path]:
    """Yield a temp folder beside ``final``; on success it is renamed to ``final``, on error removed.

    With ``replace`` an existing ``final`` is swapped out only after the new one is complete.
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent))
    try:
        yield tmp
        if final.exists():
            if not replace:
                raise FileExistsError(final)
            old = final.with_name(f".{final.name}.old-{os.getpid()}")
            os.replace(final, old)
            os.replace(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def is_within(root: Path, candidate: Path) -> bool:
    """True when ``candidate`` (resolved against ``root``) stays inside ``root``."""
    root_r = Path(root).resolve()
    cand = (root_r / candidate).resolve()
    return cand == root_r or root_r in cand.parents
