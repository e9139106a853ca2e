"""The paper's Appendix I table (Table 6): human labels collapsed to Completely Correct or not, per run, beside
the paper's figures.

A run's human label per candidate is the consensus of its annotators (as in the report's human columns); the
share is of the labelled candidates. The paper's Table 6 also repeats a figure its own Table 2 gives (the humans'
CC), so where the two disagree the cause names the paper's Table 2 figure and which of the two the run agrees with.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from lmrbench.benchmark.report.paper_figures import TABLE2, TABLE6, PaperRow, paper_row
from lmrbench.benchmark.report.scoreboard import Report


@dataclass
class BinaryRow:
    """One run: its labelled candidates, how many a human called Completely Correct, and the paper's figure."""

    run: str
    labelled: int
    cc: int
    paper_row: str = ""
    """The paper's row the run stands for (empty when none)."""
    paper: float | None = None
    """The paper's Completely Correct share (%), Table 6."""
    cause: str = ""
    """Why the run's share is not the paper's (empty when it is, or when there is no paper row)."""

    @property
    def share(self) -> float | None:
        """The Completely Correct share (%) of the labelled candidates."""
        return 100.0 * self.cc / self.labelled if self.labelled else None

    @property
    def agrees(self) -> bool:
        """True when the share, to two decimals as the paper prints it, is the paper's."""
        return self.share is not None and self.paper is not None and round(self.share, 2) == round(self.paper, 2)

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return {**asdict(self), "share": self.share, "agrees": self.agrees}


def binary_rows(report: Report) -> list[BinaryRow]:
    """A row per run of the report (its first judge row), with the paper's Table 6 figure where the run maps."""
    out: dict[str, BinaryRow] = {}
    for r in report.rows:
        if r.run in out:
            continue
        manifest = report.manifests[r.run]
        row = paper_row(manifest)
        b = BinaryRow(r.run, r.labelled, r.h_cc)
        if row is not None and row in TABLE6:
            b.paper_row, b.paper = row.name, TABLE6[row]
            b.cause = "" if b.agrees else _cause(b, row, manifest.official is not None)
        out[r.run] = b
    return list(out.values())


def _cause(b: BinaryRow, row: PaperRow, official: bool) -> str:
    if not b.labelled:
        return "no data published: the official results hold no human labels for it" if official else "no labels"
    table2 = TABLE2[row]["h_cc"]
    n = b.labelled
    k = round(b.paper * n / 100) if b.paper is not None else None
    paper_k = f"{k} of {n}" if k is not None and round(100.0 * k / n, 2) == b.paper else f"no count of {n}"
    if b.paper is not None and round(table2, 1) != round(b.paper, 1):
        mine = b.share or 0.0
        other = next((o for o, cells in TABLE2.items() if o.setting == row.setting and o != row
                      and round(cells["h_cc"], 1) == round(mine, 1)), None)  # fmt: skip
        agrees = (
            "the run agrees with Table 2" if round(mine, 1) == round(table2, 1)
            else f"the run agrees with Table 2's {other.name} row" if other
            else "the run agrees with neither"
        )  # fmt: skip
        return (
            f"the paper's Table 6 figure ({b.paper:.2f}% = {paper_k}) contradicts its own Table 2, which gives "
            f"{table2:.1f}% human CC for {row.name}; {agrees}"
        )
    whose = "the files'" if official else "the run's"
    return f"{whose} own count is {b.cc} of {n}; the paper's {b.paper:.2f}% is {paper_k}"


HEADERS = ["Run", "Labelled", "CC (%)", "Not CC (%)", "Paper CC (%)", "Paper not CC (%)"]


def binary_table(rows: list[BinaryRow]) -> list[list[str]]:
    """The rows as text, in HEADERS order (a share that differs from the paper's marked ``*``)."""

    def pct(value: float | None, mark: str = "") -> str:
        return "-" if value is None else f"{value:.2f}{mark}"

    return [
        [b.run, str(b.labelled), pct(b.share, "*" if b.paper is not None and not b.agrees else ""),
         pct(None if b.share is None else 100.0 - b.share), pct(b.paper),
         pct(None if b.paper is None else 100.0 - b.paper)]
        for b in rows
    ]  # fmt: skip
