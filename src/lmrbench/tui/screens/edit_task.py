"""Edit a task: the instruction and metadata of each implementation; add one, re-mask, re-record, re-validate."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Button, Footer, Header, Input, Label, Select, TabbedContent, TabPane, TextArea
from textual.worker import Worker, WorkerState, get_current_worker

from lmrbench.authoring.check import check_task
from lmrbench.authoring.index import python_files
from lmrbench.authoring.mask import MaskStyle
from lmrbench.core.taskset import Task, load_task
from lmrbench.errors import LmrError
from lmrbench.schemas.task_info import save_task_info
from lmrbench.tui.widgets.metadata_form import Metadata, MetadataForm
from lmrbench.tui.widgets.task_tests import TaskTests
from lmrbench.tui.widgets.validation_table import ValidationTable
from lmrbench.tui.widgets.work_panel import WorkPanel, error_text

if TYPE_CHECKING:  # the sandbox, recording and validation stack loads in the workers that use it
    from lmrbench.core.sandbox import RunnerKind
    from lmrbench.schemas.recording import RecordedCase
    from lmrbench.schemas.validation import ImplValidation


class EditTaskScreen(Screen[str | None]):
    """Dismisses with the task's folder name when something was saved."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="edit.save", tooltip="Write info.json (atomically)"),
        Binding(
            "ctrl+g", "validate", "Validate", id="edit.validate",
            tooltip="Build the environment and validate every implementation again",
        ),
        Binding(
            "ctrl+o", "add_implementation", "Add impl", id="edit.add_impl",
            tooltip="Mask one more function of the repository as a new implementation",
        ),
        Binding(
            "ctrl+b", "remask", "Re-mask", id="edit.remask",
            tooltip="Rebuild the selected implementation's goal file from its golden file in the chosen style",
        ),
        Binding("ctrl+t", "stop_work", "Stop", id="edit.stop", tooltip="Cancel the running work"),
        Binding("ctrl+r", "check", "Check", id="edit.check", tooltip="Run the checks of `tasks check`"),
        Binding("escape", "close", "Close", id="edit.close", tooltip="Back to the task set"),
    ]

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

    def __init__(self, path: Path, *, sandbox: RunnerKind | None = None) -> None:
        super().__init__()
        self.path = path
        self.sandbox_kind = sandbox
        self.edited: Task | None = None
        self.impl_index = 1
        self.saved = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(classes="row"):
            yield Label("Implementation ", classes="pane-title")
            yield Select[int]([], id="impl", prompt="implementation")
            yield Label("", id="edit-where", classes="hint")
        with TabbedContent(id="edit-tabs"):
            with TabPane("Instruction & metadata", id="tab-info"), Horizontal():
                with Vertical():
                    yield Label("Instruction (shown to the model)", classes="pane-title")
                    yield TextArea("", id="edit-instruction", soft_wrap=True)
                yield MetadataForm(id="edit-metadata")
            with TabPane("Tests", id="tab-tests"):
                yield TaskTests(id="tests")
            with TabPane("Implementations", id="tab-impls"), Vertical():
                yield Label("Add an implementation, or re-mask the selected one", classes="pane-title")
                yield Label(
                    "The new implementation takes the category shown in the metadata form;"
                    " its golden file is the goal file's existing one, or the file as it is now.",
                    classes="hint",
                )
                yield Input(placeholder="FILE::[Class.]name", id="add-function")
                yield Input(placeholder="instruction for the new implementation", id="add-instruction")
                with Horizontal(classes="row"):
                    yield Label("Mask style ", classes="pane-title")
                    yield Select[str](
                        [(s.value, s.value) for s in MaskStyle], value=MaskStyle.TODO_RAISE.value,
                        allow_blank=False, id="mask-style",
                    )
                    add = Button("Add implementation (ctrl+o)", id="add-impl", variant="primary")
                    add.tooltip = "Mask the function above as a new implementation"
                    yield add
                    again = Button("Re-mask (ctrl+b)", id="remask")
                    again.tooltip = "Rebuild the selected implementation's goal file in the chosen style"
                    yield again
            with TabPane("Validate", id="tab-validate"):
                yield Label("Validate this task (golden passes, masked fails, mutants die)", classes="hint")
                yield ValidationTable(id="validation")
        yield WorkPanel(id="work")
        yield Footer()

    def on_mount(self) -> None:
        """Load the task in a thread."""
        self.panel = self.query_one(WorkPanel)
        self.query_one("#md-name", Input).disabled = True
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="load")
    def load(self) -> None:
        """Read info.json and list the repository's Python files."""
        task = load_task(self.path)
        self.post_message(self.Loaded(task, python_files(task.repo_dir)))

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        if message.index is not None:
            self.saved = True
        self.edited = message.task
        info = message.task.info
        self.query_one("#edit-where", Label).update(f"{message.task.path} · repo {info.repo_folder_name}/")
        select = self.query_one("#impl", Select)
        select.set_options([(f"{i.index}: {i.goal_function}", i.index) for i in info.implementations])
        self._files = message.files
        self.query_one(TaskTests).set_task(message.task)
        indexes = [i.index for i in info.implementations]
        if indexes:
            index = message.index if message.index in indexes else indexes[0]
            select.value = index
            self._show(index)

    def _show(self, index: int) -> None:
        assert self.edited is not None
        info = self.edited.info
        impl = info.implementation(index)
        self.impl_index = index
        self.query_one("#edit-instruction", TextArea).load_text(impl.instruction)
        form = self.query_one(MetadataForm)
        form.set_files(self._files, impl.retrieval_context)
        cat = impl.category_normalized
        year = info.year if isinstance(info.year, int) else None
        form.set_values(
            Metadata(self.edited.name, info.paper_name, info.paper_url, year, cat.value if cat else "", [])
        )

    @on(Select.Changed, "#impl")
    def _impl_changed(self, event: Select.Changed) -> None:
        if self.edited is not None and isinstance(event.value, int) and event.value != self.impl_index:
            self._show(event.value)

    def action_save(self) -> None:
        """Write the edited implementation and paper fields into info.json."""
        if self.edited is None:
            return
        form = self.query_one(MetadataForm)
        unchanged = {"name"}  # an official file's odd URL does not block other edits
        if form.values().paper_url == self.edited.info.paper_url:
            unchanged.add("paper_url")
        problems = {k: v for k, v in form.check_fields().items() if k not in unchanged}
        if problems:
            text = "; ".join(f"{k}: {v}" for k, v in problems.items())
            self.notify(text, title="Not saved", severity="error")
            return
        md = form.values()
        info = self.edited.info
        impls = [
            i.model_copy(
                update={
                    "instruction": self.query_one("#edit-instruction", TextArea).text,
                    "category": md.category,
                    "retrieval_context": md.retrieval_context,
                }
            )
            if i.index == self.impl_index
            else i
            for i in info.implementations
        ]
        paper = {"paper_name": md.paper_name, "paper_url": md.paper_url, "year": md.year}
        new = info.model_copy(update={**paper, "implementations": impls})
        try:
            save_task_info(new, self.edited.path)
            self.edited = load_task(self.edited.path)
        except LmrError as exc:
            self.notify(str(exc), title="Not saved", severity="error")
            return
        self.saved = True
        self.notify(f"saved {self.edited.path / 'info.json'}")
        self.action_check()

    @on(TaskTests.Record)
    def _record(self, message: TaskTests.Record) -> None:
        if self.edited is not None:
            self.record(self.edited, self.impl_index, message.command)

    @on(TaskTests.Scaffold)
    def _scaffold(self) -> None:
        if self.edited is not None:
            self.scaffold(self.edited, self.impl_index)

    @work(thread=True, exclusive=True, exit_on_error=False, group="tests")
    def record(self, task: Task, impl: int, command: str) -> None:
        """Record the selected implementation's tests again (replacing the generated file)."""
        from lmrbench.authoring.record import record_tests
        from lmrbench.benchmark.sandbox.choose import get_sandbox

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
        from lmrbench.authoring.record import scaffold_tests

        path = scaffold_tests(task, impl)
        self.panel.progress().log(f"scaffold written: {path} (fill in the LMRBENCH-TODO values)")

    @on(Recorded)
    def _recorded(self, message: Recorded) -> None:
        self.query_one(TaskTests).show_cases(message.impl, message.cases)
        self.saved = True

    def action_validate(self) -> None:
        """Validate the task (results go where `lmrbench validate` keeps them, shown in the task set)."""
        if self.edited is not None:
            self.query_one(TabbedContent).active = "tab-validate"
            self.validate(self.edited)

    @work(thread=True, exclusive=True, exit_on_error=False, group="validate")
    def validate(self, task: Task) -> None:
        """Build and validate in a thread (live log)."""
        from lmrbench.benchmark.validate import (
            ValidateOptions,
            default_run_dir,
            load_result,
            result_path,
            validate_taskset,
        )

        cancel = get_current_worker().cancelled_event
        bench = task.path.parent
        validate_taskset(
            bench, only=[task.name], runner=self.sandbox_kind, options=ValidateOptions(force=True),
            progress=self.panel.progress(), cancel=cancel,
        )
        run_dir = default_run_dir(bench)
        results = [load_result(result_path(run_dir, task.name, i.index)) for i in task.info.implementations]
        self.post_message(self.Validated([r for r in results if r is not None]))

    @on(Validated)
    def _validated(self, message: Validated) -> None:
        self.query_one(ValidationTable).show(message.results)
        self.saved = True

    def _mask_style(self) -> MaskStyle:
        value = self.query_one("#mask-style", Select).value
        return MaskStyle(value) if isinstance(value, str) else MaskStyle.TODO_RAISE

    @on(Button.Pressed, "#add-impl")
    def _add_pressed(self) -> None:
        self.action_add_implementation()

    @on(Button.Pressed, "#remask")
    def _remask_pressed(self) -> None:
        self.action_remask()

    def action_add_implementation(self) -> None:
        """Add the function typed in the Implementations tab as a new implementation."""
        if self.edited is None:
            return
        self.query_one(TabbedContent).active = "tab-impls"
        function = self.query_one("#add-function", Input).value
        instruction = self.query_one("#add-instruction", Input).value
        category = self.query_one(MetadataForm).values().category
        self.add_impl(self.edited, function, instruction, category, self._mask_style())

    @work(thread=True, exclusive=True, exit_on_error=False, group="mask")
    def add_impl(self, task: Task, function: str, instruction: str, category: str, style: MaskStyle) -> None:
        """Mask one more function (nothing changes on an error)."""
        from lmrbench.authoring.task_new import FunctionRef, add_implementation

        new = add_implementation(task, FunctionRef.parse(function), instruction, category=category, mask_style=style)
        impl = new.info.implementations[-1]
        self.panel.progress().log(f"added implementation {impl.index}: {impl.goal_file} ({style})")
        self.post_message(self.Loaded(new, python_files(new.repo_dir), impl.index))

    def action_remask(self) -> None:
        """Re-mask the selected implementation's goal file in the chosen style."""
        if self.edited is not None:
            self.query_one(TabbedContent).active = "tab-impls"
            self.remask(self.edited, self.impl_index, self._mask_style())

    @work(thread=True, exclusive=True, exit_on_error=False, group="mask")
    def remask(self, task: Task, index: int, style: MaskStyle) -> None:
        """Rebuild the goal file from the golden file."""
        from lmrbench.authoring.task_new import remask

        new = remask(task, index, style)
        files = ", ".join(new.info.implementation(index).goal_files)
        self.panel.progress().log(f"re-masked {files} ({style})")
        self.post_message(self.Loaded(new, python_files(new.repo_dir), index))

    def action_stop_work(self) -> None:
        """Cancel the running work."""
        for worker in self.app.workers:
            if worker.node is self and worker.is_running:
                worker.cancel()

    def action_check(self) -> None:
        """Show the task's problems in the log."""
        if self.edited is None:
            return
        problems = check_task(self.edited)
        for line in problems or [f"{self.edited.name}: no problems"]:
            self.panel.post_message(WorkPanel.Logged(line))

    def action_close(self) -> None:
        """Back to the task set."""
        self.dismiss(self.edited.name if self.saved and self.edited else None)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Worker errors are shown in the app."""
        if event.state == WorkerState.ERROR:
            text = error_text(event.worker.error)
            self.panel.error(text)
            self.notify(text, title=f"{event.worker.name} failed", severity="error")
