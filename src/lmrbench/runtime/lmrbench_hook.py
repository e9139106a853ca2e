"""An import hook that recognises goal files by their path, whatever name they are imported under, lets each
run as usual, then hands the module to a callback (the recorder wraps the goal functions, the split run's
proxy replaces them). Shared by ``lmrbench_record`` and ``lmrbench_proxy``; standard library only."""

from __future__ import annotations

import importlib.abc
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

AfterExec = Callable[[Any, str], None]
"""Called with the module just run and the goal file's real path."""


def install(paths: set[str], after_exec: AfterExec) -> None:
    """Put the hook first on ``sys.meta_path`` for the goal files at ``paths`` (real paths)."""
    sys.meta_path.insert(0, _Finder(paths, after_exec))


class _Finder(importlib.abc.MetaPathFinder):
    """Finds modules through the other finders and wraps the loader of a goal file."""

    def __init__(self, paths: set[str], after_exec: AfterExec) -> None:
        self.paths, self.after_exec = paths, after_exec
        self.local = threading.local()
        keys = [_file_key(p) for p in paths]
        self.files = None if None in keys else set(keys)

    def _goal_path(self, origin: str) -> str | None:
        """The goal file's real path when ``origin`` is one. Any other module is told apart by its device
        and inode, one stat, instead of ``realpath``'s stat of every folder on its way (goal files that did
        not exist at the start are looked for by real path only)."""
        if self.files is not None and origin not in self.paths and _file_key(origin) not in self.files:
            return None
        real = os.path.realpath(origin)
        return real if real in self.paths else None

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if getattr(self.local, "busy", False):
            return None
        self.local.busy = True
        try:
            spec = None
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(name, path, target)
                if spec is not None:
                    break
        finally:
            self.local.busy = False
        if spec is None or not spec.origin or spec.loader is None:
            return spec
        real = self._goal_path(spec.origin)
        if real is not None:
            spec.loader = _Loader(spec.loader, self.after_exec, real)
        return spec


def _file_key(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


class _Loader(importlib.abc.Loader):
    """Runs the goal module as usual, then calls back."""

    def __init__(self, inner: Any, after_exec: AfterExec, path: str) -> None:
        self.inner, self.after_exec, self.path = inner, after_exec, path

    def create_module(self, spec: Any) -> Any:
        return self.inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.inner.exec_module(module)
        self.after_exec(module, self.path)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
