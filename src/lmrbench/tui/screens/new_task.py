"""Author a new task in one guided flow: source, function, mask, paper, metadata, tests, validate, save.

Nothing is written outside a draft folder in the task set (``.lmrbench-draft-*``) until Save; Cancel
removes it.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Button, ContentSwitcher, Footer, Header, Input, Label, Select, TextArea
from textual.worker import Worker, WorkerState, get_current_worker

from lmrbench.authoring.clone import ClonedRepo, clone_repo
from lmrbench.authoring.index import FunctionInfo, index_repo_report
from lmrbench.authoring.mask import MaskStyle, mask_source
from lmrbench.authoring.paper import paper_pages
from lmrbench.authoring.task_new import (
    FunctionRef,
    TaskSpec,
    create_task,
    next_task_name,
    publish_task,
    remove_task,
)
from lmrbench.core.taskset import Task, load_task, task_dirs
from lmrbench.errors import LmrError
from lmrbench.tui.dialogs.confirm import ConfirmDialog
from lmrbench.tui.widgets.code_view import CodeView
from lmrbench.tui.widgets.diff_view import DiffView
from lmrbench.tui.widgets.function_picker import FunctionPicker
from lmrbench.tui.widgets.metadata_form import Metadata, MetadataForm
from lmrbench.tui.widgets.paper_view import PaperView
from lmrbench.tui.widgets.step_list import StepList
from lmrbench.tui.widgets.task_tests import TaskTests
from lmrbench.tui.widgets.validation_table import ValidationTable
from lmrbench.tui.widgets.work_panel import WorkPanel, error_text

if TYPE_CHECKING:  # the sandbox, recording and validation stack loads in the workers that use it
    from lmrbench.core.sandbox import RunnerKind
    from lmrbench.schemas.recording import RecordedCase
    from lmrbench.schemas.validation import ImplValidation

STEPS = [
    ("source", "Source"),
    ("function", "Function"),
    ("mask", "Mask"),
    ("paper", "Paper & instruction"),
    ("metadata", "Metadata"),
    ("tests", "Tests"),
    ("validate", "Build & validate"),
    ("save", "Save"),
]
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
DRAFT_PREFIX = ".lmrbench-draft-"



class NewTaskScreen(Screen[str | None]):
    """The new-task flow; dismisses with the saved task's folder name, or None when cancelled."""

    BINDINGS = [
        Binding("ctrl+n", "next_step", "Next", id="new.next", tooltip="Go to the next step"),
        Binding("ctrl+l", "focus_steps", "Steps", id="new.steps", tooltip="Move to the step list (any step)"),
        Binding(
            "ctrl+g", "run_step", "Run step", id="new.run",
            tooltip="This step's work: clone, record, build & validate",
        ),
        Binding("ctrl+s", "save", "Save", id="new.save", tooltip="Write the task into the task set"),
        Binding("ctrl+t", "stop_work", "Stop", id="new.stop", tooltip="Cancel the running work"),
        Binding(
            "escape", "cancel", "Cancel", id="new.cancel", tooltip="Leave without saving, removing the draft"
        ),
    ]

    @dataclass
    class Cloned(Message):
        """The repository is cloned into the draft and indexed."""

        repo: ClonedRepo
        functions: list[FunctionInfo]
        skipped: list[str]

    @dataclass
    class Masked(Message):
        """The masked goal files (file, before, after)."""

        pairs: list[tuple[str, str, str]]

    @dataclass
    class PaperLoaded(Message):
        """The PDF's text per page."""

        pages: dict[str, str]

    @dataclass
    class DraftReady(Message):
        """The task exists in the draft folder (for recording and validation)."""

        task: Task

    @dataclass
    class Recorded(Message):
        """The cases recorded for one implementation."""

        impl: int
        cases: list[RecordedCase]

    @dataclass
    class Validated(Message):
        """The draft task's validation results."""

        results: list[ImplValidation]

    @dataclass
    class Saved(Message):
        """The task is in the task set."""

        name: str

    def __init__(self, bench: Path, *, source: str = "", sandbox: RunnerKind | None = None) -> None:
        super().__init__()
        self.bench = bench
        self.sandbox_kind = sandbox
        self.initial_source = source
        self.draft: Path | None = None
        self.repo: ClonedRepo | None = None
        self.functions: list[FunctionInfo] = []
        self.selected: list[str] = []
        self.pages: dict[str, str] = {}
        self.draft_task: Task | None = None
        self.draft_key: tuple | None = None
        self.step = "source"
        self.done: set[str] = set()
        self._auto_name = ""

    # ---- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="flow"):
            yield StepList(STEPS, id="steps")
            with ContentSwitcher(initial="step-source", id="panes"):
                with Vertical(id="step-source"):
                    yield Label("Repository: a git URL or a local folder", classes="pane-title")
                    yield Input(self.initial_source, placeholder="https://… or /path/to/repo", id="source")
                    yield Input(placeholder="commit (default: HEAD)", id="commit")
                    with Horizontal(classes="row"):
                        yield Button("Clone and index (ctrl+g)", id="clone", variant="primary")
                    yield Label("", id="source-status", classes="hint")
                with Horizontal(id="step-function"):
                    yield FunctionPicker(id="picker")
                    yield CodeView(id="code")
                with Vertical(id="step-mask"):
                    with Horizontal(classes="row"):
                        yield Label("Mask style ", classes="pane-title")
                        yield Select(
                            [(s.value, s.value) for s in MaskStyle], value=MaskStyle.TODO_RAISE.value,
                            allow_blank=False, id="mask-style",
                        )
                    yield Label("", id="mask-functions", classes="hint")
                    yield DiffView(id="diff")
                with Vertical(id="step-paper"):
                    with Horizontal(classes="row"):
                        yield Input(placeholder="paper PDF path (optional)", id="pdf")
                        yield Button("Load", id="load-pdf")
                    with Horizontal():
                        yield PaperView(id="paper")
                        with Vertical(id="instruction-pane"):
                            yield Label("Instruction (shown to the model)", classes="pane-title")
                            yield TextArea("", id="instruction", soft_wrap=True)
                with Vertical(id="step-metadata"):
                    yield MetadataForm(id="metadata", taken={d.name for d in task_dirs(self.bench)})
                with Vertical(id="step-tests"):
                    yield TaskTests(id="tests")
                with Vertical(id="step-validate"):
                    yield Label("Build the task's environment, then validate it", classes="pane-title")
                    with Horizontal(classes="row"):
                        yield Button("Build & validate (ctrl+g)", id="validate", variant="primary")
                    yield Label("", id="validate-summary", classes="hint")
                    yield ValidationTable(id="validation")
                with Vertical(id="step-save"):
                    yield Label("Save", classes="pane-title")
                    yield Label("", id="save-summary", classes="hint")
                    with Horizontal(classes="row"):
                        yield Button("Save (ctrl+s)", id="save", variant="success")
                        yield Button("Cancel (esc)", id="cancel", variant="error")
        yield WorkPanel(id="work")
        yield Footer()

    def on_mount(self) -> None:
        """Start on the source step."""
        self.panel = self.query_one(WorkPanel)
        self.query_one("#source", Input).focus()

    # ---- steps -----------------------------------------------------------------------------------

    def go(self, step: str) -> None:
        """Show a step (any step can be revisited) and focus its first field."""
        self.step = step
        self.query_one(ContentSwitcher).current = f"step-{step}"
        self.query_one(StepList).update_marks(step, self.done)
        self.query_one(FOCUS[step]).focus()
        if step == "mask":
            self.remask()
        elif step == "metadata":
            self._prefill_metadata()
        elif step == "tests":
            self.query_one(TaskTests).set_task(self.draft_task)
        elif step == "save":
            self._summarize()

    @on(StepList.Chosen)
    def _step_chosen(self, message: StepList.Chosen) -> None:
        self.go(message.step)

    def action_next_step(self) -> None:
        """The next step."""
        self.done.add(self.step)
        self.go(KEYS[min(KEYS.index(self.step) + 1, len(KEYS) - 1)])

    def action_focus_steps(self) -> None:
        """Focus the step list."""
        self.query_one(StepList).focus()

    def action_run_step(self) -> None:
        """Run the current step's work."""
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

    @on(Button.Pressed, "#clone")
    def start_clone(self) -> None:
        """Clone the source into the draft and index it."""
        source = self.query_one("#source", Input).value.strip()
        if not source:
            self.notify("type a git URL or a local folder first", severity="warning")
            return
        commit = self.query_one("#commit", Input).value.strip() or None
        if self.draft is None:
            self.draft = Path(tempfile.mkdtemp(prefix=DRAFT_PREFIX, dir=self.bench))
        self.clone(source, commit, self.draft)

    @work(thread=True, exclusive=True, exit_on_error=False, group="clone")
    def clone(self, source: str, commit: str | None, draft: Path) -> None:
        """Clone and index (git and a whole-repo parse: in a thread)."""
        cancel = get_current_worker().cancelled_event
        progress = self.panel.progress()
        dest = draft / "source"
        remove_task(dest)
        repo = clone_repo(source, dest, commit, progress=progress, cancel=cancel)
        report = index_repo_report(repo.path, progress=progress, cancel=cancel)
        self.post_message(self.Cloned(repo, report.functions, [str(p) for p in report.problems]))

    @on(Cloned)
    def _cloned(self, message: Cloned) -> None:
        self.repo = message.repo
        self.functions = message.functions
        self.selected = []
        self.query_one(FunctionPicker).set_functions(self.functions)
        files = sorted({f.file for f in self.functions})
        self.query_one(MetadataForm).set_files(files)
        commit = (message.repo.commit or "no commit")[:12]
        skipped = f"; {len(message.skipped)} files did not parse" if message.skipped else ""
        self.query_one("#source-status", Label).update(
            f"cloned {message.repo.url} at {commit}: {len(self.functions)} functions"
            f" in {len(files)} files{skipped}"
        )
        for line in message.skipped[:50]:
            self.panel.post_message(WorkPanel.Logged(f"skipped {line}"))
        self.done.add("source")
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
        if self.selected:
            self.done.add("function")
        else:
            self.done.discard("function")
        self.query_one(StepList).update_marks(self.step, self.done)

    # ---- mask ------------------------------------------------------------------------------------

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

    @work(thread=True, exclusive=True, exit_on_error=False, group="mask")
    def mask(self, root: Path, selected: list[str], style: MaskStyle) -> None:
        """Compute the masked files."""
        by_file: dict[str, list[str]] = {}
        for key in selected:
            ref = FunctionRef.parse(key)
            by_file.setdefault(ref.file, []).append(ref.qualname)
        pairs = []
        for file, names in by_file.items():
            before = (root / file).read_text(encoding="utf-8")
            pairs.append((file, before, mask_source(before, names, style, file=file)))
        self.post_message(self.Masked(pairs))

    @on(Masked)
    def _masked(self, message: Masked) -> None:
        self.query_one(DiffView).show(message.pairs)

    # ---- paper -----------------------------------------------------------------------------------

    @on(Button.Pressed, "#load-pdf")
    @on(Input.Submitted, "#pdf")
    def start_paper(self) -> None:
        """Parse the PDF (PyMuPDF, in a thread)."""
        text = self.query_one("#pdf", Input).value.strip()
        if text:
            self.load_paper(Path(text).expanduser())

    @work(thread=True, exclusive=True, exit_on_error=False, group="paper")
    def load_paper(self, pdf: Path) -> None:
        """Read the paper's text."""
        self.panel.progress().start(f"reading {pdf.name}", None)
        self.post_message(self.PaperLoaded(paper_pages(pdf)))

    @on(PaperLoaded)
    def _paper_loaded(self, message: PaperLoaded) -> None:
        self.pages = message.pages
        self.query_one(PaperView).set_pages(message.pages)
        self.panel.done(f"paper: {len(message.pages)} pages")

    # ---- metadata and the spec -------------------------------------------------------------------

    def _prefill_metadata(self) -> None:
        form = self.query_one(MetadataForm)
        md = form.values()
        if not md.name or md.name == self._auto_name:
            title = md.paper_name or (Path(self.repo.url.rstrip("/")).name if self.repo else "Task")
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
        md: Metadata = self.query_one(MetadataForm).values()
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
            repo_folder_name=Path(self.repo.url.rstrip("/")).name.removesuffix(".git") or "repo",
            retrieval_context=md.retrieval_context,
            mask_style=self.mask_style(),
            repo_url=self.repo.url,
        )

    def _problems(self) -> list[str]:
        out = [f"{k}: {v}" for k, v in self.query_one(MetadataForm).check_fields().items()]
        if not self.query_one("#instruction", TextArea).text.strip():
            out.append("instruction: empty (step 4)")
        try:
            self.spec(self.bench)
        except LmrError as exc:
            out.insert(0, str(exc))
        return out

    def _summarize(self) -> None:
        problems = self._problems()
        lines = [f"task set: {self.bench}"]
        if self.selected:
            lines.append("functions: " + ", ".join(self.selected))
        lines += [f"• {p}" for p in problems] or ["ready to save"]
        self.query_one("#save-summary", Label).update("\n".join(lines))

    # ---- the draft task (for tests and validation) ---------------------------------------------------

    def draft_spec(self) -> TaskSpec | None:
        """The spec to (re)create the draft task from, or None when the draft task is up to date."""
        if self.draft is None:
            raise LmrError("clone a repository first (step 1)")
        spec = self.spec(self.draft / "tasks")
        if not self.query_one("#instruction", TextArea).text.strip():
            spec.instructions = ["(instruction to be written)"]
        key = (spec.source, tuple(self.selected), spec.mask_style, spec.name)
        if self.draft_task is not None and key == self.draft_key:
            return None
        if self.draft_task is not None:
            text = "the functions, mask or name changed: the draft task is made again; record its tests again"
            self.notify(text, severity="warning")
        self.draft_key = key
        return spec

    def _ensure_task(self, spec: TaskSpec | None, cancel: threading.Event) -> Task:
        """In a worker: create (or re-create) the draft task when the spec changed."""
        if spec is not None:
            task = create_task(spec, force=True, progress=self.panel.progress(), cancel=cancel)
            self.post_message(self.DraftReady(task))
            return task
        assert self.draft_task is not None
        return self.draft_task

    @on(DraftReady)
    def _draft_ready(self, message: DraftReady) -> None:
        self.draft_task = message.task
        self.query_one(TaskTests).set_task(message.task)

    @on(TaskTests.Record)
    def _record(self, message: TaskTests.Record) -> None:
        try:
            self.record(self.draft_spec(), message.command)
        except LmrError as exc:
            self.notify(str(exc), severity="error")

    @on(TaskTests.Scaffold)
    def _scaffold(self) -> None:
        try:
            self.scaffold(self.draft_spec())
        except LmrError as exc:
            self.notify(str(exc), severity="error")

    @work(thread=True, exclusive=True, exit_on_error=False, group="tests")
    def record(self, spec: TaskSpec | None, command: str) -> None:
        """Record every implementation's calls while the command runs on the golden code (live log)."""
        from lmrbench.authoring.record import record_tests
        from lmrbench.benchmark.sandbox.choose import get_sandbox

        cancel = get_current_worker().cancelled_event
        progress = self.panel.progress()
        task = self._ensure_task(spec, cancel)
        sandbox = get_sandbox(self.sandbox_kind, progress=progress)
        for impl in task.info.implementations:
            result = record_tests(task, impl.index, command, sandbox=sandbox, force=True, progress=progress,
                                  cancel=cancel)
            self.post_message(self.Recorded(impl.index, result.cases))
        self.post_message(self.DraftReady(load_task(task.path)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="tests")
    def scaffold(self, spec: TaskSpec | None) -> None:
        """Write a scaffold test per implementation."""
        from lmrbench.authoring.record import scaffold_tests

        cancel = get_current_worker().cancelled_event
        task = self._ensure_task(spec, cancel)
        for impl in task.info.implementations:
            path = scaffold_tests(task, impl.index, force=True)
            rel = path.relative_to(task.path)
            self.panel.progress().log(f"scaffold written: {rel} (fill in the LMRBENCH-TODO values)")
        self.post_message(self.DraftReady(load_task(task.path)))

    @on(Recorded)
    def _recorded(self, message: Recorded) -> None:
        self.query_one(TaskTests).show_cases(message.impl, message.cases)
        if message.cases:
            self.done.add("tests")

    @on(Button.Pressed, "#validate")
    def start_validate(self) -> None:
        """Build the environment and validate the draft task."""
        try:
            spec = self.draft_spec()
        except LmrError as exc:
            self.notify(str(exc), severity="error")
            return
        assert self.draft is not None
        self.validate(spec, self.draft / "validate")

    @work(thread=True, exclusive=True, exit_on_error=False, group="validate")
    def validate(self, spec: TaskSpec | None, run_dir: Path) -> None:
        """Build the task's image (live log) and run golden, masked and mutants."""
        from lmrbench.benchmark.validate import ValidateOptions, load_result, result_path, validate_taskset

        cancel = get_current_worker().cancelled_event
        task = self._ensure_task(spec, cancel)
        validate_taskset(
            task.path.parent, only=[task.name], runner=self.sandbox_kind, run_dir=run_dir,
            options=ValidateOptions(force=True), progress=self.panel.progress(), cancel=cancel,
        )
        results = [load_result(result_path(run_dir, task.name, i.index)) for i in task.info.implementations]
        self.post_message(self.Validated([r for r in results if r is not None]))

    @on(Validated)
    def _validated(self, message: Validated) -> None:
        self.query_one(ValidationTable).show(message.results)
        ok = bool(message.results) and all(r.valid for r in message.results)
        verdict = "the task is valid" if ok else "the task is not valid yet"
        self.query_one("#validate-summary", Label).update(verdict)
        if ok:
            self.done.add("validate")
            self.query_one(StepList).update_marks(self.step, self.done)

    # ---- save and cancel -------------------------------------------------------------------------

    @on(Button.Pressed, "#save")
    def action_save(self) -> None:
        """Write the task into the task set (create_task), then leave."""
        problems = self._problems()
        if problems:
            self.go("save")
            self.notify("; ".join(problems[:3]), title="Cannot save yet", severity="error")
            return
        final = self.spec(self.bench)
        if self.draft_task is None:
            self.save(final, None)
        else:
            self.save(final, self.draft_spec())

    @work(thread=True, exclusive=True, exit_on_error=False, group="save")
    def save(self, final: TaskSpec, draft: TaskSpec | None) -> None:
        """Without a draft task: create_task into the task set. With one (tests, validation): finish it there
        (instruction, metadata, paper) and move it, with its validation results, into the task set."""
        cancel = get_current_worker().cancelled_event
        if self.draft_task is None:
            task = create_task(final, progress=self.panel.progress(), cancel=cancel)
        else:
            assert self.draft is not None
            task = publish_task(self._ensure_task(draft, cancel), final, self.draft / "validate")
        self.post_message(self.Saved(task.name))

    @on(Saved)
    async def _saved(self, message: Saved) -> None:
        await self._discard_draft()
        self.dismiss(message.name)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Leave without saving (asks first when there is something to lose)."""
        if self.draft is None:
            self.dismiss(None)
            return

        async def answered(yes: bool | None) -> None:
            if yes:
                await self._discard_draft()
                self.dismiss(None)

        self.app.push_screen(ConfirmDialog("Discard this draft task?", yes="Discard"), answered)

    def action_stop_work(self) -> None:
        """Cancel every running worker of this screen."""
        for worker in self.running_workers:
            worker.cancel()

    @property
    def running_workers(self) -> list[Worker]:
        """This screen's running workers."""
        return [w for w in self.app.workers if w.node is self and w.is_running]

    async def _discard_draft(self) -> None:
        """Stop the workers, wait until they have stopped writing, then remove the draft folder."""
        for worker in self.running_workers:
            worker.cancel()
            with contextlib.suppress(Exception):
                await worker.wait()
        if self.draft is not None:
            remove_task(self.draft)
            self.draft = None

    async def on_unmount(self) -> None:
        """Leaving by any way (also quitting the app) removes the draft."""
        await self._discard_draft()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Every worker error of this screen is shown here, in the app."""
        if event.state == WorkerState.ERROR:
            text = error_text(event.worker.error)
            self.panel.error(text)
            self.notify(text, title=f"{event.worker.name} failed", severity="error")
        elif event.state == WorkerState.CANCELLED:
            self.panel.done(f"{event.worker.name}: cancelled")
        elif event.state == WorkerState.SUCCESS:
            self.panel.done(f"{event.worker.name}: done")
