"""The edit screen's work: each worker calls one core function in a thread and posts what it found."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
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


class EditTaskWork(Screen[str | None]):
    """The workers of the edit screen and the messages they post."""

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

    def __init__(self, path: Path, *, sandbox: SandboxKind | None = None) -> None:
        super().__init__()
        self.path = path
        self.sandbox_kind = sandbox
        self.panel: WorkPanel

    @work(thread=True, exclusive=True, exit_on_error=False, group="load")
    def load(self) -> None:
        """Read info.json and list the repository's Python files."""
        task = load_task(self.path)
        self.post_message(self.Loaded(task, python_files(task.repo_dir)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="files")
    def read_files(self, task: Task, index: int) -> None:
        """Read the implementation's test files, golden and goal files and the paper."""
        self.post_message(self.FilesRead(index, read_task_files(task, index)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="tests")
    def record(self, task: Task, impl: int, command: str) -> None:
        """Record the selected implementation's tests again (replacing the generated file)."""
        from lmrbench.authoring.record.record import record_tests
        from lmrbench.benchmark.execution.sandboxes import get_sandbox

        cancel = get_current_worker().cancelled_event
        progress = self.panel.progress()
        sandbox = get_sandbox(self.sandbox_kind, progress=progress)
        result = record_tests(
            task, impl, command, sandbox=sandbox, force=True, progress=progress, cancel=cancel
        )
        self.post_message(self.Recorded(impl, result.cases))

    @work(thread=True, exclusive=True, exit_on_error=False, group="tests")
    def scaffold(self, task: Task, impl: int) -> None:
        """Write a scaffold for the selected implementation (refuses to replace an edited test file)."""
        from lmrbench.authoring.record.recorded_tests import scaffold_tests

        path = scaffold_tests(task, impl)
        self.panel.progress().log(f"scaffold written: {path} (fill in the LMRBENCH-TODO values)")
        self.post_message(self.Loaded(load_task(task.path), python_files(task.repo_dir), impl))

    @work(thread=True, exclusive=True, exit_on_error=False, group="validate")
    def validate(self, task: Task) -> None:
        """Build and validate the task as it is on disk now (live log)."""
        from lmrbench.benchmark.validation.plan import ValidateOptions
        from lmrbench.benchmark.validation.task import validate_task

        results = validate_task(
            task.path, sandbox=self.sandbox_kind, options=ValidateOptions(force=True),
            progress=self.panel.progress(), cancel=get_current_worker().cancelled_event,
        )
        self.post_message(self.Validated(results))

    @work(thread=True, exclusive=True, exit_on_error=False, group="mask")
    def add_impl(self, task: Task, function: str, instruction: str, category: str, style: MaskStyle) -> None:
        """Mask one more function (nothing changes on an error)."""
        from lmrbench.authoring.task.goal_functions import add_implementation
        from lmrbench.authoring.task.task_spec import FunctionRef

        new = add_implementation(task, FunctionRef.parse(function), instruction, category=category, mask_style=style)
        impl = new.info.implementations[-1]
        self.panel.progress().log(f"added implementation {impl.index}: {impl.goal_file} ({style})")
        self.post_message(self.Loaded(new, python_files(new.repo_dir), impl.index))

    @work(thread=True, exclusive=True, exit_on_error=False, group="mask")
    def remask(self, task: Task, index: int, style: MaskStyle) -> None:
        """Rebuild the goal file from the golden file."""
        from lmrbench.authoring.task.goal_functions import remask

        new = remask(task, index, style)
        files = ", ".join(new.info.implementation(index).goal_files)
        self.panel.progress().log(f"re-masked {files} ({style})")
        self.post_message(self.Loaded(new, python_files(new.repo_dir), index))

    @property
    def running_workers(self) -> list[Worker[object]]:
        """This screen's running workers."""
        return [w for w in self.app.workers if w.node is self and w.is_running]

    def action_stop_work(self) -> None:
        """Cancel the running work."""
        for worker in self.running_workers:
            worker.cancel()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Every worker's end is shown by the app's one handler."""
        report_worker(self, event)
