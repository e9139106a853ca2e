"""What a new task is made from, and the checks it passes before anything is cloned or written.

A ``TaskSpec`` holds the repository, the goal functions (``FunctionRef``), the instructions and the paper's
metadata; ``check_spec`` applies the rules of ``authoring.task.metadata`` to it, so ``task new`` and the app refuse
the same values, and ``refuse_duplicate`` keeps a set from masking the same function twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from lmrbench.authoring.task.mask_style import MaskStyle
from lmrbench.authoring.task.metadata import (
    canonical_category,
    category_problem,
    is_test_file,
    name_problem,
    paper_url_problem,
    year_problem,
)
from lmrbench.core.source.index import split_line
from lmrbench.core.taskset import task_dirs
from lmrbench.errors import LmrError, UsageError
from lmrbench.schemas.task_info import load_task_info


@dataclass(frozen=True)
class FunctionRef:
    """A goal function: ``file`` relative to the repository root, its qualified name (``Class.method``) and, for a
    name the file defines more than once (in two branches), the first line of the one meant."""

    file: str
    qualname: str
    line: int | None = None

    @classmethod
    def parse(cls, text: str) -> FunctionRef:
        """Parse ``FILE::[Class.]name`` or ``FILE::[Class.]name@LINE``."""
        file, sep, qual = text.partition("::")
        if not sep or not file.strip() or not qual.strip():
            raise UsageError(f"function {text!r} must look like FILE::name, FILE::Class.name or FILE::Class.name@LINE")
        posix = PurePosixPath(file.strip().replace("\\", "/"))
        if posix.is_absolute() or ".." in posix.parts or re.match(r"^[A-Za-z]:", posix.as_posix()):
            raise UsageError(f"function {text!r}: FILE leaves the repository (give a path relative to it, no '..')")
        qualname, line = split_line(qual.strip())
        if not qualname or "@" in qualname or line == 0:
            raise UsageError(f"function {text!r}: after the name, give @ and the line its definition starts at (@147)")
        return cls(file=posix.as_posix(), qualname=qualname, line=line)

    @property
    def masked_name(self) -> str:
        """The name as the masker takes it: ``Class.method``, or ``Class.method@147`` for one definition."""
        return self.qualname if self.line is None else f"{self.qualname}@{self.line}"

    def __str__(self) -> str:
        return f"{self.file}::{self.masked_name}"

    @property
    def name(self) -> str:
        """The function's own name."""
        return self.qualname.rsplit(".", 1)[-1]

    @property
    def class_name(self) -> str:
        """The enclosing class (the part before the last dot), or ''."""
        return self.qualname.rsplit(".", 1)[0] if "." in self.qualname else ""


@dataclass
class TaskSpec:
    """Everything ``create_task`` needs. ``instructions`` has one entry, or one per function."""

    source: str
    functions: list[FunctionRef]
    instructions: list[str]
    bench: Path
    category: str = ""
    paper: Path | None = None
    paper_url: str = ""
    paper_name: str = ""
    year: int | None = None
    commit: str | None = None
    name: str | None = None
    repo_folder_name: str | None = None
    retrieval_context: list[str] = field(default_factory=list)
    mask_style: MaskStyle = MaskStyle.TODO_RAISE
    repo_url: str | None = None
    """Recorded as repo_url instead of the clone source (e.g. the public URL of a local mirror)."""


def _slug(text: str) -> str:
    words = re.findall(r"[A-Za-z0-9]+", text)
    return "".join(w[:1].upper() + w[1:] for w in words[:3]) or "Task"


def next_task_name(bench: Path, title: str) -> str:
    """``N-Name`` with N one more than the largest task number in ``bench`` (1 for a new set)."""
    numbers = [0]
    if Path(bench).is_dir():
        for d in task_dirs(bench) if not (Path(bench) / "info.json").exists() else []:
            m = re.match(r"(\d+)-", d.name)
            if m:
                numbers.append(int(m.group(1)))
    return f"{max(numbers) + 1}-{_slug(title)}"


def check_spec(spec: TaskSpec) -> None:
    """LmrError for the first rule the spec breaks; the category is rewritten to the paper's name of it."""
    if not spec.functions:
        raise UsageError("give at least one --function FILE::name")
    if len(spec.instructions) not in (1, len(spec.functions)):
        raise UsageError(f"give one instruction, or one per function ({len(spec.functions)})")
    if any(not i.strip() for i in spec.instructions):
        raise UsageError("the instruction is empty")
    seen = set()
    for ref in spec.functions:
        key = (ref.file, ref.masked_name)
        if key in seen:
            raise UsageError(f"function {ref} is given twice")
        seen.add(key)
    if spec.category and (bad := category_problem(spec.category)):
        raise UsageError(bad)
    if spec.name is not None and (bad := name_problem(spec.name)):
        raise UsageError(f"task name {spec.name!r} {bad}", spec.bench)
    if bad := paper_url_problem(spec.paper_url):
        raise UsageError(f"paper URL {spec.paper_url!r} {bad}")
    if spec.year is not None and (bad := year_problem(str(spec.year))):
        raise UsageError(f"year {spec.year} {bad}")
    for ctx in spec.retrieval_context:
        if is_test_file(ctx):
            raise UsageError(f"{ctx} is a test file; tests are never given as context")
    folder = spec.repo_folder_name
    if folder is not None and (not re.fullmatch(r"[A-Za-z0-9._-]+", folder) or folder in (".", "..")):
        raise UsageError(f"repo folder name {folder!r} must be one plain folder name (letters, digits, . _ -)")
    if spec.category:
        spec.category = canonical_category(spec.category)
    if spec.paper is not None:
        from lmrbench.authoring.task.paper import check_pdf  # PyMuPDF: only when there is a paper to check

        check_pdf(Path(spec.paper))


def masked_functions(bench: Path, urls: set[str], skip: Path | None = None) -> dict[tuple[str, str], str]:
    """(goal file, qualified name) -> ``<task folder> (implementation N)`` for every function that a task of the
    set ``bench`` masks in a repository whose repo_url is one of ``urls`` (tasks that do not load are ignored); a
    task that masks one definition of a name defined more than once is keyed ``name@line``."""
    found: dict[tuple[str, str], str] = {}
    for folder in task_dirs(bench) if Path(bench).is_dir() else []:
        if skip is not None and folder.resolve() == skip.resolve():
            continue
        try:
            info = load_task_info(folder)
        except LmrError:
            continue
        if info.repo_url not in urls:
            continue
        for impl in info.implementations:
            at = f"@{impl.goal_line}" if impl.goal_line is not None else ""
            for file in impl.goal_files:
                for q in impl.qualnames:
                    found.setdefault((file, q + at), f"{folder.name} (implementation {impl.index})")
    return found


def refuse_duplicate(spec: TaskSpec, final: Path, hint: str = "--force makes another task anyway") -> None:
    """LmrError when another task of the set already masks one of the spec's functions of the same repository
    (``hint`` ends the message: how to go on)."""
    from lmrbench.authoring.task.clone import source_url  # GitPython

    urls = {spec.repo_url or source_url(spec.source), spec.source}
    masked = masked_functions(spec.bench, urls, skip=final)
    for r in spec.functions:
        clash = [key for key in masked if key[0] == r.file and (
            key[1] in (r.qualname, r.masked_name) or (r.line is None and split_line(key[1])[0] == r.qualname))]
        if clash:
            raise LmrError(
                f"{r} of this repository is already task {masked[clash[0]]}" + (f"; {hint}" if hint else ""),
                spec.bench,
            )
