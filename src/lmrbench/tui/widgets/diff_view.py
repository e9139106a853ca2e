"""A unified diff of a file before and after masking."""

from __future__ import annotations

import difflib

from rich.syntax import Syntax
from textual.containers import VerticalScroll
from textual.widgets import Static


class DiffView(VerticalScroll):
    """Shows what masking changes in the goal files."""

    DEFAULT_CSS = """
    DiffView { height: 1fr; background: $surface; }
    DiffView > Static { width: auto; }
    """

    text = ""
    """The diff shown."""

    def compose(self):  # noqa: ANN201
        yield Static("", id="diff")

    def show(self, pairs: list[tuple[str, str, str]]) -> None:
        """Show the diff of each ``(file, before, after)``."""
        chunks: list[str] = []
        for name, before, after in pairs:
            chunks.extend(
                difflib.unified_diff(
                    before.splitlines(keepends=True),
                    after.splitlines(keepends=True),
                    f"a/{name}",
                    f"b/{name}",
                    n=3,
                )
            )
        text = "".join(c if c.endswith("\n") else c + "\n" for c in chunks) or "(no change)\n"
        self.text = text
        self.query_one("#diff", Static).update(Syntax(text, "diff", word_wrap=False))
        self.scroll_home(animate=False)
