"""Writes that never leave a half-written file or folder behind: write to a temp sibling, then rename."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
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


def current_umask() -> int:
    """The process umask, read without changing it (os.umask would, for a moment, in every thread)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


@contextlib.contextmanager
def staging_dir(final: Path, *, replace: bool = False) -> Iterator[Path]:
    """Yield a temp folder beside ``final``; on success it is renamed to ``final``, on error removed.

    With ``replace`` an existing ``final`` is swapped out only after the new one is complete.
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent))
    try:
        os.chmod(tmp, 0o777 & ~current_umask())  # mkdtemp makes it 0700; a folder made in place would not be
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


def read_capped(path: Path, limit: int, *, shown: Path | str | None = None) -> bytes:
    """The bytes of an untrusted file, stat-checked before it is read: a regular file, not a link, at most
    ``limit`` bytes (and never more read, should it grow meanwhile). LmrError naming the file otherwise."""
    from lmrbench.errors import LmrError

    path = Path(path)
    where = shown if shown is not None else path
    try:
        st = path.lstat()
    except OSError as exc:
        raise LmrError(f"cannot read: {exc.strerror or exc}", where) from None
    if stat.S_ISLNK(st.st_mode):
        raise LmrError("is a symbolic link; refused", where)
    if not stat.S_ISREG(st.st_mode):
        raise LmrError("is not a regular file", where)
    if st.st_size > limit:
        raise LmrError(f"is {st.st_size} bytes, over the {limit}-byte limit", where)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise LmrError(f"cannot read: {exc.strerror or exc}", where) from None
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise LmrError(f"grew over the {limit}-byte limit while it was read", where)
    return data


def links_leaving(root: Path) -> list[Path]:
    """Symbolic links under ``root`` whose target resolves outside it (dangling ones included), sorted."""
    root = Path(root)
    bad: list[Path] = []
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            if path.is_symlink() and not is_within(root, path.resolve()):
                bad.append(path)
    return sorted(bad)


def tree_digest(root: Path, *, skip: frozenset[str] | set[str] = frozenset(), salt: bytes = b"") -> str:
    """sha256 over every path under ``root`` and its content (a link by its target), read in chunks; folders
    and files named in ``skip`` are left out. One digest for "has this task changed" everywhere."""
    h = hashlib.sha256(salt + b"\0")
    root = Path(root)
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        for name in sorted(files):
            if name in skip:
                continue
            path = Path(folder) / name
            h.update(path.relative_to(root).as_posix().encode() + b"\0")
            try:
                if path.is_symlink():
                    h.update(b"link:" + os.readlink(path).encode())
                else:
                    with path.open("rb") as fh:
                        while chunk := fh.read(1 << 20):
                            h.update(chunk)
            except OSError:
                h.update(b"unreadable")
            h.update(b"\0")
    return h.hexdigest()


LFS_POINTER_START = b"version https://git-lfs.github.com/spec/v1\n"
"""How a Git LFS pointer file begins (a clone made without git-lfs holds these instead of the content)."""
_LFS_POINTER_MAX = 1024


def is_lfs_pointer(path: Path) -> bool:
    """True for a Git LFS pointer: a small regular file (not a link) holding the LFS spec line and an oid."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _LFS_POINTER_MAX:
            return False
        with open(path, "rb") as fh:
            head = fh.read(_LFS_POINTER_MAX)
    except OSError:
        return False
    return head.startswith(LFS_POINTER_START) and b"\noid sha256:" in head


def lfs_pointers(root: Path, *, skip: frozenset[str] = frozenset({".git"})) -> list[Path]:
    """The Git LFS pointer files below ``root`` (relative, sorted), folders named in ``skip`` left out."""
    out = []
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        out += [Path(dirpath, f).relative_to(root) for f in files if is_lfs_pointer(Path(dirpath, f))]
    return sorted(out)


def holds_no_file(folder: Path) -> bool:
    """True when ``folder`` is missing or no file lies anywhere below it (a git submodule never checked out)."""
    return all(not files for _base, _dirs, files in os.walk(folder))
