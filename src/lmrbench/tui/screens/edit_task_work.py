"""The edit screen's background work: each worker calls one core function in a thread and posts what it found.

``TaskWork`` is a plain object the screen owns. It starts thread workers on the screen (``run_worker``, with the
names, groups and flags ``@work`` gave them, so Textual cancels them with the screen and reports their end to its
``Worker.StateChanged`` handler) and posts its messages to the screen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker, get_current_worker

from lmrbench.authoring.task.mask import MaskStyle
from lmrbench.authoring.task.task_files import TaskFiles, read_task_files
from lmrbench.core.source.index import python_files
from lmrbench.core.taskset import Task, load_task
from lmrbench.tui.widgets.work_panel import WorkPanel
from lmrbench.tui.workers import report_worker

if TYPE_CHECKING:  # the sandbox, recording and validation stack loads in the workers that use it
    from lmrbench.core.sandbox import SandboxKind
    from lmrbench.schemas.recording import RecordedCase
    from lmrbench.schemas.validation import ImplValidation

R = TypeVar("R")


class TaskWork:
    """The workers of the edit screen (load, read, record, validate, mask one task) and the messages they post."""

    @dataclass
    class Recorded(Message):
        """The cases recorded for one implementation."""

        impl: int
        cases: list[RecordedCase]

    @dataclass
    class Validated(Message):
        """The task's validation results."""

        results: list[ImplValidation]

    @dataclass
    class Loaded(Message):
        """The task and its repository's files."""

        task: Task
        files: list[str]
        index: int | None = None
        """The implementation to show (default: the first)."""

    @dataclass
    class FilesRead(Message):
        """An implementation's tests, masking and the paper."""

        index: int
        files: TaskFiles

    def __init__(self, screen: Screen[Any], path: Path, *, sandbox: SandboxKind | None = None) -> None:
        self.screen = screen
        """Where the workers run and the messages go."""
        self.path = path
        """The task's folder."""
        self.sandbox_kind = sandbox

    # ---- starting work (on the app's thread) -----------------------------------------------------

    def _run(self, body: Callable[..., R], group: str, *args: Any) -> Worker[R]:
        """Run ``body(panel, *args)`` as the screen's exclusive thread worker of ``group`` (as ``@work`` would)."""
        panel = self.screen.query_one(WorkPanel)
        name = body.__name__.lstrip("_")
        return self.screen.run_worker(
            partial(body, panel, *args), name=name, group=group, description=f"{name}{args!r}",
            exclusive=True, exit_on_error=False, thread=True,
        )

    def load(self) -> None:
        """Read info.json and list the repository's Python files."""
        self._run(self._load, "load")

    def read_files(self, task: Task, index: int) -> None:
        """Read implementation ``index``'s test files, golden and goal files and the paper."""
        self._run(self._read_files, "files", task, index)

    def record(self, task: Task, impl: int, command: str) -> None:
        """Record implementation ``impl``'s tests again while ``command`` runs (replacing the generated file)."""
        self._run(self._record, "tests", task, impl, command)

    def scaffold(self, task: Task, impl: int) -> None:
        """Write a scaffold test for implementation ``impl`` (refuses to replace an edited test file)."""
        self._run(self._scaffold, "tests", task, impl)

    def validate(self, task: Task, *, force: bool = False) -> None:
        """Build and validate the task as it is on disk now (live log); an implementation unchanged since its stored
        result keeps it unless ``force``."""
        self._run(self._validate, "validate", task, force)

    def add_impl(self, task: Task, function: str, instruction: str, category: str, style: MaskStyle) -> None:
        """Mask one more function (``FILE::[Class.]name``) as a new implementation."""
        self._run(self._add_impl, "mask", task, function, instruction, category, style)

    def remask(self, task: Task, index: int, style: MaskStyle) -> None:
        """Rebuild implementation ``index``'s goal file from its golden file in ``style``."""
        self._run(self._remask, "mask", task, index, style)

    # ---- the workers' bodies (in a thread: they only post messages) -------------------------------

    def _load(self, panel: WorkPanel) -> None:
        """Read info.json and list the repository's Python files."""
        task = load_task(self.path)
        self.screen.post_message(self.Loaded(task, python_files(task.repo_dir)))

    def _read_files(self, panel: WorkPanel, task: Task, index: int) -> None:
        """Read the implementation's test files, golden and goal files and the paper."""
        self.screen.post_message(self.FilesRead(index, read_task_files(task, index)))

    def _record(self, panel: WorkPanel, task: Task, impl: int, command: str) -> None:
        """Record the selected implementation's tests again (replacing the generated file)."""
        from lmrbench.authoring.record.record import record_tests
        from lmrbench.benchmark.execution.sandboxes import get_sandbox

        cancel = get_current_worker().cancelled_event
        progress = panel.progress()
        sandbox = get_sandbox(self.sandbox_kind, progress=progress)
        result = record_tests(
            task, impl, command, sandbox=sandbox, force=True, progress=progress, cancel=cancel
        )
        self.screen.post_message(self.Recorded(impl, result.cases))

    def _scaffold(self, panel: WorkPanel, task: Task, impl: int) -> None:
        """Write a scaffold for the selected implementation (refuses to replace an edited test file)."""
        from lmrbench.authoring.record.recorded_tests import scaffold_tests

        path = scaffold_tests(task, impl)
        panel.progress().log(f"scaffold written: {path} (fill in the LMRBENCH-TODO values)")
        self.screen.post_message(self.Loaded(load_task(task.path), python_files(task.repo_dir), impl))

    def _validate(self, panel: WorkPanel, task: Task, force: bool) -> None:
        """Build and validate the task as it is on disk now (live log)."""
        from lmrbench.benchmark.validation.plan import ValidateOptions
        from lmrbench.benchmark.validation.task import validate_task

        results = validate_task(
            task.path, sandbox=self.sandbox_kind, options=ValidateOptions(force=force),
            progress=panel.progress(), cancel=get_current_worker().cancelled_event,
        )
        self.screen.post_message(self.Validated(results))

    def _add_impl(
        self, panel: WorkPanel, task: Task, function: str, instruction: str, category: str, style: MaskStyle
    ) -> None:
        """Mask one more function (nothing changes on an error)."""
        from lmrbench.authoring.task.goal_functions import add_implementation
        from lmrbench.authoring.task.task_spec import FunctionRef

        new = add_implementation(task, FunctionRef.parse(function), instruction, category=category, mask_style=style)
        impl = new.info.implementations[-1]
        panel.progress().log(f"added implementation {impl.index}: {impl.goal_file} ({style})")
        self.screen.post_message(self.Loaded(new, python_files(new.repo_dir), impl.index))

    def _remask(self, panel: WorkPanel, task: Task, index: int, style: MaskStyle) -> None:
        """Rebuild the goal file from the golden file."""
        from lmrbench.authoring.task.goal_functions import remask

        new = remask(task, index, style)
        files = ", ".join(new.info.implementation(index).goal_files)
        panel.progress().log(f"re-masked {files} ({style})")
        self.screen.post_message(self.Loaded(new, python_files(new.repo_dir), index))

    # ---- running work ----------------------------------------------------------------------------

    @property
    def running(self) -> list[Worker[object]]:
        """The screen's running workers."""
        return [w for w in self.screen.app.workers if w.node is self.screen and w.is_running]

    def stop(self) -> None:
        """Cancel every running worker."""
        for worker in self.running:
            worker.cancel()

    def worker_changed(self, event: Worker.StateChanged) -> None:
        """Show a worker's end (the app's one report)."""
        report_worker(self.screen, event)
