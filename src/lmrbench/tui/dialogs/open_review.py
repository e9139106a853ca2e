"""Ask which run to review, and as whom."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class OpenReviewDialog(ModalScreen[tuple[Path, str] | None]):
    """Returns (run folder, annotator) on enter in the last field, or None on escape."""

    DEFAULT_CSS = """
    OpenReviewDialog { align: center middle; }
    OpenReviewDialog > Vertical { width: 80; height: auto; border: thick $accent; background: $panel; padding: 1 2; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="open_review.cancel", tooltip="Close")]

    def __init__(self, annotator: str) -> None:
        super().__init__()
        self.annotator = annotator

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Review the candidates of a run")
            yield Input(placeholder="run folder", id="run", select_on_focus=False)
            yield Input(self.annotator, placeholder="annotator", id="annotator", select_on_focus=False)

    @on(Input.Submitted, "#run")
    def _next(self) -> None:
        self.query_one("#annotator", Input).focus()

    @on(Input.Submitted, "#annotator")
    def _submitted(self) -> None:
        run = self.query_one("#run", Input).value.strip()
        name = self.query_one("#annotator", Input).value.strip()
        if not run:
            self.query_one("#run", Input).focus()
            return
        self.dismiss((Path(run).expanduser(), name))

    def action_cancel(self) -> None:
        """Close without opening."""
        self.dismiss(None)
