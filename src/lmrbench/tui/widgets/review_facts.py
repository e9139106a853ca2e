"""What is known about the shown candidate: unit tests, the judge (or that it is hidden), the label given."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static


class ReviewFacts(VerticalScroll):
    """Three short panes of text set by the screen."""

    DEFAULT_CSS = """
    ReviewFacts { height: 12; background: $panel; padding: 0 1; }
    ReviewFacts > Static { height: auto; margin-bottom: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static("", id="facts-tests", markup=False)
        yield Static("", id="facts-judge", markup=False)
        yield Static("", id="facts-label", markup=False)

    def show(self, tests: Text, judge: Text, label: Text) -> None:
        """Replace the three panes."""
        self.query_one("#facts-tests", Static).update(tests)
        self.query_one("#facts-judge", Static).update(judge)
        self.query_one("#facts-label", Static).update(label)
        self.scroll_home(animate=False)
