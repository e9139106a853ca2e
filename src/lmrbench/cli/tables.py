"""Print a rich table whole at any width: as it is when it fits, else folded so that no header is cut.

Rich squeezes a table wider than the console by cutting words to ``Un…``; in an 80-column pipe that made every
header of ``report`` unreadable. A table whose narrowest form (each column as wide as its longest word) does not
fit is printed transposed (a row per column, a column per row) when that fits, else stacked: one block per row,
``header: value`` per line.
"""

from __future__ import annotations

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text


def print_table(console: Console, table: Table) -> None:
    """Print ``table`` on ``console`` as it is, transposed or stacked: whichever first fits the width uncut."""
    if _fits(console, table):
        console.print(table)
        return
    turned = transposed(console, table)
    if turned is not None and _fits(console, turned):
        console.print(turned)
        return
    for line in stacked(console, table):
        console.print(line, highlight=False, soft_wrap=True)


def _fits(console: Console, table: Table) -> bool:
    """True when rich can draw the table at the console's width without cutting a word."""
    return table.__rich_measure__(console, console.options.update_width(1 << 20)).minimum <= console.width


def _plain(console: Console, cell: RenderableType) -> str:
    if isinstance(cell, Text):
        return cell.plain
    if isinstance(cell, str):
        return console.render_str(cell).plain
    return str(cell)


def _grid(console: Console, table: Table) -> tuple[list[str], list[list[str]]]:
    """(headers, rows) as plain text."""
    headers = [_plain(console, c.header) for c in table.columns]
    columns = [[_plain(console, cell) for cell in c.cells] for c in table.columns]
    rows = [list(r) for r in zip(*columns, strict=True)] if columns else []
    return headers, rows


def transposed(console: Console, table: Table) -> Table | None:
    """The table turned: its first column's values head the columns, its other headers head the rows (None for a
    table without rows, or whose first column repeats a value)."""
    headers, rows = _grid(console, table)
    if not rows or len({row[0] for row in rows}) < len(rows):
        return None
    out = Table(title=table.title, caption=table.caption)
    out.add_column(headers[0], justify="left")
    for row in rows:
        out.add_column(row[0], justify="right")
    for k, header in enumerate(headers[1:], start=1):
        out.add_row(header, *(row[k] for row in rows))
    return out


def stacked(console: Console, table: Table) -> list[Text]:
    """One block per row: its first cell, then ``header: value`` for each other cell (empty cells left out)."""
    headers, rows = _grid(console, table)
    lines: list[Text] = []
    if table.title:
        lines.append(Text(_plain(console, table.title), style="bold"))
    for row in rows:
        lines.append(Text.assemble((f"{headers[0]}: ", "bold"), row[0]))
        lines += [Text(f"  {h}: {v}") for h, v in zip(headers[1:], row[1:], strict=True) if v.strip()]
    if table.caption:
        lines.append(Text(_plain(console, table.caption), style="dim"))
    return lines
