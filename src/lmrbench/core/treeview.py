"""A repository tree as a run sees it, read in place instead of copied: a folder less some paths, with some
files written over it. A split run's two trees are views of the task's own repository (the trusted one less
stale logs; the candidate's one less the tests and data, with its goal files spliced), so a run neither copies
nor deletes the repository, and the sandbox can keep what it streamed of an unchanged folder."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

SKIP_NAMES = frozenset({".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})
"""Folders no run tree holds: history and caches."""
COMPILED_SUFFIXES = (".pyc", ".pyo")
"""Files no run tree holds: a stray compiled file may carry the golden code's names and constants."""


def skipped(name: str) -> bool:
    """True for a cache folder or a compiled file, which no run tree holds."""
    return name in SKIP_NAMES or name.endswith(COMPILED_SUFFIXES)


@dataclass(frozen=True, eq=False)
class TreeView:
    """The files of ``base`` (less caches and compiled files) less the paths in ``drop``, with ``files``
    written over them or added."""

    base: Path
    drop: frozenset[str] = frozenset()
    """Repository-relative POSIX paths (files or folders) left out."""
    files: Mapping[str, bytes] = field(default_factory=dict)
    """Repository-relative POSIX paths and their content, over whatever ``base`` holds there."""

    def dropped(self, rel: str) -> bool:
        """True when the base's ``rel`` is not part of the view (itself or a folder above it left out)."""
        parts = PurePosixPath(rel).parts
        return any("/".join(parts[: k + 1]) in self.drop for k in range(len(parts)))

    def listing(self) -> list[tuple[str, os.stat_result]]:
        """(relative path, lstat) of the base's folders, files and links that the view keeps, parents first;
        the paths in ``files`` are left to the caller."""
        out: list[tuple[str, os.stat_result]] = []
        for folder, dirs, names in os.walk(self.base):
            rel_folder = os.path.relpath(folder, self.base)
            prefix = "" if rel_folder == "." else PurePosixPath(Path(rel_folder)).as_posix() + "/"
            kept_dirs = []
            for name in sorted(dirs):
                rel = prefix + name
                if skipped(name) or rel in self.drop:
                    continue
                st = os.lstat(os.path.join(folder, name))
                out.append((rel, st))
                if not stat.S_ISLNK(st.st_mode):
                    kept_dirs.append(name)
            dirs[:] = kept_dirs
            for name in sorted(names):
                rel = prefix + name
                if skipped(name) or rel in self.drop or rel in self.files:
                    continue
                out.append((rel, os.lstat(os.path.join(folder, name))))
        return out

    def read_bytes(self, rel: str) -> bytes | None:
        """The content of the view's file ``rel``; None when it holds no regular file there."""
        rel = PurePosixPath(rel).as_posix()
        if rel in self.files:
            return self.files[rel]
        parts = PurePosixPath(rel).parts
        if not parts or ".." in parts or rel.startswith("/") or self.dropped(rel):
            return None
        if any(skipped(p) for p in parts):
            return None
        path = self.base.joinpath(*parts)
        return path.read_bytes() if path.is_file() else None


Tree = Path | TreeView
"""What a sandbox runs on: a folder (copied as it is) or a view."""


def read_tree_file(tree: Tree, rel: str) -> bytes | None:
    """The content of ``rel`` in ``tree``; None when it holds no regular file there."""
    if isinstance(tree, TreeView):
        return tree.read_bytes(rel)
    path = Path(tree) / rel
    return path.read_bytes() if path.is_file() else None


def describe(tree: Tree) -> str:
    """What a run's tree is, in one line: a folder, or a view (its base, what it leaves out, what it writes
    over it)."""
    if isinstance(tree, Path):
        return str(tree)
    over = f"; written over it: {', '.join(sorted(tree.files))}" if tree.files else ""
    return f"{tree.base} less {len(tree.drop)} paths{over}"
