"""``lmrbench report``: the paper's tables for runs, the leaderboard, the per-sample table, figures."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from lmrbench.cli.output import Format, emit, result_format
from lmrbench.cli.run_cmd import err_console, out_console
from lmrbench.cli.tables import print_rows, print_table

if TYPE_CHECKING:
    from lmrbench.benchmark.report.scoreboard import Report


def report_cmd(
    runs: Annotated[list[Path], typer.Argument(help="Run folders, one row each.")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder for report.md/.csv/.json (default: the first run).")
    ] = None,
    judge_name: Annotated[
        str | None, typer.Option("--judge", help="Only this judge (its folder name).")
    ] = None,
    figures: Annotated[
        bool, typer.Option("--figures/--no-figures", help="Also write PNG and SVG figures (needs lmrbench\\[plots]).")
    ] = True,
    bench: Annotated[
        Path | None,
        typer.Option("--bench", help="The task set, for the success-vs-structure figure (default: run.json's)."),
    ] = None,
    fmt: Format = "text",
) -> None:
    """Print the paper's Table 2 for the runs and a per-category breakdown; write Markdown, CSV, JSON, figures."""
    import json

    folder = out or runs[0]
    with result_format(fmt, out_console):
        _report(runs, folder, judge_name, figures, bench)
    emit(fmt, json.loads((folder / "report.json").read_text(encoding="utf-8")) if fmt == "json" else None)


def _report(runs: list[Path], folder: Path, judge_name: str | None, figures: bool, bench: Path | None) -> None:
    from lmrbench.benchmark.report.files import BOARD_NOTE, write_report
    from lmrbench.benchmark.report.leaderboard import leaderboard_table
    from lmrbench.benchmark.report.results import build_results, run_folders, stage_table
    from lmrbench.benchmark.report.scoreboard import (
        HUMAN_HEADERS,
        SETTINGS_TITLE,
        TABLE_HEADERS,
        WEAKER_NOTE,
        build_report,
        category_table,
        human_table,
        settings_table,
        table_rows,
    )

    report = build_report(run_folders(runs), judge=judge_name)
    results = build_results(runs, judge=judge_name)
    print_rows(out_console, "Leaderboard", *leaderboard_table(results.board), left=2)
    out_console.print(BOARD_NOTE, highlight=False, markup=False)
    table = Table(title="Unit tests and LLM judge")
    for h in TABLE_HEADERS:
        table.add_column(h, justify="left" if h in ("Run", "Context", "Judge") else "right")
    for row in table_rows(report):
        table.add_row(*row)
    print_table(out_console, table)
    if any(r.weaker_passes for r in report.rows):
        out_console.print(WEAKER_NOTE, highlight=False, markup=False)
    if human_table(report):
        human = Table(title="Human evaluation and the judge (%)")
        for h in HUMAN_HEADERS:
            human.add_column(h, justify="left" if h in ("Run", "Judge") else "right")
        for row in human_table(report):
            human.add_row(*row)
        print_table(out_console, human)
    headers, rows = category_table(report)
    cats = Table(title="Unit-test accuracy by category (%)")
    for h in headers:
        cats.add_column(h, justify="left" if h == "Category" else "right")
    for row in rows:
        cats.add_row(*row)
    print_table(out_console, cats)
    print_rows(out_console, "Tasks by run (passing/scored)", *results.matrix)
    settings = settings_table(report)
    if settings is not None:
        print_rows(out_console, SETTINGS_TITLE, *settings, left=3 if "Judge" in settings[0] else 2)
    if results.stages:
        print_rows(out_console, "Tokens and cost by stage", *stage_table(results.stages), left=3)
    _against_paper(report)
    for path in write_report(report, folder, results):
        out_console.print(f"wrote {path}", highlight=False)
    if figures:
        _figures(report, runs, folder / "figures", bench)


def _against_paper(report: Report) -> None:
    """Each cell of the paper's Table 2 and 3 that a run maps to, beside the run's own; every difference with its
    cause."""
    from lmrbench.benchmark.report.paper_figures import CITATION
    from lmrbench.benchmark.report.paper_table import (
        against_paper,
        comparison_table,
        difference_lines,
        off_paper_line,
        summary_line,
    )

    checks = against_paper(report)
    if (line := off_paper_line(report)) is not None:
        out_console.print(line, highlight=False, markup=False, soft_wrap=True)
    for name in ("Table 2", "Table 3"):
        table = comparison_table(checks, name)
        if table is None:
            continue
        print_rows(out_console, f"Against the paper's {name} (%; * differs)", *table, edge=False)
        out_console.print(f"{summary_line(checks, name)}; the paper: {CITATION}", highlight=False, markup=False,
                          soft_wrap=True)  # fmt: skip
        for line in difference_lines([c for c in checks if c.table == name]):
            out_console.print(f"differs: {line}", highlight=False, markup=False, soft_wrap=True)


def _figures(report: Report, runs: list[Path], folder: Path, bench: Path | None) -> None:
    """Write the report's figures, or say in one line why not."""
    from rich.markup import escape

    from lmrbench.benchmark.analysis.figures import FiguresUnavailable, report_figures

    try:
        written, notes = report_figures(report, runs, folder, bench)
    except FiguresUnavailable as exc:
        err_console.print(f"[yellow]figures skipped:[/yellow] {escape(exc.problem)}", highlight=False)
        return
    for note in notes:
        err_console.print(f"[yellow]note:[/yellow] {escape(note)}", highlight=False, soft_wrap=True)
    for path in written:
        out_console.print(f"wrote {path}", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Attach the command to the root app."""
    app.command("report")(report_cmd)
