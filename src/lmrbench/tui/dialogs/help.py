"""The help screen (F1 or ?): what the current screen is for and every key it answers to."""

from __future__ import annotations

import inspect
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Label, Static


class HelpScreen(ModalScreen[None]):
    """Lists the keys of the screen below it (its own and the app's), with what each does, under what the screen is
    for: its ``HELP`` text, written for the user (the class docstring only when it has none)."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical {
        width: 90%; max-width: 110; height: 90%; border: thick $accent; background: $panel; padding: 0 1;
    }
    HelpScreen #help-about { width: 1fr; height: auto; margin-bottom: 1; }
    HelpScreen VerticalScroll { height: 1fr; }
    HelpScreen #help-close { height: 1; color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape,f1,q,question_mark", "close", "Close", id="help.close", tooltip="Back to the screen"),
    ]

    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self.about = screen

    def rows(self) -> list[tuple[str, str, str]]:
        """(key, action, what it does) for every described binding of the screen and the app."""
        own: list[tuple[str, str, str]] = []
        widget: list[tuple[str, str, str]] = []
        seen: set[tuple[str, str]] = set()
        for active in self.about.active_bindings.values():
            b = active.binding
            if not b.description or (b.action, b.description) in seen or b.action == "command_palette":
                continue
            seen.add((b.action, b.description))
            row = (self.app.get_key_display(b), b.description, b.tooltip if b.tooltip != b.description else "")
            (own if active.node in (self.about, self.app) else widget).append(row)
        out = own  # the screen's and the app's keys first, then those of the focused widget
        out.append((self.app.get_key_display(Binding("ctrl+p", "command_palette")), "Commands",
                    "Search every action by name"))
        return out + widget

    def compose(self) -> ComposeResult:
        about = self.about.HELP or (inspect.getdoc(type(self.about)) or "").split("\n\n")[0]
        title = type(self.about).__name__.removesuffix("Screen")
        with Vertical():
            yield Label(Text.assemble((f"{title}: ", "bold"), about), id="help-about")
            with VerticalScroll(id="help-scroll"):
                yield Static(self._table(), id="help-keys")
            yield Label("escape: close", id="help-close")

    def _table(self) -> Table:
        """The keys as a table whose last column wraps: nothing is cut on an 80-column terminal."""
        table = Table(box=None, expand=True, show_edge=False, pad_edge=False)
        table.add_column("key", no_wrap=True, style="bold")
        table.add_column("action", no_wrap=True)
        table.add_column("what it does", ratio=1, overflow="fold")
        for row in self.rows():
            table.add_row(*row)
        return table

    def action_close(self) -> None:
        """Back to the screen."""
        self.dismiss(None)
