"""Each cell of the paper's Table 2 and Table 3 beside the report's own, and a cause for every difference.

A run maps to a row of the paper by ``paper_figures.paper_row``: official imports by their agent type and model
folder, runs made here by their source, model and input setting (``full`` runs to Table 2, the others to Table 3).
A cell agrees when the report's percentage, rounded as the paper prints it, is the paper's. A difference is given
the first cause that the data show:

- no data: the run holds nothing for the column (for an import: the official results publish nothing for it);
- another row: the run's three judge or human cells are exactly another row of the paper (and, when that row's
  run is in the report, its cells are this row's: the two rows look swapped);
- a moved count: within the judge's or the humans' three cells, the paper's counts are the run's with some moved
  from one category to another;
- the count: otherwise the run's own count (for an import, the count in its results file) set beside the count
  of the paper's percentage.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lmrbench.benchmark.report.paper_figures import (
    N_PER_RUN,
    PAPER_TASKS,
    SHORT_CITATION,
    TABLE2,
    TABLE3,
    PaperRow,
    on_paper_taskset,
    paper_row,
    taskset_digest,
)
from lmrbench.benchmark.report.scoreboard import Report, RunRow

COLUMNS = {
    "unit": "unit-test accuracy", "cc": "judge CC", "lc": "judge LC", "li": "judge LI",
    "h_cc": "human CC", "h_lc": "human LC", "h_li": "human LI",
}  # fmt: skip
HEADERS = {"unit": "Unit", "cc": "Judge CC", "lc": "Judge LC", "li": "Judge LI",
           "h_cc": "Human CC", "h_lc": "Human LC", "h_li": "Human LI"}  # fmt: skip
GROUPS = (("unit",), ("cc", "lc", "li"), ("h_cc", "h_lc", "h_li"))
_WHAT = {"unit": "unit-test results", "cc": "judge verdicts", "h_cc": "human labels"}
_OFFICIAL_WHAT = {"unit": "no results.txt", "cc": "no judge analyses", "h_cc": "no human labels"}


@dataclass
class CellCheck:
    """One published cell beside the run's own."""

    table: str
    """``Table 2`` or ``Table 3``."""
    run: str
    row: PaperRow
    column: str
    paper: float
    count: tuple[int, int] | None
    """The run's (k, n) for the cell; None when it holds no data for it."""
    official: str = ""
    """For an import: the folder the official results hold the run under (``OpenHands/gpt4.1``)."""
    unit_file: str = ""
    """For an import with unit-test outcomes: its results.txt, relative to the results folder."""
    cause: str = ""

    @property
    def here(self) -> float | None:
        """The run's percentage, or None."""
        return 100.0 * self.count[0] / self.count[1] if self.count and self.count[1] else None

    @property
    def agrees(self) -> bool:
        """True when the run's percentage, to one decimal, is the paper's."""
        return self.here is not None and round(self.here, 1) == round(self.paper, 1)


def _count(row: RunRow, column: str) -> tuple[int, int] | None:
    if column == "unit":
        scored = row.passed + row.failed
        return (row.passed, scored) if scored else None
    if column in ("cc", "lc", "li"):
        return (getattr(row, column), row.judged) if row.judge and row.judged else None
    return (getattr(row, column), row.labelled) if row.labelled else None


def paper_count(percent: float, n: int) -> int | None:
    """The k of n that the paper's percentage (one decimal) stands for, or None when no k gives it."""
    k = round(percent * n / 100)
    return k if round(100.0 * k / n, 1) == round(percent, 1) else None


def against_paper(report: Report) -> list[CellCheck]:
    """Every published cell of Table 2 or 3 whose row a run of the report maps to, with its cause if it differs."""
    checks: list[CellCheck] = []
    seen: set[tuple[str, str]] = set()
    judges: dict[str, int] = {}
    for r in report.rows:
        judges[r.run] = judges.get(r.run, 0) + 1
    for r in report.rows:
        manifest = report.manifests[r.run]
        row = paper_row(manifest)
        if row is None or not on_paper_taskset(manifest):
            continue
        table, published = ("Table 2", TABLE2) if row.context == "full" else ("Table 3", TABLE3)
        if row not in published:
            continue
        src = manifest.official
        folder = f"{'BaseAgent' if src.agent_type == 'no_agent' else 'OpenHands'}/{src.model_name}" if src else ""
        for column, value in published[row].items():
            judge_cell = column in ("cc", "lc", "li")
            label = f"{r.run} [{r.judge}]" if judges[r.run] > 1 else r.run
            if (label if judge_cell else r.run, column) in seen:
                continue
            seen.add((label if judge_cell else r.run, column))
            check = CellCheck(table, label, row, column, value, _count(r, column), folder,
                              src.unit_results if src else "")  # fmt: skip
            checks.append(check)
    _explain(checks)
    return checks


def _explain(checks: list[CellCheck]) -> None:
    by_run: dict[str, dict[str, CellCheck]] = {}
    for c in checks:
        by_run.setdefault(c.run, {})[c.column] = c
    for run, cells in by_run.items():
        for group in GROUPS:
            group_cells = [cells[g] for g in group if g in cells]
            wrong = [c for c in group_cells if not c.agrees]
            if not wrong:
                continue
            cause = _missing(group_cells[0]) if group_cells[0].count is None else None
            if cause is None and len(group) > 1:
                cause = _other_row(run, group_cells, by_run) or _moved(group_cells)
            for c in wrong:
                c.cause = cause or _own_count(c)


def _missing(c: CellCheck) -> str:
    key = "cc" if c.column in ("cc", "lc", "li") else "h_cc" if c.column.startswith("h_") else "unit"
    if c.official:
        return f"no data published: the official results hold {_OFFICIAL_WHAT[key]} for {c.official}"
    return f"no data: the run holds no {_WHAT[key]}"


def _values(cells: Iterable[CellCheck]) -> tuple[float, ...]:
    return tuple(round(c.here, 1) if c.here is not None else -1.0 for c in cells)


def _other_row(run: str, cells: list[CellCheck], by_run: dict[str, dict[str, CellCheck]]) -> str | None:
    """The other paper row whose cells of this group are exactly the run's, and whether it looks swapped."""
    table = TABLE2 if cells[0].table == "Table 2" else TABLE3
    columns = [c.column for c in cells]
    mine = _values(cells)
    for other, values in table.items():
        if other == cells[0].row or tuple(round(values[col], 1) for col in columns) != mine:
            continue
        what = f"{COLUMNS[columns[0]].split()[0]} {'/'.join(HEADERS[c].split()[-1] for c in columns)}"
        swapped = [
            name for name, theirs in by_run.items()
            if name != run and all(col in theirs for col in columns) and theirs[columns[0]].row == other
            and _values(theirs[col] for col in columns) == tuple(round(c.paper, 1) for c in cells)
        ]  # fmt: skip
        line = f"{_whose(cells[0])} {what} are exactly the paper's {other.name} row"
        if swapped:
            return (
                f"{line}, and {swapped[0]}'s are this row's: "
                f"the two rows look swapped between the paper and the files"
            )
        return line
    return None


def _moved(cells: list[CellCheck]) -> str | None:
    """'the paper's counts are the run's with k moved from X to Y' when the difference is such a move."""
    if any(c.count is None for c in cells):
        return None
    n = cells[0].count[1]  # type: ignore[index]
    paper = [paper_count(c.paper, n) for c in cells]
    if None in paper:
        return None
    delta = {c.column: p - c.count[0] for c, p in zip(cells, paper, strict=True) if p != c.count[0]}  # type: ignore[operator,index]
    if len(delta) != 2 or sum(delta.values()) != 0:
        return None
    src, dst = sorted(delta, key=lambda col: delta[col])
    counts = ", ".join(f"{HEADERS[c.column].split()[-1]} {c.count[0]}" for c in cells)  # type: ignore[index]
    return (
        f"{_whose(cells[0])} own count ({counts} of {n}): the paper's counts are these with {delta[dst]} moved from "
        f"{HEADERS[src].split()[-1]} to {HEADERS[dst].split()[-1]}"
    )


def _whose(c: CellCheck) -> str:
    return "the files'" if c.official else "the run's"


def _own_count(c: CellCheck) -> str:
    assert c.count is not None
    k, n = c.count
    where = f"results.txt ({c.unit_file})" if c.column == "unit" and c.unit_file else "the run"
    pk = paper_count(c.paper, n)
    paper = f"{pk} of {n}" if pk is not None else f"no count of {n}"
    extra = f"; the paper's figures are of {N_PER_RUN}" if n != N_PER_RUN else ""
    return f"{_whose(c)} own count: {where} has {k} of {n}; the paper's {c.paper:.1f}% is {paper}{extra}"


def _cell(value: float | None, mark: str = "") -> str:
    return "-" if value is None else f"{value:.1f}{mark}"


def comparison_table(checks: list[CellCheck], table: str) -> tuple[list[str], list[list[str]]] | None:
    """One table's cells: a line per run (a differing cell marked ``*``) above the paper's row; None if none."""
    mine = [c for c in checks if c.table == table]
    if not mine:
        return None
    columns = list(dict.fromkeys(c.column for c in mine))
    runs: dict[str, dict[str, CellCheck]] = {}
    for c in mine:
        runs.setdefault(c.run, {})[c.column] = c
    rows: list[list[str]] = []
    for run, cells in runs.items():
        row = next(iter(cells.values())).row
        here = [_cell(cells[k].here, "" if cells[k].agrees else "*") if k in cells else "" for k in columns]
        rows.append([run, *here])
        rows.append([f"  paper: {row.name}", *(_cell(cells[k].paper) if k in cells else "" for k in columns)])
    return ["Run", *(HEADERS[k] for k in columns)], rows


def difference_lines(checks: list[CellCheck]) -> list[str]:
    """One line per differing cell: the paper's figure, the run's, and the cause."""
    lines = []
    for c in checks:
        if c.agrees:
            continue
        here = "no data" if c.count is None else f"{c.count[0]}/{c.count[1]} = {c.here:.1f}%"
        lines.append(f"{c.table}, {c.run}, {COLUMNS[c.column]}: paper {c.paper:.1f}%, here {here}. Cause: {c.cause}")
    return lines


def summary_line(checks: list[CellCheck], table: str) -> str:
    """'Table 2 (Yan et al. 2025): 42 cells of 6 runs: 31 agree, 9 differ, 2 have no data'."""
    mine = [c for c in checks if c.table == table]
    missing = sum(c.count is None for c in mine)
    agree = sum(c.agrees for c in mine)
    runs = len({c.run.split(" [")[0] for c in mine})
    return (
        f"{table} ({SHORT_CITATION}): {len(mine)} cells of {runs} runs: {agree} agree, "
        f"{len(mine) - agree - missing} differ, {missing} have no data"
    )


def off_paper_line(report: Report) -> str | None:
    """One line naming the runs that map to a row of the paper but are of another task set (so are not set
    beside the paper's figures); None when there are none."""
    off = [label for label, m in report.manifests.items() if paper_row(m) is not None and not on_paper_taskset(m)]
    if not off:
        return None
    sizes = sorted({len(report.manifests[label].tasks) for label in off})
    digest = taskset_digest([t.name for t in report.manifests[off[0]].tasks])[:12]
    return (f"not compared with the paper's tables: {', '.join(off)} cover{'s' if len(off) == 1 else ''} "
            f"{'/'.join(map(str, sizes))} tasks, not the paper's {len(PAPER_TASKS)} (task set {digest}, the "
            f"paper's {taskset_digest(PAPER_TASKS)[:12]})")
