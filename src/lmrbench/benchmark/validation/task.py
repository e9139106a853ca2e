"""Validate one task and get its typed results; say whether a stored result still describes the task.

The app calls these instead of reading result files: a task whose info.json broke is an error naming the file,
never an empty table.
"""

from __future__ import annotations

import threading
from enum import StrEnum
from pathlib import Path

from lmrbench.benchmark.validation.plan import ValidateOptions
from lmrbench.benchmark.validation.store import load_result, result_path, task_fingerprint
from lmrbench.benchmark.validation.taskset import validate_taskset
from lmrbench.core.sandbox import SandboxKind
from lmrbench.core.taskset import Task, load_task
from lmrbench.defaults import default_run_dir
from lmrbench.errors import LmrError
from lmrbench.progress import Progress
from lmrbench.schemas.validation import ImplValidation


class ResultStatus(StrEnum):
    """What a stored validation result says about a task as it is now."""

    NOT_VALIDATED = "not validated"
    VALID = "valid"
    WEAK = "valid but weak"
    """Valid, but its tests kill fewer of the golden body's mutants than ``--min-kill-rate`` asks."""
    INVALID = "invalid"
    NOT_RUN = "not run"
    """The golden code never ran (LFS pointers, an empty submodule, an environment that cannot be had...)."""
    STALE = "stale"
    """The tests, masks, checkers or files changed since: validate again."""


def result_status(result: ImplValidation | None, fingerprint: str) -> ResultStatus:
    """``fingerprint`` is task_fingerprint of the task now; a result made for other files is stale."""
    if result is None:
        return ResultStatus.NOT_VALIDATED
    if result.fingerprint != fingerprint:
        return ResultStatus.STALE
    if result.not_run is not None:
        return ResultStatus.NOT_RUN
    if not result.valid:
        return ResultStatus.INVALID
    return ResultStatus.WEAK if result.weak else ResultStatus.VALID


def validate_task(
    task_dir: Path,
    *,
    sandbox: SandboxKind | None = None,
    run_dir: Path | None = None,
    options: ValidateOptions | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> list[ImplValidation]:
    """Validate every implementation of the task in ``task_dir`` (read from disk now); one result each.

    ``run_dir`` defaults to where ``lmrbench validate`` keeps the task set's results. An unreadable task is an
    LmrError naming its file; so is an implementation left without a result.
    """
    task: Task = load_task(Path(task_dir))
    bench = task.path.parent
    run_dir = Path(run_dir) if run_dir else default_run_dir(bench)
    summary = validate_taskset(
        bench, only=[task.name], sandbox=sandbox, run_dir=run_dir, options=options, progress=progress, cancel=cancel
    )
    if summary.problems:
        raise LmrError("; ".join(summary.problems))
    results = []
    for impl in task.info.implementations:
        path = result_path(run_dir, task.name, impl.index)
        res = load_result(path)
        if res is None:
            raise LmrError("validation left no readable result", path)
        results.append(res)
    return results


def stored_results(task: Task, run_dir: Path | None = None) -> dict[int, tuple[ImplValidation | None, ResultStatus]]:
    """Each implementation's stored result and its status against the task's current files."""
    run_dir = Path(run_dir) if run_dir else default_run_dir(task.path.parent)
    fp = task_fingerprint(task)
    out: dict[int, tuple[ImplValidation | None, ResultStatus]] = {}
    for impl in task.info.implementations:
        res = load_result(result_path(run_dir, task.name, impl.index))
        out[impl.index] = (res, result_status(res, fp))
    return out
