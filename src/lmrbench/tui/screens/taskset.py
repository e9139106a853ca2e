"""The task set: every task and implementation with its validation status; filter, sort, open, create."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Input, Label, RichLog
from textual.worker import Worker, WorkerState, get_current_worker

from lmrbench.tui.messages import TaskSetChanged
from lmrbench.tui.widgets.keys_footer import KeysFooter
from lmrbench.tui.widgets.work_panel import WorkPanel
from lmrbench.tui.workers import counted, report_worker, running_text

if TYPE_CHECKING:  # the task and validation stack loads in the worker, after the first frame
    from lmrbench.benchmark.validation.task import ResultStatus
    from lmrbench.core.sandbox import SandboxKind
    from lmrbench.core.taskset import Task
    from lmrbench.schemas.validation import ImplValidation, ValidationSummary

COLUMNS = ("task", "impl", "status", "golden", "mutants killed", "category", "last validated")


@dataclass(frozen=True)
class Row:
    """One implementation of one task, as shown."""

    task: str
    impl: int
    status: str
    golden: str
    kill_rate: str
    category: str
    last_validated: str

    def cells(self) -> tuple[str | int, ...]:
        """The cells in column order."""
        return (
            self.task, self.impl, self.status, self.golden, self.kill_rate, self.category, self.last_validated
        )

    def matches(self, text: str) -> bool:
        """True when every word of ``text`` appears in some cell; in the status only as a whole word, so ``valid``
        finds "valid" and "valid but weak", never "invalid" or "not validated"."""
        cells = self.cells()
        hay = " ".join(str(c) for c in (*cells[:2], *cells[3:])).lower()
        status = self.status.lower().split()
        return all(w in hay or w in status for w in text.lower().split())


@dataclass
class Snapshot:
    """What a load of the task set found."""

    rows: list[Row] = field(default_factory=list)
    paths: dict[str, Path] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _rows_of(task: Task, results: dict[int, tuple[ImplValidation | None, ResultStatus]]) -> list[Row]:
    rows = []
    for impl in task.info.implementations:
        cat = impl.category_normalized
        res, status = results.get(impl.index, (None, None))
        rate = res.kill_rate if res else None
        kills = f"{res.mutants_killed}/{res.mutants_total} ({rate:.0%})" if res and rate is not None else "-"
        when = "-" if res is None else res.finished_at.astimezone().strftime("%Y-%m-%d %H:%M")
        rows.append(
            Row(
                task=task.name,
                impl=impl.index,
                status=str(status or "not validated"),
                golden="-" if res is None else f"{res.golden_passes}/{res.repeat}",
                kill_rate=kills,
                category=cat.value if cat else (impl.category or "-"),
                last_validated=when,
            )
        )
    return rows


def summary_line(summary: ValidationSummary) -> str:
    """One line of a whole-set validation: the golden pass rate and how many are valid, as the CLI ends."""
    n = len(summary.rows)
    ran = n - sum(bool(r.environment_error) for r in summary.rows)
    valid = sum(r.valid and not r.weak for r in summary.rows)
    weak = sum(r.weak for r in summary.rows)
    rate = summary.golden_pass_rate
    head = "no implementation validated" if rate is None else f"golden pass rate {round(rate * ran)}/{ran} = {rate:.0%}"
    tail = f"; {len(summary.problems)} problems (in the log)" if summary.problems else ""
    return f"{head}; valid {valid}/{n}, valid but weak {weak}/{n}{tail}"


class TaskSetScreen(Screen[None]):
    """Lists the task set; the first screen of the app."""

    HELP = (
        "Every task of the set with its validation status; start a new task (n) or edit one (e)."
    )

    BINDINGS = [
        Binding("n", "new_task", "New task", id="taskset.new", tooltip="Author a new task in a guided flow"),
        Binding("g", "suggest", "Suggest", id="taskset.suggest", show=False,
                tooltip="Rank a repository's functions by its paper"),
        Binding("e", "edit_task", "Edit", id="taskset.edit", tooltip="Edit the selected task"),
        Binding("r", "refresh", "Refresh", id="taskset.refresh", tooltip="Reload the task set from disk"),
        Binding("slash", "focus_filter", "Filter", id="taskset.filter", tooltip="Filter rows by any text"),
        Binding("s", "sort", "Sort", id="taskset.sort", tooltip="Sort by the next column"),
        Binding("S", "reverse_sort", "Reverse", id="taskset.reverse", show=False, tooltip="Reverse the sort order"),
        Binding("V", "validate_all", "Validate all", id="taskset.validate_all",
                tooltip="Validate every task (unchanged ones reuse their results); says the golden pass rate"),
        Binding("ctrl+t", "stop_work", "Stop", id="taskset.stop", show=False, tooltip="Stop validating"),
        Binding("ctrl+q", "app.quit", "Quit", id="taskset.quit", tooltip="Leave the app"),
        Binding(
            "escape", "clear_filter", "Clear filter", id="taskset.clear", show=False,
            tooltip="Empty the filter and go back to the table",
        ),
    ]

    AUTO_FOCUS = "#tasks"

    @dataclass
    class Loaded(Message):
        """The worker read the task set."""

        snapshot: Snapshot

    def __init__(self, bench: Path, *, sandbox: SandboxKind | None = None) -> None:
        super().__init__()
        self.bench = bench
        self.sandbox = sandbox
        self.snapshot = Snapshot()
        self.sort_column = 0
        self.sort_reverse = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(classes="row"):
            yield Input(placeholder="filter: task, category, status…", id="filter", select_on_focus=False)
            yield Label("", id="count", markup=False)
        yield DataTable(id="tasks", cursor_type="row", zebra_stripes=True)
        yield Label("Warnings (task check)", classes="pane-title")
        yield RichLog(id="warnings", markup=False, wrap=True)
        yield WorkPanel(id="work")
        yield KeysFooter()

    def on_mount(self) -> None:
        """Show the empty table and start loading (in a thread: the first frame does not wait)."""
        self._fill()
        self.action_refresh()

    @work(thread=True, exclusive=True, exit_on_error=False, group="load")
    def load(self) -> None:
        """Read every task and run the task checks (in a thread: many files)."""
        from lmrbench.authoring.check.check import check_task
        from lmrbench.authoring.task.draft import leftover_drafts
        from lmrbench.benchmark.validation.task import ResultStatus, stored_results
        from lmrbench.benchmark.validation.weakness import weak_notes
        from lmrbench.core.taskset import load_taskset

        tasks, problems = load_taskset(self.bench)
        snap = Snapshot(warnings=[str(p) for p in problems])
        for draft in leftover_drafts(self.bench):
            snap.warnings.append(f"{draft}: an unsaved new task (an interrupted app left it, or one is open)")
        for task in tasks:
            results = stored_results(task)
            snap.paths[task.name] = task.path
            snap.rows.extend(_rows_of(task, results))
            for index, (res, status) in results.items():
                if res is not None and status is ResultStatus.INVALID:
                    snap.warnings.extend(f"{task.name}#{index}: {reason}" for reason in res.reasons)
                elif res is not None and status is ResultStatus.WEAK:
                    snap.warnings.extend(f"{task.name}#{index}: valid but weak: {note}" for note in weak_notes(res))
                elif status is ResultStatus.STALE:
                    snap.warnings.append(f"{task.name}#{index}: changed since it was validated; validate again")
            snap.warnings.extend(check_task(task))
        self.post_message(self.Loaded(snap))
        # Load the new-task flow's stack (git, LibCST, PyMuPDF) now, so that opening it is instant.
        import lmrbench.tui.screens.new_task  # noqa: F401

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        self.snapshot = message.snapshot
        log = self.query_one("#warnings", RichLog)
        log.clear()
        for line in self.snapshot.warnings or ["no warnings"]:
            log.write(line)
        self._fill()

    def _fill(self) -> None:
        table = self.query_one(DataTable)
        text = self.query_one("#filter", Input).value
        rows = [r for r in self.snapshot.rows if r.matches(text)]
        col = self.sort_column

        def key(r: Row) -> tuple[int, int | str]:
            v = r.cells()[col]
            return (0, v) if isinstance(v, int) else (1, str(v).lower())

        rows.sort(key=key, reverse=self.sort_reverse)
        table.clear(columns=True)
        # Widths are set from the rows shown, never left to the table's deferred measuring (which could leave
        # a column at its header's width).
        for k, name in enumerate(COLUMNS):
            width = max([len(name), *(len(str(r.cells()[k])) for r in rows)])
            table.add_column(name, key=name, width=min(width, 60))
        for r in rows:
            table.add_row(*r.cells(), key=f"{r.task}#{r.impl}")
        arrow = "↓" if self.sort_reverse else "↑"
        self.query_one("#count", Label).update(
            f"{len(rows)}/{len(self.snapshot.rows)} rows · sorted by {COLUMNS[col]} {arrow}"
        )

    @on(Input.Changed, "#filter")
    def _filter_changed(self) -> None:
        self._fill()

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.query_one(DataTable).focus()

    @on(DataTable.HeaderSelected)
    def _header(self, event: DataTable.HeaderSelected) -> None:
        idx = COLUMNS.index(str(event.column_key.value))
        self.sort_reverse = not self.sort_reverse if idx == self.sort_column else False
        self.sort_column = idx
        self._fill()

    @on(DataTable.RowSelected)
    def _row_selected(self) -> None:
        self.action_edit_task()

    @on(TaskSetChanged)
    def _changed(self) -> None:
        self.action_refresh()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Every worker error of this screen ends up here: shown in the app, never as a traceback; a whole-set
        validation that ended says its golden pass rate and reloads the table."""
        worker = event.worker
        if worker.group == "load" and event.state is WorkerState.SUCCESS:
            return  # a reload is not work to report: the panel keeps what the last validation said
        report_worker(self, event)
        if event.state is WorkerState.SUCCESS and worker.group == "validate" and worker.result is not None:
            line = summary_line(worker.result)
            panel = self.query_one(WorkPanel)
            for problem in worker.result.problems:
                panel.post_message(WorkPanel.Logged(f"problem: {problem}"))
            panel.done(line)
            self.notify(line, title="Validated the task set", timeout=10)
            self.action_refresh()

    def action_validate_all(self) -> None:
        """Validate every task of the set (the CLI's ``lmrbench validate``), live in the work panel."""
        if any(w.group == "validate" and w.is_running for w in self.workers):
            self.notify(f"the {running_text(['validate'])} is running (ctrl+t stops it)", severity="warning")
            return
        self.validate_all()

    @work(thread=True, exclusive=True, exit_on_error=False, group="validate")
    @counted
    def validate_all(self) -> ValidationSummary:
        """Run golden, masked and mutants of every implementation (results of unchanged tasks are reused)."""
        from lmrbench.benchmark.validation.taskset import validate_taskset

        return validate_taskset(self.bench, sandbox=self.sandbox, progress=self.query_one(WorkPanel).progress(),
                                cancel=get_current_worker().cancelled_event)

    def action_stop_work(self) -> None:
        """Stop a running validation (what is done stays on disk)."""
        for worker in self.workers:
            if worker.group == "validate":
                worker.cancel()

    def unsaved_work(self) -> str | None:
        """A running validation (the app asks before quitting)."""
        running = [w.group for w in self.workers if w.group == "validate" and w.is_running]
        return f"the running {running_text(running)}" if running else None

    def selected_task(self) -> Path | None:
        """The folder of the task under the cursor."""
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value or ""
        return self.snapshot.paths.get(key.rsplit("#", 1)[0])

    def action_refresh(self) -> None:
        """Reload from disk."""
        self.load()

    def action_focus_filter(self) -> None:
        """Type a filter."""
        self.query_one("#filter", Input).focus()

    def action_clear_filter(self) -> None:
        """Empty the filter and go back to the table."""
        self.query_one("#filter", Input).value = ""
        self.query_one(DataTable).focus()

    def action_reverse_sort(self) -> None:
        """Reverse the order of the current sort."""
        self.sort_reverse = not self.sort_reverse
        self._fill()

    def action_sort(self) -> None:
        """Sort by the next column (clicking a header twice reverses)."""
        self.sort_column = (self.sort_column + 1) % len(COLUMNS)
        self.sort_reverse = False
        self._fill()

    def action_new_task(self) -> None:
        """Open the new-task flow."""
        from lmrbench.tui.screens.new_task import NewTaskScreen

        self.app.push_screen(NewTaskScreen(self.bench, sandbox=self.sandbox), self._after_edit)

    def action_suggest(self) -> None:
        """Rank a repository's functions against its paper; the chosen one opens the new-task flow."""
        from lmrbench.tui.screens.new_task import NewTaskScreen
        from lmrbench.tui.screens.suggest import Suggested, SuggestScreen

        def chosen(pick: Suggested | None) -> None:
            if pick is not None:
                self.app.push_screen(NewTaskScreen(self.bench, source=pick.repo, sandbox=self.sandbox, pick=pick),
                                     self._after_edit)

        self.app.push_screen(SuggestScreen(self.bench, sandbox=self.sandbox), chosen)

    def action_edit_task(self) -> None:
        """Open the selected task."""
        path = self.selected_task()
        if path is None:
            self.notify("no task selected", severity="warning")
            return
        from lmrbench.tui.screens.edit_task import EditTaskScreen

        self.app.push_screen(EditTaskScreen(path, sandbox=self.sandbox), self._after_change)

    def _after_edit(self, saved: str | None) -> None:
        """After the new-task flow: say what it saved."""
        if saved:
            self.notify(f"saved {saved}")
            self.action_refresh()

    def _after_change(self, changed: str | None) -> None:
        """After the edit screen (which said what it saved, validated or recorded): reload."""
        if changed:
            self.action_refresh()
