"""Golden against candidate goal functions, highlighted (textual-diff-view's DiffView): side by side when every
line fits whole on its side, else one unified diff with long lines wrapped, never cut."""

from __future__ import annotations

import difflib

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static
from textual_diff_view import DiffView

WHOLE = 1_000_000  # context lines: a goal function is shown whole, not only around its changes


class WholeDiffView(DiffView):
    """A DiffView that shows both functions whole, titled golden / candidate."""

    @property
    def grouped_opcodes(self) -> list[list[tuple[str, int, int, int, int]]]:
        """One group spanning both texts (DiffView's default keeps 3 lines around each change)."""
        if self._grouped_opcodes is None:
            a, b = self.code_original.splitlines(), self.code_modified.splitlines()
            groups = list(difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(WHOLE))
            # difflib yields no group for identical texts: show them whole all the same
            self._grouped_opcodes = groups or [[("equal", 0, len(a), 0, len(b))]]
        return self._grouped_opcodes

    def get_title(self) -> Content:
        """``golden (left) · candidate (right)`` (or ``(-)`` / ``(+)`` unified) and the changed line counts."""
        added, removed = self.counts
        old, new = ("left", "right") if self.split else ("-", "+")
        return Content.from_markup(
            f"[b]golden[/b] ({old})  ·  [b]candidate[/b] ({new})  "
            "([$text-success][b]+$added[/b][/], [$text-error][b]-$removed[/b][/])",
            added=added,
            removed=removed,
        )


class CodeDiff(VerticalScroll):
    """A split diff of two Python sources, or a one-line message when there is nothing to diff."""

    DEFAULT_CSS = """
    CodeDiff { height: 1fr; background: $surface; }
    CodeDiff > Static { color: $error; margin: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Static("", id="diff-message", markup=False)

    async def show(self, golden: str, candidate: str) -> None:
        """Diff ``golden`` (left) against ``candidate`` (right), both Python."""
        await self.query(DiffView).remove()
        self.query_one("#diff-message", Static).display = False
        view = WholeDiffView("golden.py", "candidate.py", golden, candidate, split=True, annotations=True, wrap=True,
                             auto_split=True)  # fmt: skip
        await view.prepare()
        await self.mount(view)
        self.scroll_home(animate=False)

    async def message(self, text: str) -> None:
        """Show a message instead of a diff."""
        await self.query(DiffView).remove()
        msg = self.query_one("#diff-message", Static)
        msg.update(text)
        msg.display = True
