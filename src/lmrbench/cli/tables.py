"""Print a rich table whole at any width: as it is when it fits, else folded so that no header is cut.

Rich squeezes a table wider than the console by cutting words to ``Un…``; in an 80-column pipe that made every
header of ``report`` unreadable. A table whose narrowest form (each column as wide as its longest word) does not
fit is printed transposed (a row per column, a column per row) when that fits, else stacked: one block per row,
``header: value`` per line.
"""

from __future__ import annotations

from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text


def print_table(console: Console, table: Table) -> None:
    """Print ``table`` on ``console`` as it is, transposed or stacked: whichever first fits the width uncut."""
    if _fits(console, table):
        console.print(_sized(console, table))
        return
    turned = transposed(console, table)
    if turned is not None and _fits(console, turned):
        console.print(_sized(console, turned))
        return
    for line in stacked(console, table):
        console.print(line, highlight=False, soft_wrap=True)


def _fits(console: Console, table: Table) -> bool:
    """True when rich can draw the table at the console's width without cutting a word."""
    return table.__rich_measure__(console, console.options.update_width(1 << 20)).minimum <= console.width


def _sized(console: Console, table: Table) -> Table:
    """``table`` with each column's width fixed where rich would cut: rich narrows the widest columns first, past
    their longest word; here each column gets its longest word, and the room left goes to the columns that can
    use it, in proportion to what they lack."""
    whole = table.__rich_measure__(console, console.options.update_width(1 << 20)).maximum
    if whole <= console.width:
        return table
    spans: list[tuple[int, int]] = []
    for column in table.columns:
        cells = [column.header, *column.cells]
        low = max(Measurement.get(console, console.options, c).minimum for c in cells)
        high = max(Measurement.get(console, console.options, c).maximum for c in cells)
        spans.append((low, max(low, high)))
    room = console.width - (whole - sum(high for _, high in spans))
    widths = [low for low, _ in spans]
    lack = [high - low for low, high in spans]
    spare, wanted = room - sum(widths), sum(lack)
    if spare > 0 and wanted > 0:
        widths = [w + (spare * gap) // wanted for w, gap in zip(widths, lack, strict=True)]
    for column, width in zip(table.columns, widths, strict=True):
        column.width = width
    return table


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


def print_rows(
    console: Console, title: str, headers: list[str], rows: list[list[str]], left: int = 1, edge: bool = True
) -> None:
    """Print text rows under ``headers`` with print_table: the first ``left`` columns flush left, the others
    right; cells are plain text (a ``[name]`` in a cell is not markup). ``edge=False`` leaves out the outer
    border (two columns more for the cells)."""
    table = Table(title=title, show_edge=edge)
    for k, header in enumerate(headers):
        table.add_column(header, justify="left" if k < left else "right")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    print_table(console, table)
