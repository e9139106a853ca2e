"""Python source with syntax highlighting, the lines of one function marked."""

from __future__ import annotations

from rich.syntax import Syntax
from textual.containers import VerticalScroll
from textual.widgets import Static

CONTEXT = 400  # lines shown around the function in very long files


class CodeView(VerticalScroll):
    """A read-only, highlighted view of a file around one function."""

    DEFAULT_CSS = """
    CodeView { height: 1fr; background: $surface; }
    CodeView > Static { width: auto; }
    """

    text = ""
    """The lines shown."""

    def compose(self):  # noqa: ANN201
        yield Static("", id="code")

    def show(self, source: str, first: int = 0, last: int = 0) -> None:
        """Show ``source``; lines ``first..last`` (1-based) are highlighted and scrolled into view."""
        lines = source.count("\n") + 1
        lo = max(1, first - CONTEXT) if first else 1
        hi = min(lines, last + CONTEXT) if last else lines
        syntax = Syntax(
            source,
            "python",
            line_numbers=True,
            line_range=(lo, hi),
            highlight_lines=set(range(first, last + 1)) if first else None,
            word_wrap=False,
            indent_guides=False,
        )
        self.text = "\n".join(source.splitlines()[lo - 1 : hi])
        self.query_one("#code", Static).update(syntax)
        if first:
            self.call_after_refresh(self.scroll_to, y=max(0, first - lo - 2), animate=False)
