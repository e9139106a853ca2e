"""Where a task's Python requirements come from: ``requirements.txt`` (task folder, then repo folder), else the
pip section of a conda ``environment.yml``, else nothing, which is said in a warning rather than silently
giving an empty environment."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from lmrbench.benchmark.sandbox.environments.wheelhouse import requirement_lines
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError

REQUIREMENTS_TXT = "requirements.txt"
ENVIRONMENT_FILES = ("environment.yml", "environment.yaml")


@dataclass(frozen=True)
class TaskRequirements:
    """The requirement lines of a task and where they were read."""

    lines: list[str]
    source: Path | None
    """The file read; None when the task has none."""
    text: str = ""
    """What the environment's hash covers: the file's text (requirements.txt) or the lines taken."""
    warnings: list[str] = field(default_factory=list)
    """One line each, naming the file: what was not taken, or that nothing was found."""


def read_task_requirements(task: Task) -> TaskRequirements:
    """The task's requirements; LmrError naming the file for a pip option or a malformed pip section."""
    for folder in (task.path, task.repo_dir):
        path = folder / REQUIREMENTS_TXT
        if path.is_file():
            text = path.read_text(errors="replace")
            try:
                return TaskRequirements(requirement_lines(text), path, text)
            except LmrError as exc:
                raise LmrError(exc.problem, path) from None
    for folder in (task.path, task.repo_dir):
        for name in ENVIRONMENT_FILES:
            path = folder / name
            if path.is_file():
                return _from_environment(path)
    where = f"{task.name} or {task.name}/{task.info.repo_folder_name}"
    return TaskRequirements([], None, "", [
        f"{where}: no requirements.txt or environment.yml: the environment gets pytest only"])


def _from_environment(path: Path) -> TaskRequirements:
    """The pip section of a conda environment file (a small reader for its usual shape, no YAML library)."""
    pip: list[str] = []
    conda: list[str] = []
    in_deps = False
    pip_indent: int | None = None
    for raw in path.read_text(errors="replace").splitlines():
        line = raw.split(" #", 1)[0].rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            in_deps = line.startswith("dependencies:")
            pip_indent = None
            continue
        if not in_deps:
            continue
        item = re.match(r"^(\s*)-\s*(.*)$", line)
        if pip_indent is not None and indent > pip_indent and item:
            pip.append(item.group(2).strip().strip("'\""))
            continue
        pip_indent = None
        if item and re.fullmatch(r"pip\s*:", item.group(2).strip()):
            pip_indent = len(item.group(1))
        elif item:
            conda.append(item.group(2).strip())
    try:
        lines = requirement_lines("\n".join(pip))
    except LmrError as exc:
        raise LmrError(exc.problem, path) from None
    skipped = [c for c in conda if not re.match(r"^(python|pip)\b", c)]
    warnings = []
    if skipped:
        shown = ", ".join(skipped[:6]) + (f" and {len(skipped) - 6} more" if len(skipped) > 6 else "")
        warnings.append(f"{path}: only the pip section is installed; conda packages left out: {shown}")
    if not lines:
        warnings.append(f"{path}: no pip section: the environment gets pytest only")
    return TaskRequirements(lines, path, "\n".join(lines), warnings)
