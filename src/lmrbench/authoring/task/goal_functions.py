"""Goal functions of a task's repository: how they are named in info.json and golden_files, and masking more of
them in an existing task (``add_implementation``) or masking a goal file anew from its golden file (``remask``).

Both edits compute everything before their first (atomic) write, so an error leaves the task folder unchanged.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from lmrbench.authoring.task.mask import MaskStyle, mask_source
from lmrbench.authoring.task.metadata import canonical_category
from lmrbench.authoring.task.task_spec import FunctionRef
from lmrbench.core.source.index import index_source, split_line
from lmrbench.core.source.splice import extract_function
from lmrbench.core.source.tree import read_source
from lmrbench.core.taskset import Task, load_task
from lmrbench.defaults import unit_test_file
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_bytes, is_within
from lmrbench.schemas.task_info import Implementation, TaskInfo, as_list, save_task_info

GOLDEN_DIR = "golden_files"


def golden_name(goal_file: str, taken: set[str]) -> str:
    """``golden_files/<stem>_golden.py``; a stem already taken gets its folders prefixed."""
    p = PurePosixPath(goal_file)
    name = f"{p.stem}_golden.py"
    if name in taken:
        name = "_".join([*p.parent.parts, p.stem]) + "_golden.py"
    return f"{GOLDEN_DIR}/{name}"


def goal_names(source: str, file: str, ref: FunctionRef) -> tuple[str, str]:
    """(goal_function, class_name) for info.json: ``class_name`` only when the enclosing scope is a class, so
    ``outer.inner`` (a nested function) is ``("outer.inner", "")`` and ``Class.method`` is ``("method", "Class")``."""
    for info in index_source(source, file):
        if info.qualname == ref.qualname:
            if info.class_name and info.qualname == f"{info.class_name}.{info.name}":
                return info.name, info.class_name
            return info.qualname, "" if not info.class_name else info.class_name
    return ref.name, ref.class_name


def read_goal_source(path: Path, shown: str) -> str:
    """The text of a goal (or golden) file of a task being made or edited; LmrError naming ``shown`` when it is
    missing, unreadable or not UTF-8."""
    if not path.is_file():
        raise LmrError("goal file not found in the repository", shown)
    return read_source(path, shown)


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
    return [q + (f"@{impl.goal_line}" if impl.goal_line is not None else "")
            for impl in info.implementations if goal_file in impl.goal_files for q in impl.qualnames]


def _is_stub(source: str, qualname: str, file: str) -> bool:
    return any(mask_source(source, [qualname], style, file=file) == source for style in MaskStyle)


def add_implementation(
    task: Task, ref: FunctionRef, instruction: str, *, category: str = "", mask_style: MaskStyle = MaskStyle.TODO_RAISE
) -> Task:
    """Mask one more function of the task's repository as a new implementation (index max+1).

    The goal file's golden file is reused when one exists, else written from the goal file as it is now.
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
    taken = _names_in(info, ref.file)
    for impl in info.implementations:
        if ref.file in impl.goal_files and ref.qualname in impl.qualnames and (
                ref.line is None or impl.goal_line is None or ref.line == impl.goal_line):
            raise LmrError(f"{ref.masked_name} is already implementation {impl.index}", shown)
    if any(ref.qualname.startswith(split_line(q)[0] + ".") for q in taken):
        raise LmrError(f"{ref.qualname} is already masked (inside a masked function)", shown)
    current = read_goal_source(task.repo_dir / ref.file, shown)
    masked = mask_source(current, [ref.masked_name], MaskStyle(mask_style), file=shown)
    golden = _golden_of(info, ref.file)
    golden_bytes: bytes | None = None
    if golden is None:
        existing = {p.name for p in (task.path / GOLDEN_DIR).glob("*")} if (task.path / GOLDEN_DIR).is_dir() else set()
        golden = golden_name(ref.file, existing)
        if (task.path / golden).exists():
            raise LmrError("golden file exists but no implementation names it", task.path / golden)
        golden_bytes = current.encode("utf-8")
    else:
        original = read_goal_source(task.path / golden, golden)
        if extract_function(original, ref.qualname, file=golden) != extract_function(current, ref.qualname, file=shown):
            raise LmrError(f"{ref.qualname} is already masked (it differs from {golden})", shown)
    if _is_stub(current, ref.masked_name, shown):
        raise LmrError(f"{ref.masked_name} is already masked", shown)
    index = max((i.index for i in info.implementations), default=0) + 1
    function, class_name = goal_names(current, shown, ref)
    impl = Implementation(
        instruction=instruction,
        index=index,
        category=category,
        goal_file=ref.file,
        goal_function=function,
        class_name=class_name,
        **({"goal_line": ref.line} if ref.line is not None else {}),  # absent, not null, when unset
        golden_file=golden,
        unit_test_file=unit_test_file(index),
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
        original = read_goal_source(task.path / goldens[k], goldens[k])
        masked = mask_source(original, _names_in(task.info, file), MaskStyle(mask_style), file=goldens[k])
        writes.append((task.repo_dir / file, masked.encode("utf-8")))
    for path, data in writes:
        atomic_write_bytes(path, data)
    return load_task(task.path)
