"""Create a task folder in the official layout from a repository, the functions to mask, and the paper."""

from __future__ import annotations

import os
import re
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from lmrbench import __version__
from lmrbench.authoring.clone import clone_repo
from lmrbench.authoring.index import index_source
from lmrbench.authoring.mask import MaskStyle, mask_source
from lmrbench.authoring.metadata import (
    ImplFields,
    PaperFields,
    category_problem,
    is_test_file,
    name_problem,
    paper_url_problem,
    repo_folder_name,
    update_info,
    year_problem,
)
from lmrbench.authoring.paper import check_pdf, write_empty_paper, write_paper
from lmrbench.authoring.splice import extract_function
from lmrbench.core.taskset import Task, load_task, task_dirs
from lmrbench.defaults import UNIT_TEST_DIR, default_run_dir
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_bytes, is_within, staging_dir
from lmrbench.progress import NullProgress, Progress, check_cancel
from lmrbench.schemas.categories import parse_category
from lmrbench.schemas.task_info import Implementation, TaskInfo, as_list, load_task_info, save_task_info

GOLDEN_DIR = "golden_files"


@dataclass(frozen=True)
class FunctionRef:
    """A goal function: ``file`` relative to the repository root and its qualified name (``Class.method``)."""

    file: str
    qualname: str

    @classmethod
    def parse(cls, text: str) -> FunctionRef:
        """Parse ``FILE::[Class.]name``."""
        file, sep, qual = text.partition("::")
        if not sep or not file.strip() or not qual.strip():
            raise LmrError(f"function {text!r} must look like FILE::name or FILE::Class.name")
        posix = PurePosixPath(file.strip().replace("\\", "/"))
        if posix.is_absolute() or ".." in posix.parts or re.match(r"^[A-Za-z]:", posix.as_posix()):
            raise LmrError(f"function {text!r}: FILE leaves the repository (give a path relative to it, without '..')")
        return cls(file=posix.as_posix(), qualname=qual.strip())

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


def golden_name(goal_file: str, taken: set[str]) -> str:
    """``golden_files/<stem>_golden.py``; a stem already taken gets its folders prefixed."""
    p = PurePosixPath(goal_file)
    name = f"{p.stem}_golden.py"
    if name in taken:
        name = "_".join([*p.parent.parts, p.stem]) + "_golden.py"
    return f"{GOLDEN_DIR}/{name}"


def _read_source(path: Path, shown: str) -> str:
    if not path.is_file():
        raise LmrError("goal file not found in the repository", shown)
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LmrError(f"not UTF-8 (byte {exc.start})", shown) from None


def canonical_category(text: str, where: Path | None = None) -> str:
    """The paper's name of the category a user typed (an alias such as ``loss`` included); LmrError if unknown."""
    try:
        return parse_category(text).value
    except ValueError as exc:
        raise LmrError(str(exc), where) from None


def goal_names(source: str, file: str, ref: FunctionRef) -> tuple[str, str]:
    """(goal_function, class_name) for info.json: ``class_name`` only when the enclosing scope is a class, so
    ``outer.inner`` (a nested function) is ``("outer.inner", "")`` and ``Class.method`` is ``("method", "Class")``."""
    for info in index_source(source, file):
        if info.qualname == ref.qualname:
            if info.class_name and info.qualname == f"{info.class_name}.{info.name}":
                return info.name, info.class_name
            return info.qualname, "" if not info.class_name else info.class_name
    return ref.name, ref.class_name


def _validate_spec(spec: TaskSpec) -> None:
    if not spec.functions:
        raise LmrError("give at least one --function FILE::name")
    if len(spec.instructions) not in (1, len(spec.functions)):
        raise LmrError(f"give one instruction, or one per function ({len(spec.functions)})")
    if any(not i.strip() for i in spec.instructions):
        raise LmrError("the instruction is empty")
    seen = set()
    for ref in spec.functions:
        key = (ref.file, ref.qualname)
        if key in seen:
            raise LmrError(f"function {ref.file}::{ref.qualname} is given twice")
        seen.add(key)
    if spec.category and (bad := category_problem(spec.category)):
        raise LmrError(bad)
    if spec.name is not None and (bad := name_problem(spec.name)):
        raise LmrError(f"task name {spec.name!r} {bad}", spec.bench)
    if bad := paper_url_problem(spec.paper_url):
        raise LmrError(f"paper URL {spec.paper_url!r} {bad}")
    if spec.year is not None and (bad := year_problem(str(spec.year))):
        raise LmrError(f"year {spec.year} {bad}")
    for ctx in spec.retrieval_context:
        if is_test_file(ctx):
            raise LmrError(f"{ctx} is a test file; tests are never given as context")
    folder = spec.repo_folder_name
    if folder is not None and (not re.fullmatch(r"[A-Za-z0-9._-]+", folder) or folder in (".", "..")):
        raise LmrError(f"repo folder name {folder!r} must be one plain folder name (letters, digits, . _ -)")
    if spec.category:
        spec.category = canonical_category(spec.category)
    if spec.paper is not None:
        check_pdf(Path(spec.paper))


def source_url(source: str) -> str:
    """The repo_url recorded for a clone source: a local path resolved, a URL as given."""
    local = Path(source).expanduser()
    return str(local.resolve()) if local.exists() else source


def _refuse_duplicate(spec: TaskSpec, final: Path) -> None:
    """LmrError when another task of the set already masks one of the spec's functions of the same repository."""
    url = spec.repo_url or source_url(spec.source)
    wanted = {(r.file, r.qualname) for r in spec.functions}
    for folder in task_dirs(spec.bench) if Path(spec.bench).is_dir() else []:
        if folder.resolve() == final.resolve():
            continue
        try:
            info = load_task_info(folder)
        except LmrError:
            continue
        if info.repo_url not in (url, spec.source):
            continue
        for impl in info.implementations:
            for file in impl.goal_files:
                for q in impl.qualnames:
                    if (file, q) in wanted:
                        raise LmrError(
                            f"{file}::{q} of this repository is already task {folder.name} (implementation "
                            f"{impl.index}); --force makes another task anyway",
                            spec.bench,
                        )


def create_task(
    spec: TaskSpec,
    *,
    force: bool = False,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Task:
    """Build the task folder in a temp folder beside its destination, then rename it into place.

    Refuses an existing task folder unless ``force``; on any error nothing is left behind.
    """
    progress = progress or NullProgress()
    _validate_spec(spec)
    title = spec.paper_name or Path(spec.source.rstrip("/")).name
    name = spec.name or next_task_name(spec.bench, title)
    final = Path(spec.bench) / name
    if not is_within(Path(spec.bench), Path(name)) or "/" in name:
        raise LmrError(f"task name {name!r} must be one folder name", spec.bench)
    if final.exists() and not force:
        raise LmrError("task folder exists; use --force to replace it", final)
    if not force:
        _refuse_duplicate(spec, final)
    repo_folder = spec.repo_folder_name or repo_folder_name(spec.source)
    m = re.match(r"(\d+)-", name)
    instance_id: int | str = int(m.group(1)) if m else name

    with staging_dir(final, replace=force) as tmp:
        cloned = clone_repo(spec.source, tmp / repo_folder, spec.commit, progress=progress, cancel=cancel)
        check_cancel(cancel)
        by_file: dict[str, list[FunctionRef]] = {}
        for ref in spec.functions:
            if not is_within(cloned.path, Path(ref.file)):
                raise LmrError("goal file leaves the repository", ref.file)
            by_file.setdefault(ref.file, []).append(ref)
        goldens: dict[str, str] = {}
        names: dict[FunctionRef, tuple[str, str]] = {}
        progress.start("mask", len(by_file))
        for file, refs in by_file.items():
            src_path = cloned.path / file
            original = _read_source(src_path, file)
            names.update({r: goal_names(original, file, r) for r in refs})
            masked = mask_source(original, [r.qualname for r in refs], spec.mask_style, file=file)
            golden = golden_name(file, {PurePosixPath(g).name for g in goldens.values()})
            goldens[file] = golden
            atomic_write_bytes(tmp / golden, original.encode("utf-8"))
            atomic_write_bytes(src_path, masked.encode("utf-8"))
            progress.advance(1, file)
        (cloned.path / UNIT_TEST_DIR).mkdir(exist_ok=True)
        if spec.paper is not None:
            progress.start("paper", None)
            write_paper(Path(spec.paper), cloned.path)
        else:
            write_empty_paper(cloned.path)
            progress.log(f"warning: no --paper: {repo_folder}/paper.json is {{}} (the official tooling opens it)")
        for ctx in spec.retrieval_context:
            if not (cloned.path / ctx).is_file():
                raise LmrError("retrieval context file not found in the repository", ctx)
        impls = []
        for k, ref in enumerate(spec.functions, start=1):
            instruction = spec.instructions[0] if len(spec.instructions) == 1 else spec.instructions[k - 1]
            impls.append(
                Implementation(
                    instruction=instruction,
                    index=k,
                    category=spec.category,
                    goal_file=ref.file,
                    goal_function=names[ref][0],
                    class_name=names[ref][1],
                    golden_file=goldens[ref.file],
                    retrieval_content=list(spec.retrieval_context),
                    unit_test_file=f"{UNIT_TEST_DIR}/unit_test_{k}.py",
                )
            )
        info = TaskInfo(
            instance_id=instance_id,
            paper_name=spec.paper_name,
            folder_name=name,
            paper_url=spec.paper_url,
            year=spec.year,
            repo_url=spec.repo_url or cloned.url,
            repo_folder_name=repo_folder,
            implementations=impls,
            upstream_commit=cloned.commit,
            provenance={"tool": f"lmrbench {__version__}", "mask_style": str(spec.mask_style)},
        )
        save_task_info(info, tmp / "info.json")
        _maybe_write_dockerfile(tmp, repo_folder)
        check_cancel(cancel)
    return load_task(final)


def _maybe_write_dockerfile(task_dir: Path, repo_folder: str) -> None:
    """Write the task's Dockerfile with the environments stage's writer."""
    from lmrbench.authoring.dockerfile import write_dockerfile

    write_dockerfile(task_dir, repo_folder)


def _golden_of(info: TaskInfo, goal_file: str) -> str | None:
    """The golden file recorded for ``goal_file`` by any implementation, or None."""
    for impl in info.implementations:
        goldens = as_list(impl.golden_file)
        for k, file in enumerate(impl.goal_files):
            if file == goal_file and k < len(goldens) and goldens[k]:
                return goldens[k]
    return None


def _names_in(info: TaskInfo, goal_file: str) -> list[str]:
    """The qualified names masked in ``goal_file`` by the task's implementations."""
    return [q for impl in info.implementations if goal_file in impl.goal_files for q in impl.qualnames]


def _is_stub(source: str, qualname: str, file: str) -> bool:
    return any(mask_source(source, [qualname], style, file=file) == source for style in MaskStyle)


def add_implementation(
    task: Task, ref: FunctionRef, instruction: str, *, category: str = "", mask_style: MaskStyle = MaskStyle.TODO_RAISE
) -> Task:
    """Mask one more function of the task's repository as a new implementation (index max+1).

    The goal file's golden file is reused when one exists, else written from the goal file as it is now.
    Everything is computed before the first (atomic) write, so an error leaves the task folder unchanged.
    """
    info_path = task.path / "info.json"
    shown = f"{task.info.repo_folder_name}/{ref.file}"
    if not instruction.strip():
        raise LmrError("the instruction is empty", info_path)
    if category:
        category = canonical_category(category, info_path)
    if not is_within(task.repo_dir, Path(ref.file)):
        raise LmrError("goal file leaves the repository", ref.file)
    info = task.info
    for impl in info.implementations:
        if ref.file in impl.goal_files and ref.qualname in impl.qualnames:
            raise LmrError(f"{ref.qualname} is already implementation {impl.index}", shown)
    taken = _names_in(info, ref.file)
    if any(ref.qualname.startswith(q + ".") for q in taken):
        raise LmrError(f"{ref.qualname} is already masked (inside a masked function)", shown)
    current = _read_source(task.repo_dir / ref.file, shown)
    masked = mask_source(current, [ref.qualname], MaskStyle(mask_style), file=shown)
    golden = _golden_of(info, ref.file)
    golden_bytes: bytes | None = None
    if golden is None:
        existing = {p.name for p in (task.path / GOLDEN_DIR).glob("*")} if (task.path / GOLDEN_DIR).is_dir() else set()
        golden = golden_name(ref.file, existing)
        if (task.path / golden).exists():
            raise LmrError("golden file exists but no implementation names it", task.path / golden)
        golden_bytes = current.encode("utf-8")
    else:
        original = _read_source(task.path / golden, golden)
        if extract_function(original, ref.qualname, file=golden) != extract_function(current, ref.qualname, file=shown):
            raise LmrError(f"{ref.qualname} is already masked (it differs from {golden})", shown)
    if _is_stub(current, ref.qualname, shown):
        raise LmrError(f"{ref.qualname} is already masked", shown)
    index = max((i.index for i in info.implementations), default=0) + 1
    impl = Implementation(
        instruction=instruction,
        index=index,
        category=category,
        goal_file=ref.file,
        goal_function=goal_names(current, shown, ref)[0],
        class_name=goal_names(current, shown, ref)[1],
        golden_file=golden,
        unit_test_file=f"{UNIT_TEST_DIR}/unit_test_{index}.py",
    )
    new_info = info.model_copy(update={"implementations": [*info.implementations, impl]})
    new_info.to_json_dict()  # fails here, before any write, if the result cannot be saved
    if golden_bytes is not None:
        atomic_write_bytes(task.path / golden, golden_bytes)
    atomic_write_bytes(task.repo_dir / ref.file, masked.encode("utf-8"))
    save_task_info(new_info, info_path)
    return load_task(task.path)


def remask(task: Task, index: int, mask_style: MaskStyle) -> Task:
    """Rebuild implementation ``index``'s goal file(s) from the golden file, every implementation in it masked anew."""
    impl = task.info.implementation(index)
    goldens = as_list(impl.golden_file)
    writes: list[tuple[Path, bytes]] = []
    for k, file in enumerate(impl.goal_files):
        if k >= len(goldens) or not goldens[k]:
            raise LmrError(f"implementation {index} has no golden file for {file}", task.path / "info.json")
        original = _read_source(task.path / goldens[k], goldens[k])
        masked = mask_source(original, _names_in(task.info, file), MaskStyle(mask_style), file=goldens[k])
        writes.append((task.repo_dir / file, masked.encode("utf-8")))
    for path, data in writes:
        atomic_write_bytes(path, data)
    return load_task(task.path)


def remove_task(path: Path) -> None:
    """Delete a task folder (used by the authoring app's cancel)."""
    shutil.rmtree(path, ignore_errors=True)


def publish_task(task: Task, spec: TaskSpec, draft_results: Path) -> Task:
    """Write the spec's instruction, metadata and paper into a draft task and move it, with its validation
    results from ``draft_results``, into ``spec.bench`` (the authoring app's Save)."""
    final = Path(spec.bench) / task.name
    if final.exists():
        raise LmrError("a task with this name exists; choose another name (step 5)", final)
    impls = {
        impl.index: ImplFields(
            instruction=spec.instructions[min(k, len(spec.instructions) - 1)],
            category=spec.category,
            retrieval_context=list(spec.retrieval_context),
        )
        for k, impl in enumerate(task.info.implementations)
    }
    update_info(task, PaperFields(spec.paper_name, spec.paper_url, spec.year), impls)
    if spec.paper is not None:
        write_paper(spec.paper, task.repo_dir)
    os.replace(task.path, final)
    results = draft_results / task.name
    if results.is_dir():
        dest = default_run_dir(spec.bench) / task.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        remove_task(dest)
        os.replace(results, dest)
    return load_task(final)
