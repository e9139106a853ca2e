"""A task folder and a task set (a folder of task folders) in the official layout, loaded leniently."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from lmrbench.errors import LmrError
from lmrbench.fsutil import tree_digest
from lmrbench.schemas.task_info import INFO_JSON, Implementation, TaskInfo, load_task_info


@dataclass(frozen=True)
class Task:
    """A loaded task: its folder and its info.json."""

    path: Path
    info: TaskInfo

    @property
    def name(self) -> str:
        """The task folder's name, e.g. 1-DPO."""
        return self.path.name

    @property
    def repo_dir(self) -> Path:
        """The (masked) repository folder inside the task folder."""
        return self.path / self.info.repo_folder_name

    def goal_path(self, impl: Implementation, which: int = 0) -> Path:
        """The goal file of an implementation inside the masked repository."""
        return self.repo_dir / impl.goal_files[which]

    def golden_path(self, impl: Implementation, which: int = 0) -> Path:
        """The golden file of an implementation (relative to the task folder, as the official files say)."""
        golden = impl.golden_file if isinstance(impl.golden_file, str) else impl.golden_file[which]
        return self.path / golden


STATE_DIRS = frozenset({".git", "__pycache__", ".pytest_cache", ".lmrbench", ".mypy_cache", ".ruff_cache"})
"""Folders of a task that are caches or tool state, never part of what the task is."""


def task_digest(task: Task, *, exclude: frozenset[str] = frozenset(), salt: bytes = b"") -> str:
    """sha256 over every file of a task folder, apart from ``STATE_DIRS`` and the names in ``exclude``.

    A run folder records the whole task (the paper included: generation reads it); validation leaves out what
    tests never read (paper, logs) and salts the digest with the way it runs tests.
    """
    return tree_digest(task.path, skip=STATE_DIRS | exclude, salt=salt)


def load_task(path: Path) -> Task:
    """Load one task folder; LmrError naming the file when info.json is missing or invalid."""
    path = Path(path)
    info = load_task_info(path / INFO_JSON)
    if not (path / info.repo_folder_name).is_dir():
        raise LmrError(f"repo_folder_name {info.repo_folder_name!r} is not a folder of the task", path / INFO_JSON)
    return Task(path=path, info=info)


def _sort_key(p: Path) -> tuple[int, str]:
    m = re.match(r"(\d+)", p.name)
    return (int(m.group(1)) if m else 1 << 30, p.name)


def task_dirs(bench: Path) -> list[Path]:
    """Folders of a task set that look like tasks (hold an info.json), in the official numeric order.

    A single task folder given as ``bench`` is a task set of one.
    """
    bench = Path(bench)
    if not bench.is_dir():
        raise LmrError("not a folder", bench)
    if (bench / INFO_JSON).is_file():
        return [bench]
    return sorted((d for d in bench.iterdir() if d.is_dir() and (d / INFO_JSON).exists()), key=_sort_key)


def load_taskset(bench: Path, only: list[str] | None = None) -> tuple[list[Task], list[LmrError]]:
    """Every task of a set; a broken task becomes an error (naming its file) and the others still load.

    ``only`` keeps the tasks whose folder name or instance_id is listed.
    """
    tasks: list[Task] = []
    problems: list[LmrError] = []
    for d in task_dirs(bench):
        if only and d.name not in only and d.name.split("-", 1)[0] not in only:
            continue
        try:
            tasks.append(load_task(d))
        except LmrError as exc:
            problems.append(exc)
    if only:
        found = {t.name for t in tasks} | {t.name.split("-", 1)[0] for t in tasks}
        found |= {Path(p.path or "").parent.name for p in problems}
        for name in only:
            if name not in found:
                problems.append(LmrError(f"no task named {name!r}", bench))
    return tasks, problems
