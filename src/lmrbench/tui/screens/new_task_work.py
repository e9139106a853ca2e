"""The new-task flow's background work: each worker calls one core function in a thread and posts its result.

``DraftWork`` is a plain object the screen owns. It starts thread workers on the screen (``run_worker``, so
Textual cancels them with the screen and reports their end to its ``Worker.StateChanged`` handler), keeps the
draft folder and the draft task they write, and posts its messages to the screen. Nothing is written outside the
draft folder (authoring/task/draft.py) until Save.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from textual.message import Message
from textual.screen import Screen
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
from lmrbench.tui.widgets.work_panel import WorkPanel
from lmrbench.tui.workers import counted, report_worker, running_text, threads_ended

if TYPE_CHECKING:  # the sandbox, recording and validation stack loads in the workers that use it
    from lmrbench.core.sandbox import SandboxKind
    from lmrbench.schemas.recording import RecordedCase
    from lmrbench.schemas.validation import ImplValidation

R = TypeVar("R")


class DraftWork:
    """The workers of the new-task flow, the messages they post to its screen, and the draft they write."""

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

    def __init__(
        self, screen: Screen[Any], bench: Path, *, spec: Callable[[Path], TaskSpec], sandbox: SandboxKind | None = None
    ) -> None:
        self.screen = screen
        """Where the workers run and the messages go."""
        self.bench = bench
        self.spec = spec
        """The task spec the author has built so far, for a task set folder (LmrError when a part is missing)."""
        self.sandbox_kind = sandbox
        self.draft: Draft | None = None
        """The draft folder, made by the first clone."""
        self.draft_task: Task | None = None
        """The task made in the draft folder (for the tests and the validation), or None."""

    # ---- starting work (on the app's thread) -----------------------------------------------------

    def _run(self, body: Callable[..., R], group: str, *args: Any) -> Worker[R]:
        """Run ``body(panel, *args)`` as the screen's exclusive thread worker of ``group`` (as ``@work`` would)."""
        panel = self.screen.query_one(WorkPanel)
        return self.screen.run_worker(
            partial(body, panel, *args), name=body.__name__.lstrip("_"), group=group,
            description=f"{body.__name__.lstrip('_')}{args!r}", exclusive=True, exit_on_error=False, thread=True,
        )

    def clone(self, source: str, commit: str | None) -> None:
        """Clone ``source`` at ``commit`` into the draft (made now when there is none yet) and index it."""
        if self.draft is None:
            self.draft = Draft.create(self.bench)
        self._run(self._clone, "clone", source, commit, self.draft)

    def mask(self, root: Path, selected: list[str], style: MaskStyle) -> None:
        """Mask the ``file::qualname`` functions of the clone at ``root`` (a LibCST transform per goal file)."""
        self._run(self._mask, "mask", root, selected, style)

    def load_paper(self, pdf: Path) -> None:
        """Read the paper's text per page (PyMuPDF)."""
        self._run(self._load_paper, "paper", pdf)

    def record(self, command: str) -> None:
        """Record the tests while ``command`` runs (making the draft task first when it is out of date)."""
        try:
            self._run(self._record, "tests", self.draft_spec(), command)
        except LmrError as exc:
            self.screen.notify(str(exc), severity="error")

    def scaffold(self) -> None:
        """Write a scaffold test per implementation (making the draft task first when it is out of date)."""
        try:
            self._run(self._scaffold, "tests", self.draft_spec())
        except LmrError as exc:
            self.screen.notify(str(exc), severity="error")

    def validate(self, spec: TaskSpec | None, final: TaskSpec) -> None:
        """Build and validate the draft task (made from ``spec`` first when not None) for ``final`` as it is now."""
        assert self.draft is not None
        self._run(self._validate, "validate", spec, final, self.draft)

    def save(self, final: TaskSpec) -> None:
        """Write the task ``final`` describes into the task set; ``Saved`` is posted once the worker has ended."""
        self._run(self._save, "save", final, None if self.draft_task is None else self.draft_spec())

    # ---- the draft task --------------------------------------------------------------------------

    def draft_spec(self) -> TaskSpec | None:
        """The spec to (re)create the draft task from, or None when the draft task is up to date; a new name alone
        renames the draft task in place, keeping its recorded tests. No instruction yet: a placeholder."""
        if self.draft is None:
            raise LmrError("clone a repository first (step 1)")
        spec = self.spec(self.draft.tasks_dir)
        if not "".join(spec.instructions).strip():
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
            self.screen.query_one(TaskTests).set_task(self.draft_task)
            return None
        if not need:
            return None
        text = "the functions or the mask changed: the draft task is made again; record its tests again"
        self.screen.notify(text, severity="warning")
        return spec

    # ---- the workers' bodies (in a thread: they only post messages) -------------------------------

    @counted
    def _clone(self, panel: WorkPanel, source: str, commit: str | None, draft: Draft) -> None:
        """Clone and index (git and a whole-repo parse)."""
        cancel = get_current_worker().cancelled_event
        progress = panel.progress()
        remove_task(draft.source_dir)
        repo = clone_repo(source, draft.source_dir, commit, progress=progress, cancel=cancel)
        report = index_repo_report(repo.path, progress=progress, cancel=cancel)
        self.screen.post_message(self.Cloned(repo, report.functions, [str(p) for p in report.problems]))

    @counted
    def _mask(self, panel: WorkPanel, root: Path, selected: list[str], style: MaskStyle) -> None:
        """Compute the masked files."""
        by_file: dict[str, list[str]] = {}
        for key in selected:
            ref = FunctionRef.parse(key)
            by_file.setdefault(ref.file, []).append(ref.masked_name)
        pairs = []
        for file, names in by_file.items():
            before = (root / file).read_text(encoding="utf-8")
            pairs.append((file, before, mask_source(before, names, style, file=file)))
        self.screen.post_message(self.Masked(pairs))

    @counted
    def _load_paper(self, panel: WorkPanel, pdf: Path) -> None:
        """Read the paper's text."""
        panel.progress().start(f"reading {pdf.name}", None)
        self.screen.post_message(self.PaperLoaded(paper_pages(pdf)))

    def _ensure_task(self, panel: WorkPanel, spec: TaskSpec | None, cancel: threading.Event) -> Task:
        """Create (or re-create) the draft task when the spec changed."""
        if spec is not None:
            task = create_task(spec, force=True, progress=panel.progress(), cancel=cancel)
            self.screen.post_message(self.DraftReady(task))
            return task
        assert self.draft_task is not None
        return self.draft_task

    @counted
    def _record(self, panel: WorkPanel, spec: TaskSpec | None, command: str) -> None:
        """Record every implementation's calls while the command runs on the golden code (live log)."""
        from lmrbench.authoring.record.record import record_tests
        from lmrbench.benchmark.execution.sandboxes import get_sandbox

        cancel = get_current_worker().cancelled_event
        progress = panel.progress()
        task = self._ensure_task(panel, spec, cancel)
        sandbox = get_sandbox(self.sandbox_kind, progress=progress)
        for impl in task.info.implementations:
            result = record_tests(task, impl.index, command, sandbox=sandbox, force=True, progress=progress,
                                  cancel=cancel)
            self.screen.post_message(self.Recorded(impl.index, result.cases))
        self.screen.post_message(self.DraftReady(load_task(task.path)))

    @counted
    def _scaffold(self, panel: WorkPanel, spec: TaskSpec | None) -> None:
        """Write a scaffold test per implementation."""
        from lmrbench.authoring.record.recorded_tests import scaffold_tests

        cancel = get_current_worker().cancelled_event
        task = self._ensure_task(panel, spec, cancel)
        for impl in task.info.implementations:
            path = scaffold_tests(task, impl.index, force=True)
            rel = path.relative_to(task.path)
            panel.progress().log(f"scaffold written: {rel} (fill in the LMRBENCH-TODO values)")
        self.screen.post_message(self.DraftReady(load_task(task.path)))

    @counted
    def _validate(self, panel: WorkPanel, spec: TaskSpec | None, final: TaskSpec, draft: Draft) -> None:
        """Write the instruction and metadata into the draft task, build its image (live log) and run golden, masked
        and mutants; the result holds for ``final`` as it is now (``validated_key``)."""
        from lmrbench.benchmark.validation.plan import ValidateOptions
        from lmrbench.benchmark.validation.task import validate_task

        cancel = get_current_worker().cancelled_event
        key = validated_key(final)
        task = write_fields(self._ensure_task(panel, spec, cancel), final)
        results = validate_task(
            task.path, sandbox=self.sandbox_kind, run_dir=draft.results_dir, options=ValidateOptions(force=True),
            progress=panel.progress(), cancel=cancel,
        )
        self.screen.post_message(self.Validated(results, key))

    @counted
    def _save(self, panel: WorkPanel, final: TaskSpec, draft_spec: TaskSpec | None) -> str:
        """Without a draft task: create_task into the task set. With one (tests, validation): finish it there
        (instruction, metadata, paper) and move it, with its validation results, into the task set.

        Returns the task's name; ``Saved`` is posted once the worker has ended (see ``worker_changed``), so
        leaving the screen then never cancels a save still running."""
        cancel = get_current_worker().cancelled_event
        if self.draft_task is None:
            task = create_task(final, progress=panel.progress(), cancel=cancel)
        else:
            assert self.draft is not None
            task = publish_task(self._ensure_task(panel, draft_spec, cancel), final, self.draft.results_dir)
        return task.name

    # ---- running work, leaving -------------------------------------------------------------------

    @property
    def running(self) -> list[Worker[object]]:
        """The screen's running workers."""
        return [w for w in self.screen.app.workers if w.node is self.screen and w.is_running]

    def is_running(self, group: str | None) -> bool:
        """Whether a worker of ``group`` runs."""
        return any(w.group == group for w in self.running)

    def stop(self) -> None:
        """Cancel every running worker."""
        for worker in self.running:
            worker.cancel()

    def unsaved(self) -> str | None:
        """What leaving now would lose (the draft and the running work), or None."""
        if self.draft is None:
            return None
        running = running_text([w.group for w in self.running])
        return "the draft task" + (f" and the running {running}" if running else "")

    async def discard(self) -> None:
        """Stop the workers, wait until they have stopped writing, then remove the draft folder."""
        for worker in self.running:
            worker.cancel()
            with contextlib.suppress(Exception):
                await worker.wait()
        await threads_ended(self)  # a cancelled worker's thread runs on until it sees the cancel
        if self.draft is not None:
            self.draft.remove()
            self.draft = None

    def worker_changed(self, event: Worker.StateChanged) -> None:
        """Show a worker's end (the app's one report); a save that has ended posts ``Saved``."""
        report_worker(self.screen, event)
        worker = event.worker
        if event.state is WorkerState.SUCCESS and worker.group == "save" and isinstance(worker.result, str):
            self.screen.post_message(self.Saved(worker.result))
