"""What is known about the shown candidate: unit tests and the judge (or that they are hidden), the label given."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static


class ReviewFacts(VerticalScroll):
    """Three short panes of text set by the screen (the label given on top); as tall as they need, up to a third of
    the screen."""

    DEFAULT_CSS = """
    ReviewFacts { height: auto; max-height: 33%; background: $panel; padding: 0 1; }
    ReviewFacts > Static { height: auto; }
    """

    def compose(self) -> ComposeResult:
        # the label first: after a key it is what changed, and it must not fall below a long judge's reasons
        yield Static("", id="facts-label", markup=False)
        yield Static("", id="facts-tests", markup=False)
        yield Static("", id="facts-judge", markup=False)

    def show(self, tests: Text, judge: Text, label: Text) -> None:
        """Replace the three panes (an empty one takes no room)."""
        for name, text in (("tests", tests), ("judge", judge), ("label", label)):
            pane = self.query_one(f"#facts-{name}", Static)
            pane.update(text)
            pane.display = bool(text.plain)
        self.scroll_home(animate=False)
