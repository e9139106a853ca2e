"""The paper's Table 2 beside the official result files: where the published number and its own data differ.

``PAPER_TABLE2`` holds the cells of the published table that have been checked against the paper's text, keyed
by the official results' agent type and model folder; a cell not listed is not compared. The files are what
``labels import-official`` reads; a note is written wherever the published percentage, to one decimal, is not
what the files give.
"""

from __future__ import annotations

from dataclasses import dataclass

from lmrbench.benchmark.report.scoreboard import Report, RunRow

COLUMNS = {"unit": "unit-test accuracy", "cc": "judge CC", "lc": "judge LC", "li": "judge LI"}


@dataclass(frozen=True)
class PaperCell:
    """One published percentage."""

    agent_type: str
    model_name: str
    column: str
    """unit, cc, lc or li."""
    value: float


PAPER_TABLE2 = (
    PaperCell("no_agent", "gpt4.1", "unit", 42.9),
    PaperCell("openhands_agent", "gpt4o", "unit", 25.0),
    PaperCell("openhands_agent", "o4mini", "unit", 35.7),
    PaperCell("openhands_agent", "gpt4o", "cc", 7.1),
)


def _files(row: RunRow, column: str) -> tuple[float, str] | None:
    """The files' percentage for a column of a row, and how it was counted; None when the files have none."""
    if column == "unit":
        scored = row.passed + row.failed
        return (row.accuracy, f"{row.passed}/{scored}") if row.accuracy is not None else None
    if not row.judge or not row.judged:
        return None
    n = getattr(row, column)
    return 100.0 * n / row.judged, f"{n}/{row.judged}"


def against_paper(report: Report, cells: tuple[PaperCell, ...] = PAPER_TABLE2) -> tuple[list[str], list[str]]:
    """(cells that agree, notes on cells that differ) for the report's runs imported from the official files."""
    agree: list[str] = []
    differ: list[str] = []
    for row in report.rows:
        src = report.manifests[row.run].official
        if src is None:
            continue
        for cell in cells:
            if (cell.agent_type, cell.model_name) != (src.agent_type, src.model_name):
                continue
            if cell.column != "unit" and not row.judge:
                continue
            got = _files(row, cell.column)
            what = f"{row.run}: {COLUMNS[cell.column]}"
            if got is None:
                differ.append(f"{what}: the paper gives {cell.value:.1f}%; the files hold no data for it")
            elif round(got[0], 1) == round(cell.value, 1):
                agree.append(f"{what} {cell.value:.1f}% ({got[1]}) as in the paper")
            else:
                differ.append(f"{what}: the paper gives {cell.value:.1f}%; the files give {got[1]} = {got[0]:.1f}%")
    return list(dict.fromkeys(agree)), list(dict.fromkeys(differ))
