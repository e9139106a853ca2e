"""The new-task flow's work: each worker calls one core function in a thread and posts its result.

Nothing is written outside the draft folder (authoring/task/draft.py) until Save.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Button, Label, TextArea
from textual.worker import Worker, WorkerState, get_current_worker

from lmrbench.authoring.task.clone import ClonedRepo, clone_repo
from lmrbench.authoring.task.draft import Draft, validated_key
from lmrbench.authoring.task.mask import MaskStyle, mask_source
from lmrbench.authoring.task.paper import paper_pages
from lmrbench.authoring.task.task_new import create_task, publish_task, remove_task, rename_task, write_fields
from lmrbench.authoring.task.task_spec import FunctionRef, TaskSpec
from lmrbench.core.source.index import FunctionInfo, index_repo_report
from lmrbench.core.taskset import Task, load_task
from lmrbench.errors import LmrError
from lmrbench.tui.widgets.task_tests import TaskTests
from lmrbench.tui.widgets.validation_table import ValidationTable
from lmrbench.tui.widgets.work_panel import WorkPanel
from lmrbench.tui.workers import counted, report_worker, threads_ended

if TYPE_CHECKING:  # the sandbox, recording and validation stack loads in the workers that use it
    from lmrbench.core.sandbox import SandboxKind
    from lmrbench.schemas.recording import RecordedCase
    from lmrbench.schemas.validation import ImplValidation


class NewTaskWork(Screen[str | None]):
    """The workers, the messages they post, and the draft task they record and validate."""

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
        key: tuple[object, ...] | None
        """The draft task they are about."""

    @dataclass
    class Saved(Message):
        """The task is in the task set."""

        name: str

    def __init__(self, bench: Path, *, sandbox: SandboxKind | None = None) -> None:
        super().__init__()
        self.bench = bench
        self.sandbox_kind = sandbox
        self.draft: Draft | None = None
        self.draft_task: Task | None = None
        self.panel: WorkPanel

    def spec(self, bench: Path) -> TaskSpec:
        """The task spec the author has built so far (the flow's screen defines it)."""
        raise NotImplementedError

    def refresh_marks(self) -> None:
        """Redraw the step marks (the flow's screen defines it)."""

    # ---- the draft task (tests and validation) ---------------------------------------------------

    def draft_spec(self) -> TaskSpec | None:
        """The spec to (re)create the draft task from, or None when the draft task is up to date."""
        if self.draft is None:
            raise LmrError("clone a repository first (step 1)")
        spec = self.spec(self.draft.tasks_dir)
        if not self.query_one("#instruction", TextArea).text.strip():
            spec.instructions = ["(instruction to be written)"]
        made = self.draft.key
        need = self.draft.needs_task(spec)
        if self.draft_task is None:
            return spec
        if need == "rename" and spec.name:  # a folder rename: the recorded tests stay
            try:
                self.draft_task = rename_task(self.draft_task, spec.name)
            except LmrError:
                self.draft.key = made
                raise
            self.query_one(TaskTests).set_task(self.draft_task)
            return None
        if not need:
            return None
        text = "the functions or the mask changed: the draft task is made again; record its tests again"
        self.notify(text, severity="warning")
        return spec

    @on(DraftReady)
    def _draft_ready(self, message: DraftReady) -> None:
        self.draft_task = message.task
        self.query_one(TaskTests).set_task(message.task)
        self.refresh_marks()

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

    @on(Recorded)
    def _recorded(self, message: Recorded) -> None:
        self.query_one(TaskTests).show_cases(message.impl, message.cases)

    def refuse(self, what: str, problems: list[tuple[str, str]]) -> bool:
        """Mark the steps with problems and list them (the flow's save part defines it); True when refused."""
        raise NotImplementedError

    def step_problems(self, *, tests: bool = False) -> list[tuple[str, str]]:
        """Every part still missing, by step (the flow's save part defines it)."""
        raise NotImplementedError

    @on(Button.Pressed, "#validate")
    def start_validate(self) -> None:
        """Build the environment and validate the draft task; with parts missing, lists them all by step."""
        if self.refuse("validate", self.step_problems(tests=True)):
            return
        self.query_one("#validate-summary", Label).update("validating: the build and the runs are in the log below")
        try:
            spec = self.draft_spec()
            final = self.spec(self.bench)
        except LmrError as exc:
            self.notify(str(exc), severity="error")
            return
        assert self.draft is not None
        self.validate(spec, final, self.draft)

    @on(Validated)
    def _validated(self, message: Validated) -> None:
        self.query_one(ValidationTable).show(message.results)
        ok = bool(message.results) and all(r.valid for r in message.results)
        self.valid_key = message.key if ok else None
        verdict = "the task is valid" if ok else "the task is not valid yet"
        self.query_one("#validate-summary", Label).update(verdict)
        self.refresh_marks()

    @work(thread=True, exclusive=True, exit_on_error=False, group="clone")
    @counted
    def clone(self, source: str, commit: str | None, draft: Draft) -> None:
        """Clone and index (git and a whole-repo parse: in a thread)."""
        cancel = get_current_worker().cancelled_event
        progress = self.panel.progress()
        remove_task(draft.source_dir)
        repo = clone_repo(source, draft.source_dir, commit, progress=progress, cancel=cancel)
        report = index_repo_report(repo.path, progress=progress, cancel=cancel)
        self.post_message(self.Cloned(repo, report.functions, [str(p) for p in report.problems]))

    @work(thread=True, exclusive=True, exit_on_error=False, group="mask")
    @counted
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

    @work(thread=True, exclusive=True, exit_on_error=False, group="paper")
    @counted
    def load_paper(self, pdf: Path) -> None:
        """Read the paper's text."""
        self.panel.progress().start(f"reading {pdf.name}", None)
        self.post_message(self.PaperLoaded(paper_pages(pdf)))

    def _ensure_task(self, spec: TaskSpec | None, cancel: threading.Event) -> Task:
        """In a worker: create (or re-create) the draft task when the spec changed."""
        if spec is not None:
            task = create_task(spec, force=True, progress=self.panel.progress(), cancel=cancel)
            self.post_message(self.DraftReady(task))
            return task
        assert self.draft_task is not None
        return self.draft_task

    @work(thread=True, exclusive=True, exit_on_error=False, group="tests")
    @counted
    def record(self, spec: TaskSpec | None, command: str) -> None:
        """Record every implementation's calls while the command runs on the golden code (live log)."""
        from lmrbench.authoring.record.record import record_tests
        from lmrbench.benchmark.execution.sandboxes import get_sandbox

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
    @counted
    def scaffold(self, spec: TaskSpec | None) -> None:
        """Write a scaffold test per implementation."""
        from lmrbench.authoring.record.recorded_tests import scaffold_tests

        cancel = get_current_worker().cancelled_event
        task = self._ensure_task(spec, cancel)
        for impl in task.info.implementations:
            path = scaffold_tests(task, impl.index, force=True)
            rel = path.relative_to(task.path)
            self.panel.progress().log(f"scaffold written: {rel} (fill in the LMRBENCH-TODO values)")
        self.post_message(self.DraftReady(load_task(task.path)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="validate")
    @counted
    def validate(self, spec: TaskSpec | None, final: TaskSpec, draft: Draft) -> None:
        """Write the instruction and metadata into the draft task, build its image (live log) and run golden, masked
        and mutants; the result holds for ``final`` as it is now (``validated_key``)."""
        from lmrbench.benchmark.validation.plan import ValidateOptions
        from lmrbench.benchmark.validation.task import validate_task

        cancel = get_current_worker().cancelled_event
        key = validated_key(final)
        task = write_fields(self._ensure_task(spec, cancel), final)
        results = validate_task(
            task.path, sandbox=self.sandbox_kind, run_dir=draft.results_dir, options=ValidateOptions(force=True),
            progress=self.panel.progress(), cancel=cancel,
        )
        self.post_message(self.Validated(results, key))

    @work(thread=True, exclusive=True, exit_on_error=False, group="save")
    @counted
    def save(self, final: TaskSpec, draft_spec: TaskSpec | None) -> str:
        """Without a draft task: create_task into the task set. With one (tests, validation): finish it there
        (instruction, metadata, paper) and move it, with its validation results, into the task set.

        Returns the task's name; ``Saved`` is posted once the worker has ended (see ``on_worker_state_changed``),
        so leaving the screen then never cancels a save still running."""
        cancel = get_current_worker().cancelled_event
        if self.draft_task is None:
            task = create_task(final, progress=self.panel.progress(), cancel=cancel)
        else:
            assert self.draft is not None
            task = publish_task(self._ensure_task(draft_spec, cancel), final, self.draft.results_dir)
        return task.name

    @property
    def running_workers(self) -> list[Worker[object]]:
        """This screen's running workers."""
        return [w for w in self.app.workers if w.node is self and w.is_running]

    async def discard_draft(self) -> None:
        """Stop the workers, wait until they have stopped writing, then remove the draft folder."""
        for worker in self.running_workers:
            worker.cancel()
            with contextlib.suppress(Exception):
                await worker.wait()
        await threads_ended(self)  # a cancelled worker's thread runs on until it sees the cancel
        if self.draft is not None:
            self.draft.remove()
            self.draft = None

    async def on_unmount(self) -> None:
        """Leaving by any way (also quitting the app) removes the draft."""
        await self.discard_draft()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Every worker's end is shown by the app's one handler; a save that has ended posts ``Saved``."""
        report_worker(self, event)
        worker = event.worker
        if event.state is WorkerState.SUCCESS and worker.group == "save" and isinstance(worker.result, str):
            self.post_message(self.Saved(worker.result))
