"""The paper's parsed text, one page at a time, with search and page jumps."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Input, Label, TextArea
from textual.widgets.text_area import Selection


def _location(text: str, offset: int) -> tuple[int, int]:
    before = text[:offset]
    row = before.count("\n")
    return row, offset - (before.rfind("\n") + 1)


class PaperView(Widget):
    """Read the paper while writing the instruction: search (enter: next hit) and jump to a page."""

    DEFAULT_CSS = """
    PaperView { height: 1fr; }
    PaperView #paper-bar { height: auto; }
    PaperView #paper-search { width: 1fr; }
    PaperView #paper-page { width: 12; }
    PaperView #paper-where { height: 1; color: $text-muted; margin: 0 1; }
    PaperView TextArea { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.pages: list[str] = []
        self.page = 0

    def compose(self) -> ComposeResult:
        with Horizontal(id="paper-bar"):
            yield Input(placeholder="search the paper (enter: next)", id="paper-search", select_on_focus=False)
            yield Input(placeholder="page", id="paper-page", type="integer", select_on_focus=False)
        yield Label("no paper attached", id="paper-where", markup=False)
        yield TextArea("", id="paper-text", read_only=True, soft_wrap=True, show_line_numbers=False)

    def set_pages(self, pages: dict[str, str]) -> None:
        """Show a parsed paper (page number -> text)."""
        self.pages = [pages[k] for k in sorted(pages, key=lambda k: int(k) if k.isdigit() else 0)]
        self.show_page(0)

    def show_page(self, page: int) -> None:
        """Jump to a page (0-based)."""
        if not self.pages:
            return
        self.page = max(0, min(page, len(self.pages) - 1))
        area = self.query_one(TextArea)
        area.load_text(self.pages[self.page])
        area.scroll_home(animate=False)
        self.query_one("#paper-where", Label).update(f"page {self.page + 1} of {len(self.pages)}")

    def find_next(self, needle: str) -> bool:
        """Select the next occurrence after the cursor, on this page or a later one (wrapping)."""
        if not needle or not self.pages:
            return False
        area = self.query_one(TextArea)
        low = needle.lower()
        row, col = area.selection.end
        lines = self.pages[self.page].split("\n")
        start = sum(len(line) + 1 for line in lines[:row]) + col
        order = [self.page, *range(self.page + 1, len(self.pages)), *range(0, self.page + 1)]
        for i, p in enumerate(order):
            text = self.pages[p]
            at = text.lower().find(low, start if i == 0 else 0)
            if at >= 0:
                if p != self.page:
                    self.show_page(p)
                found = _location(text, at)
                area.selection = Selection(found, _location(text, at + len(needle)))
                # the match near the top, with what follows it below (a heading opens its passage); after the
                # refresh, since a page just shown is not laid out yet
                self.call_after_refresh(area.scroll_to, y=max(0, found[0] - 1), animate=False, immediate=True)
                self.query_one("#paper-where", Label).update(
                    f"page {self.page + 1} of {len(self.pages)} · found {needle!r}"
                )
                return True
        where = f"page {self.page + 1} of {len(self.pages)}"
        self.query_one("#paper-where", Label).update(f"{where} · no {needle!r}")
        return False

    @on(Input.Submitted, "#paper-search")
    def _search(self, event: Input.Submitted) -> None:
        event.stop()
        self.find_next(event.value)

    @on(Input.Submitted, "#paper-page")
    def _jump(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip().lstrip("-").isdigit():
            self.show_page(int(event.value) - 1)
