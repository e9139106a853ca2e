"""Create a task folder in the official layout from a checked ``TaskSpec``: clone the repository, mask the goal
functions, keep their golden files, write the paper, info.json and Dockerfile; and publish a draft task into a set.

The folder is built beside its destination and renamed into place, so an error leaves nothing behind.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from pathlib import Path, PurePosixPath

from lmrbench import __version__
from lmrbench.authoring.check.dockerfile import write_dockerfile
from lmrbench.authoring.task.clone import clone_repo
from lmrbench.authoring.task.goal_functions import goal_names, golden_name, read_goal_source
from lmrbench.authoring.task.mask import mask_source
from lmrbench.authoring.task.metadata import ImplFields, PaperFields, repo_folder_name, update_info
from lmrbench.authoring.task.paper import write_empty_paper, write_paper
from lmrbench.authoring.task.task_spec import FunctionRef, TaskSpec, check_spec, next_task_name, refuse_duplicate
from lmrbench.core.taskset import Task, load_task
from lmrbench.defaults import UNIT_TEST_DIR, default_run_dir, unit_test_file
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_bytes, is_within, staging_dir
from lmrbench.progress import NullProgress, Progress, check_cancel
from lmrbench.schemas.task_info import Implementation, TaskInfo, save_task_info


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
    check_spec(spec)
    title = spec.paper_name or Path(spec.source.rstrip("/")).name
    name = spec.name or next_task_name(spec.bench, title)
    final = _task_folder(Path(spec.bench), name)
    if final.exists() and not force:
        raise LmrError("task folder exists; use --force to replace it", final)
    if not force:
        refuse_duplicate(spec, final)
    repo_folder = spec.repo_folder_name or repo_folder_name(spec.source)
    instance_id = _instance_id(name)

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
            original = read_goal_source(src_path, file)
            names.update({r: goal_names(original, file, r) for r in refs})
            masked = mask_source(original, [r.masked_name for r in refs], spec.mask_style, file=file)
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
                    **({"goal_line": ref.line} if ref.line is not None else {}),  # absent, not null, when unset
                    golden_file=goldens[ref.file],
                    retrieval_content=list(spec.retrieval_context),
                    unit_test_file=unit_test_file(k),
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
        write_dockerfile(tmp, repo_folder)
        check_cancel(cancel)
    return load_task(final)


def _task_folder(bench: Path, name: str) -> Path:
    if not is_within(bench, Path(name)) or "/" in name:
        raise LmrError(f"task name {name!r} must be one folder name", bench)
    return bench / name


def _instance_id(name: str) -> int | str:
    """The official instance_id of a task folder ``N-Name``: N (the name itself when it has no number)."""
    m = re.match(r"(\d+)-", name)
    return int(m.group(1)) if m else name


def rename_task(task: Task, name: str) -> Task:
    """Give a (draft) task another folder name in its set, info.json's folder_name and instance_id following; its
    recorded tests and everything else stay (the authoring app renames its draft when only the name changed)."""
    final = _task_folder(task.path.parent, name)
    if final.exists():
        raise LmrError("a task with this name exists; choose another name (step 5)", final)
    info = task.info.model_copy(update={"folder_name": name, "instance_id": _instance_id(name)})
    save_task_info(info, task.path / "info.json")
    os.replace(task.path, final)
    return load_task(final)


def remove_task(path: Path) -> None:
    """Delete a task folder (used by the authoring app's cancel)."""
    shutil.rmtree(path, ignore_errors=True)


def write_fields(task: Task, spec: TaskSpec) -> Task:
    """Write the spec's instruction and metadata into a (draft) task's info.json; return it reloaded. The app does
    it before validating a draft, so the validation holds for the info.json that Save publishes."""
    impls = {
        impl.index: ImplFields(
            instruction=spec.instructions[min(k, len(spec.instructions) - 1)],
            category=spec.category,
            retrieval_context=list(spec.retrieval_context),
        )
        for k, impl in enumerate(task.info.implementations)
    }
    return update_info(task, PaperFields(spec.paper_name, spec.paper_url, spec.year), impls)


def publish_task(task: Task, spec: TaskSpec, draft_results: Path) -> Task:
    """Write the spec's instruction, metadata and paper into a draft task and move it, with its validation
    results from ``draft_results``, into ``spec.bench`` (the authoring app's Save)."""
    final = Path(spec.bench) / task.name
    if final.exists():
        raise LmrError("a task with this name exists; choose another name (step 5)", final)
    refuse_duplicate(spec, final, hint="")
    write_fields(task, spec)
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
