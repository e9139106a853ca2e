"""Which function to make a task of: the repository's functions ranked against the paper (``authoring.suggest``),
optionally with the calls its tests and examples make; Enter hands the chosen one to the new-task flow."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Checkbox, DataTable, Header, Input, Static

from lmrbench.core.sandbox import SandboxKind
from lmrbench.tui.widgets.keys_footer import KeysFooter

if TYPE_CHECKING:
    from lmrbench.authoring.suggest.suggest import Suggestion

COLUMNS = ("rank", "function", "score", "task", "copies", "codec", "calls", "lines", "passage")
"""The longest column last, so the short ones fit 80 columns; the status line says the highlighted row whole."""


@dataclass(frozen=True)
class Suggested:
    """What the screen returns: the repository, the chosen function (``file::qualname@line``), the paper and where in it
    the function's passage is (the new-task flow opens with the function ticked and the paper at the passage)."""

    repo: str
    ref: str
    paper: str = ""
    page: int = 0
    """The passage's page (1-based; 0: none)."""
    passage: str = ""
    """The passage's heading, searched for on that page."""


class SuggestScreen(Screen[Suggested | None]):
    """A repository folder and its paper in; ranked candidates out."""

    BINDINGS = [
        Binding("ctrl+g", "rank", "Rank", id="suggest.rank", tooltip="Rank the functions against the paper"),
        Binding("escape", "back", "Back", id="suggest.back", tooltip="Back to the task set"),
    ]
    DEFAULT_CSS = """
    SuggestScreen #suggest-form { height: auto; }
    SuggestScreen #suggest-form Input { width: 1fr; }
    SuggestScreen #suggest-table { height: 1fr; }
    SuggestScreen #suggest-status { height: auto; padding: 0 1; }
    """

    def __init__(self, bench: Path, *, sandbox: SandboxKind | None = None) -> None:
        super().__init__()
        self.bench = bench
        self.sandbox = sandbox
        self.result: Suggestion | None = None
        self.repo = ""

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical():
            with Horizontal(id="suggest-form"):
                yield Input(placeholder="repository folder", id="suggest-repo", select_on_focus=False)
                yield Input(placeholder="paper PDF", id="suggest-paper", select_on_focus=False)
                yield Checkbox("run tests and examples", id="suggest-run",
                               tooltip="Find the calls of each candidate (runs the repository's code)")
            yield DataTable(id="suggest-table", cursor_type="row")
            yield Static("give the repository and the paper, then ctrl+g; Enter on a row makes a task of it",
                         id="suggest-status", markup=False)
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#suggest-table", DataTable).add_columns(*COLUMNS)
        self.query_one("#suggest-repo", Input).focus()

    def action_rank(self) -> None:
        """Rank in a worker (and run the commands when asked)."""
        repo = self.query_one("#suggest-repo", Input).value.strip()
        paper = self.query_one("#suggest-paper", Input).value.strip()
        if not repo or not paper:
            self._status("give the repository folder and the paper's PDF")
            return
        self._status("ranking..." if not self.query_one("#suggest-run", Checkbox).value else "ranking and running...")
        self._rank(repo, paper, self.query_one("#suggest-run", Checkbox).value)

    @work(thread=True, exclusive=True, exit_on_error=False, group="suggest")
    def _rank(self, repo: str, paper: str, run: bool) -> None:
        from lmrbench.authoring.suggest.suggest import suggest
        from lmrbench.errors import LmrError

        try:
            box = None
            if run:
                from lmrbench.benchmark.execution.sandboxes import get_sandbox

                box = get_sandbox(self.sandbox)
            result = suggest(Path(repo).expanduser(), Path(paper).expanduser(), sandbox=box,
                             bench=self.bench)
        except LmrError as exc:
            self.app.call_from_thread(self._status, f"cannot suggest: {exc}")
            return
        self.app.call_from_thread(self._show, repo, result, run)

    def _status(self, text: str) -> None:
        self.query_one("#suggest-status", Static).update(text)

    def _show(self, repo: str, result: Suggestion, ran: bool) -> None:
        self.repo, self.result = repo, result
        table = self.query_one("#suggest-table", DataTable)
        table.clear()
        for c in result.candidates:
            f = c.function
            calls = ("not run" if not ran else f"- ({c.not_recordable})" if c.not_recordable
                     else f"{c.calls.count_text} by {c.caller}" if c.calls.calls else "none")
            table.add_row(str(c.rank), f.ref, f"{c.ranked.score:.1f}", c.task or "-", ", ".join(c.copies) or "none",
                          c.calls.codec or "-", calls, f"{f.lineno}-{f.end_lineno}", c.ranked.passage.label,
                          key=f"{f.ref}@{f.lineno}")  # a name defined twice is two rows
        self._status(f"{result.functions} functions ranked against {result.passages} passages of the paper; "
                     "Enter on a row makes a task of it")
        table.focus()

    @on(DataTable.RowHighlighted, "#suggest-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        """Every column of the highlighted row in the status line (at 80 columns the table cannot show them all)."""
        table = self.query_one("#suggest-table", DataTable)
        row = [str(cell) for cell in table.get_row_at(event.cursor_row)]
        self._status(" · ".join(f"{name}: {value}" for name, value in zip(COLUMNS, row, strict=True))
                     + "; Enter makes a task of it")

    @on(DataTable.RowSelected, "#suggest-table")
    def _chosen(self, event: DataTable.RowSelected) -> None:
        if self.result is None or not event.row_key.value:
            return
        ref = str(event.row_key.value)
        passage = next((c.ranked.passage for c in self.result.candidates
                        if f"{c.function.ref}@{c.function.lineno}" == ref), None)
        paper = self.query_one("#suggest-paper", Input).value.strip()
        self.dismiss(Suggested(self.repo, ref, paper, passage.page if passage else 0,
                               passage.title if passage else ""))

    def action_back(self) -> None:
        """Back without a choice."""
        self.dismiss(None)
