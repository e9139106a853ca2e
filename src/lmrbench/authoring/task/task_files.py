"""What an author reviews of one implementation: its test files, the masking (golden -> goal) and the paper."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from lmrbench.authoring.task.paper import PAPER_JSON, PAPER_PDF, paper_pages
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError
from lmrbench.schemas.task_info import as_list

MAX_CHARS = 2_000_000
"""Longer files are shown cut (a recorded test can be large)."""


@dataclass
class TaskFiles:
    """The texts, read once in a worker."""

    tests: dict[str, str] = field(default_factory=dict)
    """Test file (relative to the repository) -> its text; missing files say so."""
    masks: list[tuple[str, str, str]] = field(default_factory=list)
    """(goal file, golden text, masked text) for each goal file."""
    pages: dict[str, str] = field(default_factory=dict)
    """The paper's text per page ("1", "2", ...); empty when the task has no paper."""
    problems: list[str] = field(default_factory=list)
    """Files that could not be read, one line each."""


def _read(path_text: str, path: Path, problems: list[str]) -> str:
    try:
        data = path.read_bytes()[:MAX_CHARS]
    except OSError as exc:
        problems.append(f"{path_text}: {exc.strerror or exc}")
        return ""
    return data.decode("utf-8", errors="replace")


def read_task_files(task: Task, index: int) -> TaskFiles:
    """Read implementation ``index``'s tests, golden and goal files, and the task's paper."""
    impl = task.info.implementation(index)
    out = TaskFiles()
    for rel in impl.unit_test_files:
        path = task.repo_dir / rel
        out.tests[rel] = _read(rel, path, out.problems) if path.is_file() else f"# {rel} does not exist yet\n"
    goldens = as_list(impl.golden_file)
    for k, goal in enumerate(impl.goal_files):
        golden = goldens[k] if k < len(goldens) else ""
        if not golden:
            out.problems.append(f"{goal}: no golden file")
            continue
        out.masks.append(
            (goal, _read(golden, task.path / golden, out.problems), _read(goal, task.repo_dir / goal, out.problems))
        )
    pages_json = task.repo_dir / PAPER_JSON
    try:
        if pages_json.is_file():
            pages = json.loads(pages_json.read_text(encoding="utf-8"))
            out.pages = {str(k): str(v) for k, v in pages.items()} if isinstance(pages, dict) else {}
        elif (task.repo_dir / PAPER_PDF).is_file():
            out.pages = paper_pages(task.repo_dir / PAPER_PDF)
    except (OSError, ValueError, LmrError) as exc:
        out.problems.append(f"paper: {exc}")
    return out
