"""Edit a task: each implementation's instruction and metadata, its tests, masking and paper; add an
implementation, re-mask, re-record, re-validate. Unsaved edits are never dropped without asking.

The screen composes the tabs and holds the key bindings; its handlers show what happened and hand the rest to plain
objects it owns: ``TaskEdits`` (the task, the implementation shown, its unsaved edits, Save) and ``TaskWork`` (the
workers and the messages they post).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Header, Input, Label, Select, TabbedContent, TabPane, TextArea
from textual.worker import Worker

from lmrbench.authoring.task.mask import MaskStyle
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError
from lmrbench.tui.dialogs.confirm import ConfirmDialog
from lmrbench.tui.screens.edit_task_edits import Fields, TaskEdits
from lmrbench.tui.screens.edit_task_work import TaskWork
from lmrbench.tui.widgets.code_view import CodeView
from lmrbench.tui.widgets.diff_view import DiffView
from lmrbench.tui.widgets.keys_footer import KeysFooter
from lmrbench.tui.widgets.metadata_form import MetadataForm
from lmrbench.tui.widgets.paper_view import PaperView
from lmrbench.tui.widgets.task_tests import TaskTests
from lmrbench.tui.widgets.validation_table import ValidationTable
from lmrbench.tui.widgets.work_panel import WorkPanel

if TYPE_CHECKING:
    from lmrbench.core.sandbox import SandboxKind


class EditTaskScreen(Screen[str | None]):
    """Edit one task; dismisses with the task's folder name when something was saved."""

    HELP = (
        "Change a task's instruction and metadata (ctrl+s saves), record its tests again, read its tests, mask "
        "and paper, and validate it again (ctrl+g)."
    )

    DEFAULT_CSS = """
    EditTaskScreen { overflow: hidden; }
    EditTaskScreen #edit-tabs { height: 1fr; }
    EditTaskScreen #edit-tabs TabPane { height: 1fr; padding: 0; }
    EditTaskScreen #impl { width: 40; }
    EditTaskScreen #edit-instruction { height: 1fr; }
    EditTaskScreen #tab-info > Horizontal > Vertical { width: 1fr; }
    EditTaskScreen MetadataForm { width: 1fr; }
    """
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
        Binding("ctrl+r", "check", "Check", id="edit.check", tooltip="Run the checks of `lmrbench task check`"),
        Binding("escape", "close", "Close", id="edit.close", tooltip="Back to the task set (asks about unsaved edits)"),
    ]

    def __init__(self, path: Path, *, sandbox: SandboxKind | None = None) -> None:
        super().__init__()
        self.work = TaskWork(self, path, sandbox=sandbox)
        """The workers (load, read the files, record, validate, mask) and the messages they post."""
        self.edits = TaskEdits()
        """The task, the implementation shown, its unsaved edits and Save."""

    # The state the controllers hold, read through the screen.

    @property
    def edited(self) -> Task | None:
        return self.edits.task

    @property
    def impl_index(self) -> int:
        return self.edits.impl_index

    @property
    def saved(self) -> bool:
        return self.edits.saved

    @saved.setter
    def saved(self, saved: bool) -> None:
        self.edits.saved = saved
        self._validated_here = False  # the task changed on disk (a save, a recording, a mask)

    @property
    def running_workers(self) -> list[Worker[object]]:
        """This screen's running workers."""
        return self.work.running

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(classes="row"):
            yield Label("Implementation ", classes="pane-title")
            yield Select[int]([], id="impl", prompt="implementation")
            yield Label("", id="edit-where", classes="hint", markup=False)
        with TabbedContent(id="edit-tabs"):
            with TabPane("Info", id="tab-info"), Horizontal():
                with Vertical():
                    yield Label("Instruction (shown to the model)", classes="pane-title")
                    yield TextArea("", id="edit-instruction", soft_wrap=True)
                yield MetadataForm(id="edit-metadata")
            with TabPane("Tests", id="tab-tests"):
                yield TaskTests(id="tests")
            with TabPane("Test code", id="tab-test-code"):
                yield CodeView(id="test-code")
            with TabPane("Mask", id="tab-mask"):
                yield DiffView(id="mask-diff")
            with TabPane("Paper", id="tab-paper"):
                yield PaperView(id="edit-paper")
            with TabPane("Impls", id="tab-impls"), Vertical():
                yield Label("Add an implementation, or re-mask the selected one", classes="pane-title")
                yield Label(
                    "The new implementation takes the category shown in the metadata form;"
                    " its golden file is the goal file's existing one, or the file as it is now.",
                    classes="hint",
                )
                yield Input(placeholder="FILE::[Class.]name", id="add-function", select_on_focus=False)
                yield Input(placeholder="instruction for the new implementation", id="add-instruction",
                            select_on_focus=False)
                with Horizontal(classes="row"):
                    yield Select[str](
                        [(s.value, s.value) for s in MaskStyle], value=MaskStyle.TODO_RAISE.value,
                        allow_blank=False, id="mask-style",
                    )
                    yield Button("Add (ctrl+o)", id="add-impl", variant="primary",
                                 tooltip="Mask the function above as a new implementation")
                    yield Button("Re-mask (ctrl+b)", id="remask",
                                 tooltip="Rebuild the selected implementation's goal file in the chosen style")
            with TabPane("Validate", id="tab-validate"):
                yield Label("Golden passes, masked fails, mutants are killed (ctrl+g)", classes="hint")
                yield ValidationTable(id="validation")
        yield WorkPanel(id="work")
        yield KeysFooter()

    def on_mount(self) -> None:
        """Load the task in a thread."""
        name = self.query_one("#md-name", Input)
        name.disabled = True
        name.tooltip = "Fixed while editing: runs, labels and results name the task by its folder"
        # a disabled field is barely dimmer than an enabled one: say in words that it cannot change here
        form = self.query_one(MetadataForm)
        form.name_note = "fixed here: runs, labels and results name the task by its folder"
        self.query_one("#md-name-error", Label).update(form.name_note)
        self.work.load()

    # ---- the form ---------------------------------------------------------------------------------

    def fields(self) -> Fields:
        """The instruction and the metadata as typed."""
        return self.query_one("#edit-instruction", TextArea).text, self.query_one(MetadataForm).values()

    def mask_style(self) -> MaskStyle:
        """The chosen mask style."""
        value = self.query_one("#mask-style", Select).value
        return MaskStyle(value) if isinstance(value, str) else MaskStyle.TODO_RAISE

    def log_lines(self, lines: list[str]) -> None:
        """Add ``lines`` to the work panel's log."""
        panel = self.query_one(WorkPanel)
        for line in lines:
            panel.post_message(WorkPanel.Logged(line))

    def ask(self, question: str, yes: str, answered: Callable[[bool | None], None]) -> None:
        """Ask ``question`` (the confirming button says ``yes``); ``answered`` gets the answer."""
        self.app.push_screen(ConfirmDialog(question, yes=yes), answered)

    # ---- the task and the implementation shown ---------------------------------------------------

    @on(TaskWork.Loaded)
    def _loaded(self, message: TaskWork.Loaded) -> None:
        task = message.task
        index = self.edits.take(task, message.files, message.index)
        self.query_one("#edit-where", Label).update(f"{task.path} · repo {task.info.repo_folder_name}/")
        select = self.query_one("#impl", Select)
        select.set_options([(f"{i.index}: {i.goal_function}", i.index) for i in task.info.implementations])
        self.query_one(TaskTests).set_task(task)
        if index is not None:
            with select.prevent(Select.Changed):
                select.value = index
            self._show(index)

    def _show(self, index: int) -> None:
        assert self.edited is not None
        instruction, md = self.edits.select(index)
        self.query_one("#edit-instruction", TextArea).load_text(instruction)
        form = self.query_one(MetadataForm)
        form.set_files(self.edits.files, md.retrieval_context)
        form.set_values(md)
        self.edits.shown = self.fields()
        self.work.read_files(self.edited, index)

    @on(TaskWork.FilesRead)
    def _files_read(self, message: TaskWork.FilesRead) -> None:
        files = message.files
        code = "\n".join(f"# ---- {rel}\n{text}" for rel, text in files.tests.items())
        self.query_one("#test-code", CodeView).show(code or "# this implementation lists no test files\n")
        self.query_one("#mask-diff", DiffView).show(files.masks)
        if files.pages:
            self.query_one(PaperView).set_pages(files.pages)
        self.log_lines(files.problems)

    @on(Select.Changed, "#impl")
    def _impl_changed(self, event: Select.Changed) -> None:
        if self.edited is None or not isinstance(event.value, int) or event.value == self.impl_index:
            return
        target = event.value
        if not self.edits.changed(self.fields()):
            self._show(target)
            return

        def answered(discard: bool | None) -> None:
            select = self.query_one("#impl", Select)
            if discard:
                self._show(target)
            else:
                with select.prevent(Select.Changed):
                    select.value = self.impl_index

        self.ask(f"Discard the unsaved edits of implementation {self.impl_index}?", "Discard", answered)

    def unsaved_work(self) -> str | None:
        """What leaving now would lose (the app asks before quitting), or None."""
        return self.edits.unsaved(self.fields(), [w.group for w in self.work.running])

    # ---- save, check ------------------------------------------------------------------------------

    def action_save(self) -> None:
        """Write the edited implementation and paper fields into info.json (update_info: the core's rules)."""
        if self.edited is None:
            return
        form = self.query_one(MetadataForm)
        problems = form.check_fields()
        instruction, md = self.fields()
        if (refused := self.edits.refusal(md, problems)) is not None:
            self.notify(refused, title="Not saved", severity="error")
            return
        try:
            task = self.edits.save(instruction, md)
        except LmrError as exc:
            self.notify(str(exc), title="Not saved", severity="error")
            return
        self.edits.shown = self.fields()
        self.notify(f"saved {task.path / 'info.json'}")
        self.action_check()

    def action_check(self) -> None:
        """Show the task's problems in the log."""
        if self.edited is not None:
            self.log_lines(self.edits.problems())

    # ---- tests, validate, add an implementation, re-mask ------------------------------------------

    @on(TaskTests.Record)
    def _record(self, message: TaskTests.Record) -> None:
        if self.edited is not None:
            self.work.record(self.edited, self.impl_index, message.command)

    @on(TaskTests.Scaffold)
    def _scaffold(self) -> None:
        if self.edited is not None:
            self.work.scaffold(self.edited, self.impl_index)

    @on(TaskWork.Recorded)
    def _recorded(self, message: TaskWork.Recorded) -> None:
        self.query_one(TaskTests).show_cases(message.impl, message.cases)
        self.saved = True
        if self.edited is not None:
            self.work.read_files(self.edited, self.impl_index)

    def action_validate(self) -> None:
        """Validate the task (results go where `lmrbench validate` keeps them, shown in the task set). An unchanged
        implementation keeps the result stored for it (the task set's V made it, say); ctrl+g again runs anew."""
        if self.edited is not None:
            self.query_one(TabbedContent).active = "tab-validate"
            force, self._validated_here = self._validated_here, False
            self.work.validate(self.edited, force=force)

    _validated_here = False
    """The last validation shown was this screen's and nothing changed since: ctrl+g runs anew."""

    @on(TaskWork.Validated)
    def _validated(self, message: TaskWork.Validated) -> None:
        self.query_one(ValidationTable).show(message.results)
        self.saved = True
        self._validated_here = True
        self.notify("an implementation unchanged since its stored result keeps it; ctrl+g again runs it anew",
                    title="Validated")

    @on(Button.Pressed, "#add-impl")
    def action_add_implementation(self) -> None:
        """Add the function typed in the Impls tab as a new implementation."""
        if self.edited is None:
            return
        self.query_one(TabbedContent).active = "tab-impls"
        function = self.query_one("#add-function", Input).value
        instruction = self.query_one("#add-instruction", Input).value
        category = self.query_one(MetadataForm).values().category
        self.work.add_impl(self.edited, function, instruction, category, self.mask_style())

    @on(Button.Pressed, "#remask")
    def action_remask(self) -> None:
        """Re-mask the selected implementation's goal file in the chosen style."""
        if self.edited is not None:
            self.query_one(TabbedContent).active = "tab-impls"
            self.work.remask(self.edited, self.impl_index, self.mask_style())

    # ---- running work, leaving --------------------------------------------------------------------

    def action_stop_work(self) -> None:
        """Cancel the running work."""
        self.work.stop()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Every worker's end is shown by the app's one handler."""
        self.work.worker_changed(event)

    def action_close(self) -> None:
        """Back to the task set; asks first when edits or running work would be lost."""
        lost = self.unsaved_work()
        if lost is None:
            self.dismiss(self.edits.result())
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.work.stop()
                self.dismiss(self.edits.result())

        self.ask(f"Leave and lose {lost}?", "Leave", answered)
