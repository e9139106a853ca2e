"""The rules a task's name and paper metadata follow, and the one way to write edited metadata into info.json.

The CLI (``task new``) and the app check the same rules, so both accept and refuse the same names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from lmrbench.core.taskset import Task, load_task
from lmrbench.core.trust import trusted_paths
from lmrbench.errors import LmrError
from lmrbench.schemas.categories import parse_category
from lmrbench.schemas.task_info import as_list, save_task_info

TASK_NAME = re.compile(r"\d+-[A-Za-z0-9_.-]+")
"""A task folder: a number, a dash, then letters, digits, ``_``, ``.`` or ``-`` (``7-DPO``)."""
PAPER_URL = re.compile(r"https?://\S+")
YEARS = range(1950, 2101)
_TEST_DIRS = frozenset({"unit_test", "tests", "test", "testing"})


@dataclass
class PaperFields:
    """The paper's metadata, shared by every implementation of a task."""

    paper_name: str = ""
    paper_url: str = ""
    year: int | None = None


@dataclass
class ImplFields:
    """What an author edits per implementation."""

    instruction: str
    category: str
    retrieval_context: list[str] = field(default_factory=list)


def name_problem(name: str, taken: set[str] | None = None) -> str | None:
    """Why ``name`` cannot be a new task folder's name, or None."""
    if not TASK_NAME.fullmatch(name):
        return "must look like N-Name (a number, a dash, letters or digits)"
    if taken and name in taken:
        return f"the task set already has a task {name}"
    return None


def paper_url_problem(url: str) -> str | None:
    """Empty, or an http(s) URL."""
    return None if not url or PAPER_URL.fullmatch(url) else "must be an http(s) URL"


def year_problem(text: str) -> str | None:
    """Empty, or a year such as 2023."""
    if not text or (text.isdigit() and int(text) in YEARS):
        return None
    return "must be a year such as 2023"


def category_problem(category: str) -> str | None:
    """One of the nine categories (or a spelling of one)."""
    if not category:
        return "choose one of the nine categories"
    try:
        parse_category(category)
    except ValueError as exc:
        return str(exc)
    return None


def canonical_category(text: str, where: Path | None = None) -> str:
    """The paper's name of the category a user typed (an alias such as ``loss`` included); LmrError if unknown."""
    try:
        return parse_category(text).value
    except ValueError as exc:
        raise LmrError(str(exc), where) from None


def repo_folder_name(url: str) -> str:
    """The repository's folder inside a task, named after its URL or path (``…/dpo.git`` -> ``dpo``)."""
    name = PurePosixPath(url.rstrip("/")).name.removesuffix(".git")
    return name if name not in ("", ".", "..") else "repo"


def is_test_file(path: str) -> bool:
    """True for files that hold tests (never offered as retrieval context: they would give the answer away)."""
    p = PurePosixPath(path)
    return (
        bool(_TEST_DIRS & set(p.parts[:-1]))
        or p.name.startswith("test_")
        or p.stem.endswith("_test")
        or p.name == "conftest.py"
    )


def retrieval_candidates(files: list[str]) -> list[str]:
    """The repository files an author may give the model as context: every file but tests."""
    return [f for f in files if not is_test_file(f)]


def retrieval_problem(task: Task, files: list[str]) -> str | None:
    """Why ``files`` cannot be a task's retrieval context, or None."""
    for f in files:
        if is_test_file(f):
            return f"{f} is a test file; tests are never given as context"
        if not (task.repo_dir / f).is_file():
            return f"{f} is not a file of the repository"
    return None


def metadata_problems(
    *, name: str | None, paper_url: str, year: str, category: str, taken: set[str] | None = None
) -> dict[str, str]:
    """Field -> problem for every field that breaks a rule (``name`` None: the name is not checked)."""
    checks = {
        "name": name_problem(name, taken) if name is not None else None,
        "paper_url": paper_url_problem(paper_url),
        "year": year_problem(year),
        "category": category_problem(category),
    }
    return {k: v for k, v in checks.items() if v}


def update_info(
    task: Task, paper: PaperFields, impls: Mapping[int, ImplFields], *, check_url: bool = True
) -> Task:
    """Write edited paper fields and implementations into the task's info.json (atomically); return it reloaded.

    Used by the app's Save of a new task and by the edit screen. ``check_url=False`` keeps an official file's
    odd paper URL from blocking other edits. Refuses (LmrError naming info.json) any value that breaks a rule.
    """
    where = task.path / "info.json"
    info = task.info
    problems = metadata_problems(
        name=None, paper_url=paper.paper_url if check_url else "",
        year="" if paper.year is None else str(paper.year), category="",
    )
    problems.pop("category", None)
    for index, edit in impls.items():
        info.implementation(index)  # an unknown index is an LmrError
        if not edit.instruction.strip():
            problems[f"implementation {index}"] = "the instruction is empty"
        elif bad := category_problem(edit.category):
            problems[f"implementation {index} category"] = bad
        elif bad := retrieval_problem(task, edit.retrieval_context):
            problems[f"implementation {index} retrieval context"] = bad
    if problems:
        raise LmrError("; ".join(f"{k}: {v}" for k, v in problems.items()), where)
    new_impls = [
        i.model_copy(
            update={
                "instruction": impls[i.index].instruction,
                "category": impls[i.index].category,
                "retrieval_context": list(impls[i.index].retrieval_context),
            }
        )
        if i.index in impls
        else i
        for i in info.implementations
    ]
    update = {"paper_name": paper.paper_name, "paper_url": paper.paper_url, "year": paper.year}
    save_task_info(info.model_copy(update={**update, "implementations": new_impls}), Path(task.path))
    return load_task(task.path)


def mark_trusted(task: Task, impl_index: int, paths: list[str]) -> list[str]:
    """Add to implementation ``impl_index``'s info.json ``trusted_files`` the ``paths`` (repository-relative)
    that no trusted path covers yet and that are not goal files; return those added (info.json is written,
    atomically, only when there are some). info.json is read again first: another implementation's marks
    since ``task`` was loaded are kept."""
    task = load_task(task.path)
    covered = [PurePosixPath(p) for p in trusted_paths(task)]
    goals = {PurePosixPath(g) for impl in task.info.implementations for g in impl.goal_files}
    new: list[str] = []
    for rel in sorted(set(paths)):
        pure = PurePosixPath(rel)
        if rel.startswith(("/", "../")) or pure in goals or any(c == pure or c in pure.parents for c in covered):
            continue
        new.append(pure.as_posix())
    if not new:
        return []
    impls = []
    for impl in task.info.implementations:
        if impl.index == impl_index:
            impl = impl.model_copy(update={"trusted_files": as_list(impl.trusted_files) + new})
        impls.append(impl)
    save_task_info(task.info.model_copy(update={"implementations": impls}), Path(task.path))
    return new
