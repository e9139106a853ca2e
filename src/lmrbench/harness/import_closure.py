"""The installed modules a task's goal and test files import, followed through the repository's own modules:
what a warm boot of the task's trusted runs imports once (``harness.warm.warm_preload``), so that each run it
forks finds them imported instead of paying for them again (seconds for torch, transformers, sympy).

The repository's own modules are followed, never returned: their code is what is graded, and it differs from one
variant to the next. Nor are the harness's ``lmrbench_*`` modules, nor the standard library's (after pytest most
of it is imported already, and the rest costs milliseconds). A wrong guess costs the boot one failed import,
never a result: the boot drops a module that fails, and the run that imports it gets the real error.
"""

from __future__ import annotations

import ast
import itertools
import os
import sys
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from lmrbench import pyparse
from lmrbench.core.taskset import Task
from lmrbench.core.trust import impl_test_files
from lmrbench.errors import LmrError
from lmrbench.fsutil import read_capped
from lmrbench.schemas.task_info import Implementation, as_list

MAX_FILES = 400
"""Most repository files read while following imports."""
MAX_MODULES = 200
"""Most module names returned."""
MAX_FILE_BYTES = 4 << 20
"""Largest source file read."""
MAX_FOLDERS = 5000
"""Most repository folders listed for the names they hold (``_path_names``)..."""
MAX_ENTRIES = 200_000
"""...and most entries of them read."""
_SKIP = frozenset({"__future__", "__main__", "sitecustomize", "usercustomize", "conftest"})
"""Names never preloaded: the interpreter's own, and those the harness or pytest give a run."""
_LOCK = threading.Lock()
_KEPT: dict[tuple[object, ...], tuple[tuple[str, ...], tuple[str, ...], tuple[int, ...]]] = {}
"""``closure_modules``' results: (modules, the paths they depend on, those paths' stamps), by task and
implementation; the ``_KEEP`` latest."""
_KEEP = 64


class Import(NamedTuple):
    """One imported module: ``base`` is the folder a relative import starts from (None: absolute)."""

    base: Path | None
    parts: tuple[str, ...]
    """Its dotted name, as parts (``()`` for ``from . import x``)."""
    names: tuple[str, ...]
    """What ``from ... import`` takes from it (``()`` for ``import``)."""


def closure_modules(task: Task, impl: Implementation) -> tuple[str, ...]:
    """The installed modules ``impl``'s goal files (masked, and golden: an import inside a goal function's body
    is only there), its test files and the ``conftest.py`` files pytest loads for them import, directly or
    through the repository's own modules (see the module docstring), sorted. Kept per task and implementation
    until a file it read or a folder it listed changes."""
    key = (str(task.path), impl.index, tuple(impl.goal_files), tuple(impl.unit_test_files))
    with _LOCK:
        kept = _KEPT.get(key)
    if kept is not None and _stamp(kept[1]) == kept[2]:
        return kept[0]
    tests = impl_test_files(task, impl)
    conftests = dict.fromkeys((d / "conftest.py").as_posix() for t in tests for d in PurePosixPath(t).parents)
    golden = dict(zip(impl.goal_files, (task.path / g for g in as_list(impl.golden_file) if g), strict=False))
    try:
        closure = _closure(task.repo_dir, [*impl.goal_files, *tests, *conftests], golden)
    except (OSError, ValueError, RecursionError):  # a folder it may not list: no preload, never a failed run
        return ()
    with _LOCK:
        if len(_KEPT) >= _KEEP:
            del _KEPT[next(iter(_KEPT))]  # the oldest
        watched = tuple(map(str, closure.watched))
        _KEPT[key] = (tuple(closure.modules), watched, _stamp(watched))
    return tuple(closure.modules)


def import_closure(repo: Path, seeds: Iterable[str], stand_ins: Mapping[str, Path] | None = None) -> list[str]:
    """The modules outside ``repo`` that the files ``seeds`` (repository-relative) import, following the imports
    that name the repository's own modules to their files; dotted as imported (``from a.b import c`` gives
    ``a.b``), sorted, at most ``MAX_MODULES``. ``stand_ins``: more files to read, each as if it were the seed it
    is keyed by (a golden file for its masked goal file). Unreadable files and syntax errors are passed over."""
    try:
        return _closure(repo, seeds, stand_ins or {}).modules
    except (OSError, ValueError, RecursionError):
        return []


class _Closure(NamedTuple):
    modules: list[str]
    watched: tuple[Path, ...]
    """The files read and the folders listed: a change to any of them may change the modules."""


def _closure(repo: Path, seeds: Iterable[str], stand_ins: Mapping[str, Path]) -> _Closure:
    repo = repo.resolve()
    seeds = [rel for rel in seeds if _inside(repo, repo / rel)]
    roots = _roots(repo, [repo / rel for rel in seeds])
    shadowed, folders = _path_names(repo)
    # (the file read, where it stands in the repository: what its relative imports start from)
    queue = deque([(repo / rel, repo / rel) for rel in seeds])
    queue.extend((Path(stand_ins[rel]), repo / rel) for rel in seeds if rel in stand_ins)
    seen = {read for read, _ in queue}
    found: dict[str, None] = {}
    reads = 0
    while queue and reads < MAX_FILES and len(found) < MAX_MODULES:
        path, at = queue.popleft()
        reads += 1
        tree = _parse(path)
        if tree is None:
            continue
        for imp in _imports(tree, at, repo):
            local = _local_files(imp, roots)
            if local is None:
                if _wanted(imp.parts[0], roots, shadowed):
                    found.setdefault(".".join(imp.parts), None)
                continue
            for file in local:
                if file not in seen:
                    seen.add(file)
                    queue.append((file, file))
    return _Closure(sorted(list(found)[:MAX_MODULES]), (*seen, *roots, *folders))


def _stamp(paths: tuple[str, ...]) -> tuple[int, ...]:
    """Each path's modification time (-1: absent)."""
    out = []
    for path in paths:
        try:
            out.append(os.stat(path).st_mtime_ns)
        except OSError:
            out.append(-1)
    return tuple(out)


def _inside(repo: Path, path: Path) -> bool:
    try:
        return path.resolve().is_relative_to(repo)
    except (OSError, RuntimeError):
        return False


def _roots(repo: Path, files: list[Path]) -> list[Path]:
    """The folders a run may import top-level modules from: the repository's root (the working folder), its
    ``src/``, and each seed file's first folder upwards that is no package (pytest's ``prepend`` mode puts it
    first on ``sys.path``)."""
    roots = [repo, repo / "src"]
    for file in files:
        folder = file.parent
        while folder != repo and (folder / "__init__.py").is_file() and repo in folder.parents:
            folder = folder.parent
        roots.append(folder)
    return [r for r in dict.fromkeys(roots) if r.is_dir() and _inside(repo, r)]


def _parse(path: Path) -> ast.Module | None:
    try:
        return pyparse.parse(read_capped(path, MAX_FILE_BYTES), filename=str(path))
    except (LmrError, OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _imports(tree: ast.Module, path: Path, repo: Path) -> list[Import]:
    """Every import of the module at ``path``, anywhere in it (function bodies and ``try`` blocks too)."""
    out: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend(Import(None, tuple(a.name.split(".")), ()) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = tuple(node.module.split(".")) if node.module else ()
            names = tuple(a.name for a in node.names if a.name != "*")
            if not node.level:
                out.append(Import(None, parts, names))
                continue
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
            if _inside(repo, base):
                out.append(Import(base, parts, names))
    return [i for i in out if all(p.isidentifier() for p in i.parts) and (i.parts or i.base is not None)]


def _local_files(imp: Import, roots: list[Path]) -> list[Path] | None:
    """The repository files importing ``imp`` runs: each package's ``__init__.py`` on the way, the module's
    file, and those of the names it imports that are submodules; None when the module is not the repository's
    own."""
    if imp.base is not None:  # relative: always the repository's own
        return _walk(imp.base, imp.parts, imp.names)
    for root in roots:
        if (root / imp.parts[0]).is_dir() or (root / f"{imp.parts[0]}.py").is_file():
            return _walk(root, imp.parts, imp.names)
    return None


def _walk(root: Path, parts: tuple[str, ...], names: tuple[str, ...]) -> list[Path]:
    files: list[Path] = []
    folder = root
    for part in parts:
        if (folder / part / "__init__.py").is_file():
            folder = folder / part
            files.append(folder / "__init__.py")
        elif (folder / f"{part}.py").is_file():
            files.append(folder / f"{part}.py")
            return files  # what follows is an attribute of that module
        elif (folder / part).is_dir():
            folder = folder / part  # a namespace package
        else:
            return files
    for name in names:  # ``from pkg import sub``: sub may be a module of the package
        if (folder / f"{name}.py").is_file():
            files.append(folder / f"{name}.py")
        elif (folder / name / "__init__.py").is_file():
            files.append(folder / name / "__init__.py")
    return files


def _path_names(repo: Path) -> tuple[set[str], list[Path]]:
    """The top-level modules a folder of the repository that is no package holds (``name.py``, or ``name/``
    with an ``__init__.py``): any such folder may be put on ``sys.path`` by a test or a conftest, and a
    preloaded module of that name would then stand in for the repository's own. With the folders listed."""
    names: set[str] = set()
    folders: list[Path] = []
    todo = [repo]
    seen = 0
    while todo and len(folders) < MAX_FOLDERS and seen < MAX_ENTRIES:
        folder = todo.pop()
        folders.append(folder)
        try:
            with os.scandir(folder) as it:
                entries = list(itertools.islice(it, MAX_ENTRIES - seen))
        except OSError:
            continue
        seen += len(entries)
        package = any(e.name == "__init__.py" for e in entries)
        for entry in entries:
            if entry.name.startswith(".") or entry.name == "__pycache__":
                continue
            if entry.is_dir(follow_symlinks=False):
                todo.append(Path(entry.path))
                if not package and os.path.isfile(os.path.join(entry.path, "__init__.py")):
                    names.add(entry.name)
            elif not package and entry.name.endswith(".py"):
                names.add(entry.name[:-3])
    return names, folders


def _wanted(top: str, roots: list[Path], shadowed: set[str]) -> bool:
    """Whether an installed top-level module may be preloaded: not the standard library's, not the harness's,
    not a module of the repository (``_path_names``), and not shadowed by a file or folder of that name where a
    run imports from (``_roots``)."""
    if not top.isidentifier() or top in _SKIP or top in sys.stdlib_module_names or top.startswith("lmrbench_"):
        return False
    if top in shadowed:
        return False
    return not any((r / top).exists() or (r / f"{top}.py").exists() for r in roots)
