"""The review queue: one row per candidate (task, implementation, label, shared or reassigned)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message
from textual.widgets import DataTable

Row = tuple[str, str, str, str]
"""(task, impl, label, with): the cells of one row."""


class ReviewQueue(DataTable[str]):
    """Rows given by the screen; choosing a row (the mouse, enter, or moving the cursor with the arrow keys) posts
    ``Chosen`` with its position in the queue."""

    DEFAULT_CSS = """
    ReviewQueue { width: 40; height: 1fr; }
    """

    @dataclass
    class Chosen(Message):
        """A row was chosen with the mouse, enter or the cursor keys."""

        position: int

    shown: int | None = None
    """The position whose item the screen shows."""

    def on_mount(self) -> None:
        """Columns."""
        self.cursor_type = "row"
        self.zebra_stripes = True
        self.add_columns("task", "impl", "label", "with")

    def show(self, rows: list[tuple[int, Row]], current: int) -> None:
        """``rows`` are (position, cells); the row of ``current`` gets the cursor."""
        self.clear()
        for position, cells in rows:
            self.add_row(*cells, key=str(position))
        keys = [p for p, _ in rows]
        self.shown = current
        if current in keys:
            self.move_cursor(row=keys.index(current), animate=False)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Tell the screen which item was chosen."""
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.Chosen(int(event.row_key.value)))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The cursor moved onto a row: show its item (rows highlighted while ``show`` rebuilds are stale)."""
        event.stop()
        if event.cursor_row != self.cursor_row or event.row_key.value is None:
            return
        position = int(event.row_key.value)
        if position != self.shown:
            self.shown = position
            self.post_message(self.Chosen(position))
