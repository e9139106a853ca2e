"""One unit of work: one test run of one variant of one implementation, and what it takes to run it anywhere.

A unit names its task by a ``TaskRef`` and carries its variant as data (a tagged ``harness.spec`` variant: golden,
masked, or the goal files of a mutant or a candidate), so that it runs the same in a thread of this process and
on another machine that received the task folder as an archive. ``execute`` is what every executor calls where
the unit lands.
"""

from __future__ import annotations

import io
import tarfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from lmrbench.benchmark.sandbox.environments.machine_lock import MachineLock
from lmrbench.core.source.tree import read_untrusted_goal_file
from lmrbench.core.taskset import STATE_DIRS, Task, load_task
from lmrbench.defaults import cache_root
from lmrbench.errors import LmrError
from lmrbench.fsutil import staging_dir
from lmrbench.harness.evidence import Evidence
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.spec import TaggedVariant
from lmrbench.progress import Cancelled, NullProgress, Progress
from lmrbench.schemas.testrun import TestReport, TestStatus

GoalFiles = dict[str, str]
"""A variant given as data: goal file (relative to the repository) -> source."""
Purpose = Literal["golden", "masked", "mutant", "tolerance", "candidate"]
"""What a run is for: proving the golden code, the masked stub or a mutant during validation, measuring the
tolerances' margins (the golden code re-run in float64), or grading."""


@dataclass(frozen=True)
class TaskRef:
    """Where a unit finds its task: a folder this machine sees, or an archive shipped with the unit."""

    name: str
    path: str
    """The task folder on the machine that planned the work."""
    digest: str = ""
    """sha256 of the shipped archive ('' when the folder is read in place)."""


@dataclass(frozen=True)
class RunUnit:
    """One test run: ``variant`` of implementation ``impl`` of a task, with the runs' settings."""

    key: str
    """The planner's name for this run, unique within one command (e.g. ``1-DPO#1 mutant 3/12``); shown in
    progress lines, never parsed: ``purpose`` and ``ordinal`` say what the run is."""
    task: TaskRef
    impl: int
    variant: TaggedVariant
    """What fills the goal functions, its trust stated by its type (``harness.spec``)."""
    timeout: float
    purpose: Purpose = "candidate"
    ordinal: int = 0
    """Which run of its purpose it is (golden run k, mutant k), from 1; 0 when there is one of it."""
    expected_ids: list[str] | None = None
    env: dict[str, str] = field(default_factory=dict)
    rebuild: bool = False
    """Rebuild the task's environment before the first run of this command on a machine."""
    journal: str = ""
    """Where its commands' specs are written before they start (``harness.evidence.Evidence.journal``), on the
    machine that planned it; '' for none (a unit run on another machine)."""


@dataclass(frozen=True)
class UnitResult:
    """What came back from a unit: the test report, and the environment it ran in."""

    report: TestReport
    environment_error: str = ""
    """Why the task's environment could not be prepared ('' when it was): no test ran, and the report is an
    infrastructure error saying the same."""
    environment_cause: str = ""
    """What stopped it: ``image``, ``requirement`` or ``environment`` (``errors.EnvironmentUnavailable``)."""
    env_id: str = ""
    """The task's environment (image tag or venv) where it ran; '' when none could be prepared."""
    image_id: str = ""
    """The image's id under Docker ('' otherwise)."""
    framework: str = ""
    """The framework layer the image builds on, with where its torch came from ('' without one)."""
    node: str = ""
    """The machine it ran on ('' for this process)."""
    evidence: Evidence | None = None
    """What its verdict was decided from: each command's spec, reports and whole output (None when no
    command ran)."""


def goal_files_of(task: Task, impl_index: int, folder: Path) -> GoalFiles:
    """The goal files of a repo-shaped candidate folder as data (links, oversized and non-UTF-8 files refused:
    ``read_untrusted_goal_file``)."""
    impl = task.info.implementation(impl_index)
    repo = folder / task.info.repo_folder_name
    repo = repo if repo.is_dir() and not repo.is_symlink() else folder
    return {goal: read_untrusted_goal_file(repo, goal) for goal in impl.goal_files}


def infra_report(detail: str, runner: str) -> TestReport:
    """The report of a run that the machinery, not the code under test, failed."""
    return TestReport(status=TestStatus.INFRA_ERROR, sandbox=runner, detail=detail)  # type: ignore[arg-type]


class Prepared:
    """Each task's environment prepared once per process (and once per machine across processes)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done: dict[tuple[int, str], tuple[str, str, str]] = {}
        self._failed: dict[tuple[int, str], LmrError] = {}
        self._task_locks: dict[tuple[int, str], threading.Lock] = {}

    def env_id(self, sandbox: Sandbox, task: Task, *, rebuild: bool, progress: Progress,
               cancel: threading.Event | None) -> tuple[str, str, str]:
        """The environment of ``task`` in ``sandbox``, and under Docker its image id and framework layer (``torch==2.4.1
        (PyPI (the CUDA build))``); LmrError (remembered) when it cannot be prepared."""
        key = (id(sandbox), str(task.path))
        with self._lock:
            lock = self._task_locks.setdefault(key, threading.Lock())
        with lock:
            if key in self._done:
                return self._done[key]
            if key in self._failed:
                raise self._failed[key]
            try:
                with MachineLock(f"prepare-{task.name}"):
                    env = sandbox.prepare(task, rebuild=rebuild, progress=progress, cancel=cancel)
            except Cancelled:
                raise
            except LmrError as exc:
                self._failed[key] = exc
                raise
            facts = sandbox.transport.environment(task)  # the transport says its image and framework
            self._done[key] = (env, facts.image_id, facts.framework)
            return self._done[key]


def execute(
    unit: RunUnit,
    task: Task,
    sandbox: Sandbox,
    prepared: Prepared,
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> UnitResult:
    """Prepare the task's environment (once) and run the unit's tests on its variant."""
    from lmrbench.harness.variant import evaluate_variant

    progress = progress or NullProgress()
    try:
        env_id, image, framework = prepared.env_id(sandbox, task, rebuild=unit.rebuild, progress=progress,
                                                   cancel=cancel)
    except Cancelled:
        raise
    except LmrError as exc:
        return UnitResult(infra_report(f"the environment could not be prepared: {exc}", sandbox.name),
                          environment_error=str(exc), environment_cause=getattr(exc, "cause", "environment"))
    impl = task.info.implementation(unit.impl)
    evidence = Evidence(journal=Path(unit.journal) if unit.journal else None)
    try:
        report = evaluate_variant(sandbox, task, impl, unit.variant, timeout=unit.timeout,
                                  expected_ids=unit.expected_ids, env=unit.env, cancel=cancel, evidence=evidence)
    except Cancelled:
        raise
    except LmrError as exc:
        report = infra_report(str(exc), sandbox.name)
        evidence.runs.clear()  # a report not decided from its commands: none of them is its evidence
    return UnitResult(report, env_id=env_id, image_id=image, framework=framework, evidence=evidence)


def pack_task(task: Task) -> bytes:
    """The task folder as a gzip'd tar, the same bytes for the same files (sorted, no times or owners)."""
    buf = io.BytesIO()
    root = task.path
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            if any(part in STATE_DIRS for part in rel.parts) or path.is_symlink():
                continue
            info = tar.gettarinfo(str(path), arcname=f"{task.name}/{rel.as_posix()}")
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if path.is_dir():
                tar.addfile(info)
            elif path.is_file():
                with open(path, "rb") as fh:
                    tar.addfile(info, fh)
    data = buf.getvalue()
    # gzip's header holds a time: zero it, so equal folders give equal bytes
    return data[:4] + b"\0\0\0\0" + data[8:]


def unpack_task(ref: TaskRef, archive: bytes) -> Task:
    """The shipped task, unpacked once per machine under the cache root (keyed by the archive's digest)."""
    dest = cache_root() / "shipped-tasks" / ref.digest
    folder = dest / ref.name
    if not folder.is_dir():
        with MachineLock(f"unpack-{ref.digest}"):
            if not folder.is_dir():
                dest.parent.mkdir(parents=True, exist_ok=True)
                with staging_dir(dest) as tmp, tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
                    tar.extractall(tmp, filter="data")
    return load_task(folder)
