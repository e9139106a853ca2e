"""A long text shown whole: a scrollable page over the screen (the review's instruction, a list of problems)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Markdown, Static


class TextDialog(ModalScreen[None]):
    """Shows ``text`` as written (no markup; ``markdown``: rendered) under ``title``; arrows and pgdn scroll it,
    esc closes it."""

    DEFAULT_CSS = """
    TextDialog { align: center middle; }
    TextDialog > Vertical {
        width: 90%; max-width: 100; height: auto; max-height: 90%;
        border: thick $accent; background: $panel; padding: 0 1;
    }
    TextDialog #text-title { text-style: bold; height: 1; }
    TextDialog VerticalScroll { height: auto; max-height: 1fr; }
    TextDialog #text-hint { color: $text-muted; height: 1; }
    """
    BINDINGS = [
        Binding("escape,q,i", "close", "Close", id="text.close", tooltip="Back to the screen"),
    ]

    def __init__(self, title: str, text: str, *, markdown: bool = False) -> None:
        super().__init__()
        self.title_text = title
        self.text = text
        self.markdown = markdown

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text, id="text-title", markup=False)
            with VerticalScroll(id="text-scroll"):
                if self.markdown:
                    yield Markdown(self.text, id="text-body")
                else:
                    yield Static(self.text, id="text-body", markup=False)
            yield Label("esc: close · arrows, pgdn: scroll", id="text-hint")

    def on_mount(self) -> None:
        """Scroll with the keys at once."""
        self.query_one(VerticalScroll).focus()

    def action_close(self) -> None:
        """Back to the screen."""
        self.dismiss(None)
