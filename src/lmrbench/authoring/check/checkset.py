"""``task check`` over a whole task set: tasks checked in parallel processes, progress reported per task.

Each task is checked in a worker process (the scan is CPU-bound Python), largest tasks first so that one big
repository does not finish alone at the end. A task whose info.json does not load is one F001 finding; one whose
repository folder is missing is F115 (a git submodule that was never checked out).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from pathlib import Path

from lmrbench.authoring.check.findings import Finding, Selection
from lmrbench.core.taskset import load_taskset
from lmrbench.errors import LmrError
from lmrbench.progress import NullProgress, Progress, check_cancel
from lmrbench.schemas.task_info import INFO_JSON, load_task_info


def _check_one(path: str, select: list[str], ignore: list[str]) -> list[Finding]:
    from lmrbench.authoring.check.check import task_findings
    from lmrbench.core.taskset import load_task

    return task_findings(load_task(Path(path)), Selection(select, ignore))


def _size(path: Path) -> int:
    total = 0
    for _base, _dirs, files in os.walk(path):
        total += len(files)
    return total


def _load_error(err: LmrError) -> Finding:
    task_dir = Path(err.path).parent if err.path else None
    name = task_dir.name if task_dir else "?"
    if task_dir is not None and "is not a folder" in err.problem:
        try:
            repo = load_task_info(task_dir / INFO_JSON).repo_folder_name
            return Finding("F115", name, repo, "the repository folder is missing: a git submodule that was never "
                           "checked out; run `git submodule update --init` and copy it")
        except LmrError:
            pass
    return Finding("F001", name, INFO_JSON, err.problem)


def default_jobs() -> int:
    """Worker processes: one per CPU this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def taskset_findings(
    bench: Path,
    sel: Selection | None = None,
    *,
    jobs: int | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> tuple[list[str], list[Finding]]:
    """(names of the tasks checked, findings) of a task set, in task order."""
    sel = sel or Selection()
    progress = progress or NullProgress()
    tasks, errors = load_taskset(bench)
    names = sorted([t.name for t in tasks] + [(Path(e.path).parent.name if e.path else "?") for e in errors])
    findings: dict[str, list[Finding]] = {}
    for err in errors:
        f = _load_error(err)
        if sel.enabled(f.code):
            findings.setdefault(f.task, []).append(f)
    progress.start("task check", len(tasks))
    jobs = min(jobs or default_jobs(), max(1, len(tasks)))
    order = sorted(tasks, key=lambda t: -_size(t.path))
    if jobs <= 1:
        for t in order:
            check_cancel(cancel)
            findings[t.name] = _check_one(str(t.path), sel.select, sel.ignore)
            progress.advance(1, t.name)
    else:
        # fork: the workers start with every module this process has imported (a fresh interpreter spends
        # seconds importing on a busy machine); the check modules are imported here, before any fork, so a
        # worker never waits for the import lock another thread of this process (a progress bar) might hold
        import lmrbench.authoring.check.check  # noqa: F401
        import lmrbench.authoring.check.taskdata  # noqa: F401
        import lmrbench.authoring.check.testsmells  # noqa: F401
        import lmrbench.authoring.record.recorded_tests  # noqa: F401
        import lmrbench.schemas.recording  # noqa: F401

        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futures: dict[Future[list[Finding]], str] = {
                pool.submit(_check_one, str(t.path), sel.select, sel.ignore): t.name for t in order}
            try:
                for fut in as_completed(futures):
                    check_cancel(cancel)
                    findings[futures[fut]] = fut.result()
                    progress.advance(1, futures[fut])
            except BaseException:
                for fut in futures:
                    fut.cancel()
                raise
    index = {n: i for i, n in enumerate(t.name for t in tasks)}
    ordered = [f for name in sorted(findings, key=lambda n: index.get(n, -1)) for f in findings[name]]
    return names, ordered
