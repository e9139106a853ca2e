"""Author a new task in one guided flow: source, function, mask, paper, metadata, tests, validate, save.

Nothing is written outside a draft folder in the task set (``.lmrbench-draft-*``) until Save; Cancel
removes it. A step's mark says whether its part is done (✔) or has a problem (!), not that it was visited.

The screen composes the panes and holds the key bindings; its handlers show what happened and hand the rest to
plain objects it owns: ``TaskChoices`` (the author's choices and the spec they make), ``DraftWork`` (the workers and
the draft they write), ``SaveRules`` and ``SaveFlow`` (what keeps the task from being validated or saved; Validate,
Save and Cancel) and ``StepTracker`` (the step shown and the steps' marks).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Button, Header, Input, Label, Select, TextArea
from textual.worker import Worker

from lmrbench.authoring.task.clone import ClonedRepo
from lmrbench.authoring.task.mask import MaskStyle
from lmrbench.authoring.task.task_spec import TaskSpec
from lmrbench.core.source.index import FunctionInfo
from lmrbench.core.taskset import Task, task_dirs
from lmrbench.tui.screens.new_task_choices import TaskChoices
from lmrbench.tui.screens.new_task_save import STALE, SaveFlow, SaveRules
from lmrbench.tui.screens.new_task_steps import FOCUS, STEP_WORK, STEPS, StepTracker
from lmrbench.tui.screens.new_task_work import DraftWork
from lmrbench.tui.screens.suggest import Suggested
from lmrbench.tui.widgets.code_view import CodeView
from lmrbench.tui.widgets.diff_view import DiffView
from lmrbench.tui.widgets.function_picker import FunctionPicker
from lmrbench.tui.widgets.keys_footer import KeysFooter
from lmrbench.tui.widgets.metadata_form import MetadataForm
from lmrbench.tui.widgets.new_task_panes import StepPanes
from lmrbench.tui.widgets.paper_view import PaperView
from lmrbench.tui.widgets.step_list import StepList
from lmrbench.tui.widgets.task_tests import TaskTests
from lmrbench.tui.widgets.validation_table import ValidationTable
from lmrbench.tui.widgets.work_panel import WorkPanel
from lmrbench.tui.workers import running_text

if TYPE_CHECKING:
    from lmrbench.authoring.task.draft import Draft
    from lmrbench.core.sandbox import SandboxKind

NARROW = 110
"""Below this many columns the step list narrows and the file tree hides, so the function search stays."""


class NewTaskScreen(Screen[str | None]):
    """The new-task flow; dismisses with the saved task's folder name, or None when cancelled."""

    HELP = (
        "Make a task step by step: source, function, mask, paper and instruction, metadata, tests, build and "
        "validate, save. Nothing is written into the task set before Save."
    )

    BINDINGS = [
        Binding("ctrl+n", "next_step", "Next", id="new.next", tooltip="Go to the next step"),
        Binding("ctrl+l", "focus_steps", "Steps", id="new.steps", tooltip="Move to the step list (any step)"),
        Binding("ctrl+g", "run_step", "Run step", id="new.run",
                tooltip="This step's work: clone, record, build & validate"),
        Binding("ctrl+s", "save", "Save", id="new.save", tooltip="Write the task into the task set"),
        Binding("ctrl+t", "stop_work", "Stop", id="new.stop", tooltip="Cancel the running work"),
        Binding("ctrl+f", "app.toggle_maximize", "Full size", id="new.maximize",
                tooltip="Show the focused panel (paper, instruction, code, log) on the whole screen; again: back"),
        Binding("escape", "cancel", "Cancel", id="new.cancel", tooltip="Leave without saving, removing the draft"),
    ]

    Cloned = DraftWork.Cloned
    """The message the flow starts from (the others: ``DraftWork``'s)."""

    def __init__(
        self, bench: Path, *, source: str = "", sandbox: SandboxKind | None = None, pick: Suggested | None = None
    ) -> None:
        super().__init__()
        self.bench = bench
        self.initial_source = source
        self.choices = TaskChoices(bench, pick)
        """The clone, the functions ticked, the paper: the author's choices and the spec they make."""
        self.work = DraftWork(self, bench, spec=self.spec, sandbox=sandbox)
        """The workers (clone, mask, paper, tests, validate, save) and the draft they write."""
        self.steps = StepTracker()
        """The step shown, the steps visited and flagged."""
        self.rules = SaveRules(self.choices, self)
        """What keeps the task from being validated or saved; which steps are done."""
        self.saving = SaveFlow(self, self.rules, self.work, self.steps)
        """Validate, Save and Cancel, with their questions."""

    # The state the controllers hold, read through the screen.

    @property
    def step(self) -> str:
        return self.steps.current

    @property
    def repo(self) -> ClonedRepo | None:
        return self.choices.repo

    @property
    def functions(self) -> list[FunctionInfo]:
        return self.choices.functions

    @property
    def selected(self) -> list[str]:
        return self.choices.selected

    @property
    def valid_key(self) -> tuple[object, ...] | None:
        return self.choices.valid_key

    @valid_key.setter
    def valid_key(self, key: tuple[object, ...] | None) -> None:
        self.choices.valid_key = key

    @property
    def draft(self) -> Draft | None:
        return self.work.draft

    @property
    def draft_task(self) -> Task | None:
        return self.work.draft_task

    @property
    def running_workers(self) -> list[Worker[object]]:
        return self.work.running

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="flow"):
            yield StepList(STEPS, id="steps")
            yield StepPanes(self.initial_source, taken={d.name for d in task_dirs(self.bench)}, id="panes")
        yield WorkPanel(id="work")
        yield KeysFooter()

    def on_mount(self) -> None:
        """Start on the source step."""
        self.set_class(self.app.size.width < NARROW, "-narrow")
        self.query_one("#source", Input).focus()
        if (pick := self.choices.pick) is not None:
            self.query_one("#source", Input).value = pick.repo
            self.query_one("#pdf", Input).value = pick.paper
            self.start_clone()

    def on_resize(self, event: events.Resize) -> None:
        """Narrow terminals (80 columns) get a narrower step list and no file tree."""
        self.set_class(event.size.width < NARROW, "-narrow")

    # ---- the form (what SaveRules reads) and the steps --------------------------------------------

    def instruction(self) -> str:
        """The instruction as typed."""
        return self.query_one("#instruction", TextArea).text

    def metadata_problems(self, *, show: bool) -> dict[str, str]:
        """Metadata field -> problem; ``show``: also under each field."""
        form = self.query_one(MetadataForm)
        return form.check_fields() if show else form.problems()

    def step_states(self) -> dict[str, str]:
        """Each step's state: "done" when its part is complete, "problem" when a visited step is not."""
        return self.steps.states(self.rules.complete(), self.rules.validation())

    def step_problems(self, *, tests: bool = False) -> list[tuple[str, str]]:
        """Every part still missing or wrong, as (step, what to do) (``SaveRules.step_problems``)."""
        return self.rules.step_problems(tests=tests)

    def _problems(self, *, tests: bool = False) -> list[str]:
        return self.rules.problems(tests=tests)

    def refresh_marks(self) -> None:
        """Redraw the step list's marks (and say on step 7 when its validation went stale)."""
        self.query_one(StepList).update_marks(self.step, self.step_states())
        if self.rules.validation() == "stale":
            self.show_validation(STALE)

    def go(self, step: str) -> None:
        """Show a step (any step can be revisited) and focus its first field."""
        if self.step == "metadata" and step != self.step and (problems := self.metadata_problems(show=True)):
            text = "; ".join(f"{k}: {v}" for k, v in problems.items())
            self.notify(f"kept as typed; fix before saving: {text}", title="Metadata", severity="warning")
        self.steps.enter(step)
        self.query_one(StepPanes).current = f"step-{step}"
        field = self.query_one(FOCUS[step])
        field.focus()
        # the pane was hidden until now: once it is laid out, scroll the field into view (a form scrolled down
        # earlier would otherwise leave the focused field off screen, taking keys the author cannot see)
        self.call_after_refresh(field.scroll_visible, animate=False, immediate=True)
        if step == "mask":
            self.remask()
        elif step == "metadata":
            self._prefill_metadata()
        elif step == "tests":
            self.query_one(TaskTests).set_task(self.draft_task)
        elif step == "save":
            self.query_one("#save-summary", Label).update(self.rules.summary())
        self.refresh_marks()

    @on(StepList.Chosen)
    def _step_chosen(self, message: StepList.Chosen) -> None:
        self.go(message.step)

    def action_next_step(self) -> None:
        """The next step."""
        self.go(self.steps.next())

    def action_focus_steps(self) -> None:
        """Focus the step list."""
        self.query_one(StepList).focus()

    def action_run_step(self) -> None:
        """Run the current step's work; when that work is running already, ask before starting it again."""
        group = STEP_WORK.get(self.step)
        if self.work.is_running(group):
            what = running_text([group or ""])
            self.saving.ask(f"The {what} is running: stop it and start again?", "Restart", self._run_step)
        else:
            self._run_step()

    def _run_step(self) -> None:
        run = {"source": self.start_clone, "paper": self.start_paper, "tests": self.query_one(TaskTests).action_record,
               "validate": self.saving.validate, "save": self.saving.save}.get(self.step)  # fmt: skip
        if run is not None:
            run()

    # ---- source, function, mask, paper -----------------------------------------------------------

    @on(Button.Pressed, "#clone")
    def start_clone(self) -> None:
        """Clone the source into the draft and index it."""
        source = self.query_one("#source", Input).value.strip()
        if not source:
            self.notify("type a git URL or a local folder first", severity="warning")
            return
        self.work.clone(source, self.query_one("#commit", Input).value.strip() or None)

    @on(DraftWork.Cloned)
    def _cloned(self, message: DraftWork.Cloned) -> None:
        lost = self.choices.take_clone(message.repo, message.functions)
        if lost:
            self.notify(f"{lost} selected functions are not in this clone", severity="warning")
        picker = self.query_one(FunctionPicker)
        picker.set_functions(self.functions, self.selected)
        self.query_one(MetadataForm).set_files(self.choices.files())
        self.query_one("#source-status", Label).update(self.choices.clone_summary(len(message.skipped)))
        panel = self.query_one(WorkPanel)
        for line in message.skipped[:50]:
            panel.post_message(WorkPanel.Logged(f"skipped {line}"))
        if (ref := self.choices.tick_pick()) is not None:
            picker.set_functions(self.functions, self.selected)
            picker.highlight(ref)
            self.start_paper()
        self._prefill_metadata()  # the task's name, from the repository until the paper's title is typed
        self.go("function")

    @on(FunctionPicker.Highlighted)
    def _show_code(self, message: FunctionPicker.Highlighted) -> None:
        fn = message.function
        try:
            source = self.choices.source_of(fn)
        except OSError as exc:
            self.notify(f"{fn.file}: {exc.strerror}", severity="error")
            return
        if source is not None:
            self.query_one(CodeView).show(source, fn.lineno, fn.end_lineno)

    @on(FunctionPicker.Toggled)
    def _toggled(self, message: FunctionPicker.Toggled) -> None:
        self.choices.tick(message.selected)
        self.refresh_marks()
        if (taken := self.rules.duplicate()) is not None:
            self.notify(taken, title="Already a task", severity="warning")

    def mask_style(self) -> MaskStyle:
        """The chosen mask style."""
        return MaskStyle(str(self.query_one("#mask-style", Select).value))

    @on(Select.Changed, "#mask-style")
    def remask(self) -> None:
        """Mask the selected functions (a LibCST transform per goal file, in a thread)."""
        self.query_one("#mask-functions", Label).update(self.choices.masking())
        if self.repo is not None and self.selected:
            self.work.mask(self.repo.path, list(self.selected), self.mask_style())

    @on(DraftWork.Masked)
    def _masked(self, message: DraftWork.Masked) -> None:
        self.query_one(DiffView).show(message.pairs)
        self.choices.masked = True
        self.refresh_marks()

    @on(Button.Pressed, "#load-pdf")
    @on(Input.Submitted, "#pdf")
    def start_paper(self) -> None:
        """Parse the PDF (PyMuPDF, in a thread)."""
        text = self.query_one("#pdf", Input).value.strip()
        if text:
            self.work.load_paper(Path(text).expanduser())

    @on(DraftWork.PaperLoaded)
    def _paper_loaded(self, message: DraftWork.PaperLoaded) -> None:
        view = self.query_one(PaperView)
        view.set_pages(message.pages)
        pick = self.choices.take_paper(message.pages)
        if pick is not None and pick.page:  # Suggest's passage: its page, its heading selected
            view.show_page(pick.page - 1)
            if pick.passage:
                view.find_next(pick.passage)

    def _prefill_metadata(self) -> None:
        form = self.query_one(MetadataForm)
        md = form.values()
        if self.choices.name_task(md):
            form.set_values(md)

    @on(Input.Changed, "#md-paper_name")
    def _title_changed(self) -> None:
        """The task's name follows the paper's title until the author edits the name."""
        self._prefill_metadata()

    def spec(self, bench: Path) -> TaskSpec:
        """The task spec the author has built so far (LmrError when a required part is missing)."""
        pdf = self.query_one("#pdf", Input).value.strip()
        md = self.query_one(MetadataForm).values()
        return self.choices.spec(bench, md, pdf=pdf, instruction=self.instruction(), style=self.mask_style())

    # ---- tests, validate, save, cancel -----------------------------------------------------------

    @on(DraftWork.DraftReady)
    def _draft_ready(self, message: DraftWork.DraftReady) -> None:
        self.work.draft_task = message.task
        self.query_one(TaskTests).set_task(message.task)
        self.refresh_marks()

    @on(TaskTests.Record)
    def _record(self, message: TaskTests.Record) -> None:
        self.work.record(message.command)

    @on(TaskTests.Scaffold)
    def _scaffold(self) -> None:
        self.work.scaffold()

    @on(DraftWork.Recorded)
    def _recorded(self, message: DraftWork.Recorded) -> None:
        self.query_one(TaskTests).show_cases(message.impl, message.cases)

    @on(Button.Pressed, "#validate")
    def start_validate(self) -> None:
        """Build the environment and validate the draft task; with parts missing, lists them all by step."""
        self.saving.validate()

    @on(DraftWork.Validated)
    def _validated(self, message: DraftWork.Validated) -> None:
        self.query_one(ValidationTable).show(message.results)
        ok = bool(message.results) and all(r.valid for r in message.results)
        self.choices.valid_key = message.key if ok else None
        self.show_validation("the task is valid" if ok else "the task is not valid yet")
        self.refresh_marks()

    def show_validation(self, text: str) -> None:
        """Say ``text`` on the validate step."""
        self.query_one("#validate-summary", Label).update(text)

    @on(Button.Pressed, "#save")
    def action_save(self) -> None:
        """Write the task into the task set and leave (asks first when its validation is missing or stale)."""
        self.saving.save()

    @on(DraftWork.Saved)
    async def _saved(self, message: DraftWork.Saved) -> None:
        await self.saving.saved(message.name)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Leave without saving (asks first when there is something to lose)."""
        self.saving.cancel()

    def action_stop_work(self) -> None:
        """Cancel every running worker of this screen."""
        self.work.stop()

    def unsaved_work(self) -> str | None:
        """What leaving now would lose (the app asks before quitting), or None."""
        return self.work.unsaved()

    async def on_unmount(self) -> None:
        """Leaving by any way (also quitting the app) removes the draft."""
        await self.work.discard()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Every worker's end is shown by the app's one handler; a save that has ended posts ``Saved``."""
        self.work.worker_changed(event)
