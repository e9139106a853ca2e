"""Author a new task in one guided flow: source, function, mask, paper, metadata, tests, validate, save.

Nothing is written outside a draft folder in the task set (``.lmrbench-draft-*``) until Save; Cancel
removes it. A step's mark says whether its part is done (✔) or has a problem (!), not that it was visited.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Button, Header, Input, Label, Select, TextArea

from lmrbench.authoring.task.clone import ClonedRepo
from lmrbench.authoring.task.draft import Draft, repo_folder_name
from lmrbench.authoring.task.mask import MaskStyle
from lmrbench.authoring.task.task_spec import FunctionRef, TaskSpec, next_task_name, refuse_duplicate
from lmrbench.core.source.index import FunctionInfo
from lmrbench.core.taskset import task_dirs
from lmrbench.errors import LmrError
from lmrbench.tui.dialogs.confirm import ConfirmDialog
from lmrbench.tui.screens.new_task_save import STEPS, NewTaskSave
from lmrbench.tui.screens.new_task_work import NewTaskWork
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
from lmrbench.tui.widgets.work_panel import WorkPanel
from lmrbench.tui.workers import running_text

if TYPE_CHECKING:
    from lmrbench.core.sandbox import SandboxKind

KEYS = [k for k, _ in STEPS]
FOCUS = {
    "source": "#source",
    "function": "#fp-search",
    "mask": "#mask-style",
    "paper": "#pdf",
    "metadata": "#md-paper_name",
    "tests": "#tests-cmd",
    "validate": "#validate",
    "save": "#save",
}
STEP_WORK = {"source": "clone", "paper": "paper", "tests": "tests", "validate": "validate", "save": "save"}
"""The worker group each step's ctrl+g starts."""
NARROW = 110
"""Below this many columns the step list narrows and the file tree hides, so the function search stays."""


class NewTaskScreen(NewTaskSave):
    """The new-task flow; dismisses with the saved task's folder name, or None when cancelled."""

    HELP = (
        "Make a task step by step: source, function, mask, paper and instruction, metadata, tests, build and "
        "validate, save. Nothing is written into the task set before Save."
    )

    BINDINGS = [
        Binding("ctrl+n", "next_step", "Next", id="new.next", tooltip="Go to the next step"),
        Binding("ctrl+l", "focus_steps", "Steps", id="new.steps", tooltip="Move to the step list (any step)"),
        Binding(
            "ctrl+g", "run_step", "Run step", id="new.run",
            tooltip="This step's work: clone, record, build & validate",
        ),
        Binding("ctrl+s", "save", "Save", id="new.save", tooltip="Write the task into the task set"),
        Binding("ctrl+t", "stop_work", "Stop", id="new.stop", tooltip="Cancel the running work"),
        Binding("ctrl+f", "app.toggle_maximize", "Full size", id="new.maximize",
                tooltip="Show the focused panel (paper, instruction, code, log) on the whole screen; again: back"),
        Binding(
            "escape", "cancel", "Cancel", id="new.cancel", tooltip="Leave without saving, removing the draft"
        ),
    ]

    def __init__(
        self, bench: Path, *, source: str = "", sandbox: SandboxKind | None = None, pick: Suggested | None = None
    ) -> None:
        super().__init__(bench, sandbox=sandbox)
        self.initial_source = source
        self.pick = pick
        """What Suggest chose: cloned at once, its function ticked, its paper loaded at the passage."""
        self.repo: ClonedRepo | None = None
        self.functions: list[FunctionInfo] = []
        self.selected: list[str] = []
        self.pages: dict[str, str] = {}
        self.step = "source"
        self.visited: set[str] = {"source"}
        self.masked = False
        self.valid_key: tuple[object, ...] | None = None
        self.flagged: set[str] = set()
        """Steps a refused validate or save named: marked ! until their part is done."""
        self._auto_name = ""

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="flow"):
            yield StepList(STEPS, id="steps")
            yield StepPanes(self.initial_source, taken={d.name for d in task_dirs(self.bench)}, id="panes")
        yield WorkPanel(id="work")
        yield KeysFooter()

    def on_mount(self) -> None:
        """Start on the source step."""
        self.panel = self.query_one(WorkPanel)
        self.set_class(self.app.size.width < NARROW, "-narrow")
        self.query_one("#source", Input).focus()
        if self.pick is not None:
            self.query_one("#source", Input).value = self.pick.repo
            self.query_one("#pdf", Input).value = self.pick.paper
            self.start_clone()

    def on_resize(self, event: events.Resize) -> None:
        """Narrow terminals (80 columns) get a narrower step list and no file tree."""
        self.set_class(event.size.width < NARROW, "-narrow")

    # ---- steps -----------------------------------------------------------------------------------

    def step_states(self) -> dict[str, str]:
        """Each step's state: "done" when its part is complete, "problem" when a visited step is not."""
        form = self.query_one(MetadataForm)
        instruction = self.query_one("#instruction", TextArea).text.strip()
        tests = self.draft_task is not None and all(
            (self.draft_task.repo_dir / t).is_file()
            for i in self.draft_task.info.implementations for t in i.unit_test_files
        )
        complete = {
            "source": self.repo is not None and bool(self.functions),  # no function to mask: not done
            "function": bool(self.selected),
            "mask": self.masked and bool(self.selected),
            "paper": bool(instruction),
            "metadata": not form.problems(),
            "tests": tests,
            "validate": self._validation() == "current",
            "save": False,
        }
        out = {}
        for key, ok in complete.items():
            if ok:
                out[key] = "done"
            elif key in self.flagged or (key in self.visited and key not in (self.step, "save")):
                out[key] = "problem"
        if self._validation() == "stale":
            out["validate"] = "problem"
        return out

    def refresh_marks(self) -> None:
        """Redraw the step list's marks (and say on step 7 when its validation went stale)."""
        self.query_one(StepList).update_marks(self.step, self.step_states())
        if self._validation() == "stale":
            self.query_one("#validate-summary", Label).update(
                "stale: the task, its instruction or metadata changed since it was validated; ctrl+g validates again"
            )

    def go(self, step: str) -> None:
        """Show a step (any step can be revisited) and focus its first field."""
        leaving = self.step
        if leaving == "metadata" and step != leaving:
            problems = self.query_one(MetadataForm).check_fields()
            if problems:
                text = "; ".join(f"{k}: {v}" for k, v in problems.items())
                self.notify(f"kept as typed; fix before saving: {text}", title="Metadata", severity="warning")
        self.step = step
        self.visited.add(step)
        self.query_one(StepPanes).current = f"step-{step}"
        self.query_one(FOCUS[step]).focus()
        if step == "mask":
            self.remask()
        elif step == "metadata":
            self._prefill_metadata()
        elif step == "tests":
            self.query_one(TaskTests).set_task(self.draft_task)
        elif step == "save":
            self._summarize()
        self.refresh_marks()

    @on(StepList.Chosen)
    def _step_chosen(self, message: StepList.Chosen) -> None:
        self.go(message.step)

    def action_next_step(self) -> None:
        """The next step."""
        self.go(KEYS[min(KEYS.index(self.step) + 1, len(KEYS) - 1)])

    def action_focus_steps(self) -> None:
        """Focus the step list."""
        self.query_one(StepList).focus()

    def action_run_step(self) -> None:
        """Run the current step's work; when that work is running already, ask before starting it again."""
        group = STEP_WORK.get(self.step)
        running = [w for w in self.running_workers if w.group == group]
        if running:

            def answered(yes: bool | None) -> None:
                if yes:
                    self._run_step()

            what = running_text([group or ""])
            self.app.push_screen(ConfirmDialog(f"The {what} is running: stop it and start again?", yes="Restart"),
                                 answered)  # fmt: skip
            return
        self._run_step()

    def _run_step(self) -> None:
        if self.step == "source":
            self.start_clone()
        elif self.step == "paper":
            self.start_paper()
        elif self.step == "tests":
            self.query_one(TaskTests).action_record()
        elif self.step == "validate":
            self.start_validate()
        elif self.step == "save":
            self.action_save()

    # ---- source, function, mask, paper -----------------------------------------------------------

    @on(Button.Pressed, "#clone")
    def start_clone(self) -> None:
        """Clone the source into the draft and index it."""
        source = self.query_one("#source", Input).value.strip()
        if not source:
            self.notify("type a git URL or a local folder first", severity="warning")
            return
        commit = self.query_one("#commit", Input).value.strip() or None
        if self.draft is None:
            self.draft = Draft.create(self.bench)
        self.clone(source, commit, self.draft)

    @on(NewTaskWork.Cloned)
    def _cloned(self, message: NewTaskWork.Cloned) -> None:
        kept = {key for key in self.selected if any(f"{f.file}::{f.qualname}" == key for f in message.functions)}
        if self.selected and len(kept) < len(self.selected):
            lost = len(self.selected) - len(kept)
            self.notify(f"{lost} selected functions are not in this clone", severity="warning")
        self.repo = message.repo
        self.functions = message.functions
        self.selected = [k for k in self.selected if k in kept]
        self.query_one(FunctionPicker).set_functions(self.functions, self.selected)
        files = sorted({f.file for f in self.functions})
        self.query_one(MetadataForm).set_files(files)
        commit = (message.repo.commit or "no commit")[:12]
        skipped = f"; {len(message.skipped)} files did not parse" if message.skipped else ""
        self.query_one("#source-status", Label).update(
            f"cloned {message.repo.url} at {commit}: {len(self.functions)} functions in {len(files)} files{skipped}"
        )
        for line in message.skipped[:50]:
            self.panel.post_message(WorkPanel.Logged(f"skipped {line}"))
        pick = self.pick
        refs = {f"{f.file}::{f.qualname}" for f in self.functions}
        if pick is not None and not self.selected and pick.ref in refs:
            self.selected = [pick.ref]
            picker = self.query_one(FunctionPicker)
            picker.set_functions(self.functions, self.selected)
            picker.highlight(pick.ref)
            self.start_paper()
        self._prefill_metadata()  # the task's name, from the repository until the paper's title is typed
        self.go("function")

    @on(FunctionPicker.Highlighted)
    def _show_code(self, message: FunctionPicker.Highlighted) -> None:
        if self.repo is None:
            return
        fn = message.function
        try:
            source = (self.repo.path / fn.file).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            self.notify(f"{fn.file}: {exc.strerror}", severity="error")
            return
        self.query_one(CodeView).show(source, fn.lineno, fn.end_lineno)

    @on(FunctionPicker.Toggled)
    def _toggled(self, message: FunctionPicker.Toggled) -> None:
        self.selected = list(message.selected)
        self.masked = False
        self.refresh_marks()
        if self.repo is not None and self.selected:
            try:
                refuse_duplicate(self.spec(self.bench), self.bench / "-", hint="Save refuses it")
            except LmrError as exc:
                self.notify(str(exc), title="Already a task", severity="warning")

    def mask_style(self) -> MaskStyle:
        """The chosen mask style."""
        return MaskStyle(str(self.query_one("#mask-style", Select).value))

    @on(Select.Changed, "#mask-style")
    def remask(self) -> None:
        """Mask the selected functions (a LibCST transform per goal file, in a thread)."""
        self.query_one("#mask-functions", Label).update(
            "masking: " + (", ".join(self.selected) or "none selected yet (step 2: enter on a function)")
        )
        if self.repo is not None and self.selected:
            self.mask(self.repo.path, list(self.selected), self.mask_style())

    @on(NewTaskWork.Masked)
    def _masked(self, message: NewTaskWork.Masked) -> None:
        self.query_one(DiffView).show(message.pairs)
        self.masked = True
        self.refresh_marks()

    @on(Button.Pressed, "#load-pdf")
    @on(Input.Submitted, "#pdf")
    def start_paper(self) -> None:
        """Parse the PDF (PyMuPDF, in a thread)."""
        text = self.query_one("#pdf", Input).value.strip()
        if text:
            self.load_paper(Path(text).expanduser())

    @on(NewTaskWork.PaperLoaded)
    def _paper_loaded(self, message: NewTaskWork.PaperLoaded) -> None:
        self.pages = message.pages
        view = self.query_one(PaperView)
        view.set_pages(message.pages)
        pick, self.pick = self.pick, None
        if pick is not None and pick.page:  # Suggest's passage: its page, its heading selected
            view.show_page(pick.page - 1)
            if pick.passage:
                view.find_next(pick.passage)

    # ---- metadata and the spec -------------------------------------------------------------------

    def _prefill_metadata(self) -> None:
        form = self.query_one(MetadataForm)
        md = form.values()
        if not md.name or md.name == self._auto_name:
            title = md.paper_name or (repo_folder_name(self.repo.url) if self.repo else "Task")
            md.name = self._auto_name = next_task_name(self.bench, title)
            form.set_values(md)

    @on(Input.Changed, "#md-paper_name")
    def _title_changed(self) -> None:
        """The task's name follows the paper's title until the author edits the name."""
        self._prefill_metadata()

    def spec(self, bench: Path) -> TaskSpec:
        """The task spec the author has built so far (LmrError when a required part is missing)."""
        if self.repo is None:
            raise LmrError("clone a repository first (step 1)")
        if not self.selected:
            raise LmrError("select at least one function (step 2)")
        md = self.query_one(MetadataForm).values()
        pdf = self.query_one("#pdf", Input).value.strip()
        return TaskSpec(
            source=str(self.repo.path),
            functions=[FunctionRef.parse(k) for k in self.selected],
            instructions=[self.query_one("#instruction", TextArea).text],
            bench=bench,
            category=md.category,
            paper=Path(pdf).expanduser() if pdf else None,
            paper_url=md.paper_url,
            paper_name=md.paper_name,
            year=md.year,
            commit=None,
            name=md.name or None,
            repo_folder_name=repo_folder_name(self.repo.url),
            retrieval_context=md.retrieval_context,
            mask_style=self.mask_style(),
            repo_url=self.repo.url,
        )
