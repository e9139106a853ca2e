"""Ask for a one-line comment on the shown candidate."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class CommentDialog(ModalScreen[str | None]):
    """Returns the comment (enter), or None (escape)."""

    DEFAULT_CSS = """
    CommentDialog { align: center middle; }
    CommentDialog > Vertical { width: 80; height: auto; border: thick $accent; background: $panel; padding: 1 2; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="comment.cancel", tooltip="Close without saving")]

    def __init__(self, title: str, text: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, markup=False)
            yield Input(self.text, placeholder="comment (enter saves, escape cancels)", id="comment",
                        select_on_focus=False)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        """Close without a comment."""
        self.dismiss(None)
