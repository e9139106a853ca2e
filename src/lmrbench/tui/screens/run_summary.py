"""A run's summary: the paper's Table 2 for the runs and terminal plots of accuracy and the judge's split."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

if TYPE_CHECKING:
    from lmrbench.benchmark.report.scoreboard import Report


class RunSummaryScreen(Screen[None]):
    """Table 2 of the given run folders, with plots below (read in a worker)."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="runs.back", tooltip="Back to the task set")]
    DEFAULT_CSS = """
    RunSummaryScreen #run-table { height: auto; max-height: 12; }
    """

    def __init__(self, runs: list[Path]) -> None:
        super().__init__()
        self.runs = runs

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="run-summary"):
            yield DataTable(id="run-table", cursor_type="row")
            yield Static("reading the runs...", id="run-status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        """Read the runs off the UI thread."""
        self._load()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _load(self) -> None:
        from lmrbench.benchmark.report.scoreboard import build_report
        from lmrbench.errors import LmrError

        try:
            report = build_report(self.runs)
        except LmrError as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        self.app.call_from_thread(self._show, report)

    def _failed(self, problem: str) -> None:
        self.query_one("#run-status", Static).update(f"cannot read the runs: {problem}")

    def _show(self, report: Report) -> None:
        from lmrbench.benchmark.report.scoreboard import TABLE_HEADERS, table_rows
        from lmrbench.tui.widgets.run_plot import RunPlots

        table = self.query_one("#run-table", DataTable)
        table.add_columns(*TABLE_HEADERS)
        for row in table_rows(report):
            table.add_row(*row)
        self.query_one("#run-status", Static).update(f"{len(report.rows)} row(s) from {len(self.runs)} run(s)")
        self.query_one("#run-summary", Vertical).mount(RunPlots(report, id="run-plots"))
