"""Repository structure predictors of success (the paper's Appendix G), per implementation.

The tree measured is the task's repository as its authors wrote it: the benchmark's additions (the unit tests,
recorded data and trusted files, paper.pdf and paper.json), version-control folders and caches are left out,
and symbolic links are not followed. The root itself is not a node.

- depth: the mean, over every file and folder, of the number of edges from the repository root (a file at
  the root has depth 1);
- branch factor: the mean number of immediate subfolders, over the folders (root included) that have at
  least one child (file or folder);
- imbalance: the mean, over the folders (root included) with at least two subfolders, of
  ``(largest - smallest) / total``, where each subfolder's size is the number of files anywhere below it;
  0 means every split of the tree is even (or the tree never splits into folders), values near 1 mean one
  subfolder holds nearly all files at the splits;
- goal lines, as the paper defines them (``file-sloc``, the default): the source lines of code of the goal
  file, i.e. of its golden copy: lines that hold code, not blank and not only a comment (docstrings count as
  code); summed over the implementation's golden files. ``function-lines`` (lmrbench's earlier measure) is the
  line span of the goal function(s) in the golden file, decorators, docstring, blank lines and comments
  included.

A repository folder that is empty (the official set holds three uninitialised git submodules) cannot be
measured: its task is refused with a line saying so, never entered with depth, branch and imbalance 0.
"""

from __future__ import annotations

import io
import os
import tokenize
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Literal, get_args

from lmrbench.core.source.index import index_source
from lmrbench.core.source.tree import goal_plan
from lmrbench.core.taskset import Task
from lmrbench.core.trust import trusted_paths
from lmrbench.errors import LmrError

SKIPPED_NAMES = frozenset(
    {".git", ".hg", ".svn", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".lmrbench"}
)
BENCHMARK_FILES = ("paper.pdf", "paper.json")
PREDICTORS = ("depth", "branch_factor", "imbalance", "goal_lines")
"""The structure predictors, in the order tables and regressions use them."""
GoalLines = Literal["file-sloc", "function-lines"]
"""How goal lines are counted: the paper's SLOC of the goal file (default), or the goal functions' span."""
GOAL_LINES: tuple[str, ...] = get_args(GoalLines)


@dataclass(frozen=True)
class TreeMetrics:
    """The shape of a folder tree."""

    depth: float
    branch_factor: float
    imbalance: float
    files: int
    folders: int


@dataclass(frozen=True)
class ImplStructure:
    """The structure predictors of one implementation (its repository's shape and its goal function)."""

    task: str
    impl: int
    category: str
    depth: float
    branch_factor: float
    imbalance: float
    goal_lines: int
    files: int
    folders: int

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return asdict(self)


def tree_metrics(root: Path, excluded: set[PurePosixPath] | None = None) -> TreeMetrics:
    """Depth, branch factor and imbalance of the tree under ``root`` (see the module), leaving out ``excluded``.

    ``excluded`` holds root-relative paths (a folder removes everything below it); names in SKIPPED_NAMES
    are always left out, and symbolic links are neither counted nor followed.
    """
    excluded = excluded or set()
    depths: list[int] = []
    branches: list[int] = []
    splits: list[float] = []

    def walk(folder: Path, rel: PurePosixPath, level: int) -> int:
        """Visit one folder; returns the number of files below it."""
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            raise LmrError(f"cannot list: {exc.strerror or exc}", folder) from None
        files, sub_sizes = 0, []
        for entry in entries:
            child = rel / entry.name
            if entry.name in SKIPPED_NAMES or child in excluded or entry.is_symlink():
                continue
            depths.append(level + 1)
            if entry.is_dir():
                sub_sizes.append(walk(Path(entry.path), child, level + 1))
            elif entry.is_file():
                files += 1
        children = files + len(sub_sizes)
        if children:
            branches.append(len(sub_sizes))
        if len(sub_sizes) >= 2:
            total = sum(sub_sizes)
            splits.append((max(sub_sizes) - min(sub_sizes)) / total if total else 0.0)
        return files + sum(sub_sizes)

    total_files = walk(Path(root), PurePosixPath("."), 0)
    return TreeMetrics(
        depth=sum(depths) / len(depths) if depths else 0.0,
        branch_factor=sum(branches) / len(branches) if branches else 0.0,
        imbalance=sum(splits) / len(splits) if splits else 0.0,
        files=total_files,
        folders=len(depths) - total_files,
    )


def source_lines(text: str) -> int:
    """Source lines of code: lines holding a token other than a comment (blank and comment-only lines left
    out; every line of a multi-line string counts). Text that does not tokenize counts its non-blank lines
    that do not start with ``#``."""
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENCODING, tokenize.ENDMARKER}  # fmt: skip
    lines: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type not in skip:
                lines.update(range(tok.start[0], tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        return sum(1 for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    return len(lines)


def goal_lines(task: Task, impl_index: int, how: GoalLines = "file-sloc") -> int:
    """An implementation's goal lines: the SLOC of its golden file(s), or its goal functions' line span."""
    impl = next(i for i in task.info.implementations if i.index == impl_index)
    total = 0
    for which, (rel, quals) in enumerate(goal_plan(task, impl)):
        path = task.golden_path(impl, which)
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise LmrError(f"cannot read the golden file: {exc}", path) from None
        if how == "file-sloc":
            total += source_lines(text)
            continue
        found = {f.qualname: f.length for f in index_source(text, str(path))}
        missing = [q for q in quals if q not in found]
        if missing:
            raise LmrError(f"the golden file does not define {', '.join(missing)} (goal file {rel})", path)
        total += sum(found[q] for q in quals)
    return total


def task_structure(task: Task, how: GoalLines = "file-sloc") -> list[ImplStructure]:
    """The predictors of every implementation of a task (the tree is measured once); LmrError for a task whose
    repository folder holds nothing to measure."""
    excluded = {PurePosixPath(p) for p in trusted_paths(task)} | {PurePosixPath(n) for n in BENCHMARK_FILES}
    tree = tree_metrics(task.repo_dir, excluded)
    if tree.files == 0:
        raise LmrError(
            "the repository folder holds no file (an uninitialised git submodule?): its structure cannot be "
            "measured, so the task is left out",
            task.repo_dir,
        )
    return [
        ImplStructure(
            task=task.name,
            impl=impl.index,
            category=cat.value if (cat := impl.category_normalized) else "",
            depth=tree.depth,
            branch_factor=tree.branch_factor,
            imbalance=tree.imbalance,
            goal_lines=goal_lines(task, impl.index, how),
            files=tree.files,
            folders=tree.folders,
        )
        for impl in task.info.implementations
    ]


def structure(tasks: list[Task], how: GoalLines = "file-sloc") -> tuple[list[ImplStructure], list[LmrError]]:
    """The predictors of every implementation of ``tasks``, and one error per task that could not be measured."""
    rows: list[ImplStructure] = []
    problems: list[LmrError] = []
    for task in tasks:
        try:
            rows.extend(task_structure(task, how))
        except LmrError as exc:
            problems.append(exc)
    return rows, problems
