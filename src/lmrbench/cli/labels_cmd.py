"""``lmrbench label assign | import-official | export-official | agreement | binary``: human-evaluation labels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lmrbench.cli.grammar import LmrGroup
from lmrbench.cli.output import Format, OldJsonFile, check_format, emit, result_format
from lmrbench.cli.tables import print_table

out_console = Console()
err_console = Console(stderr=True)

labels_app = typer.Typer(
    cls=LmrGroup,
    help="Human-evaluation labels: assign, import/export the official files, agreement, the binary table."
)
Runs = Annotated[list[Path], typer.Argument(help="Run folders.")]
JudgeOpt = Annotated[str | None, typer.Option("--judge", help="The judge folder to use when a run has several.")]


@labels_app.command("assign")
def assign_cmd(
    runs: Runs,
    annotators: Annotated[str, typer.Option("--annotators", help="Comma-separated names, e.g. a,b,c.")],
    overlap: Annotated[float, typer.Option("--overlap", help="Share of items labelled by two annotators.")] = 0.25,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draw: same seed, same queues.")] = 0,
    fmt: Format = "text",
) -> None:
    """Write each annotator's queue (RUN/labels/<annotator>/queue.json), a share of items given to two people."""
    from lmrbench.benchmark.labels.assign import assign, write_assignment

    check_format(fmt)
    result = assign(runs, annotators.split(","), overlap=overlap, seed=seed)
    write_assignment(result)
    table = Table()
    table.add_column("Annotator")
    table.add_column("Items", justify="right")
    table.add_column("Shared", justify="right")
    shared: dict[str, int] = {}
    for per_run in result.queues.values():
        for name, queue in per_run.items():
            shared[name] = shared.get(name, 0) + sum(1 for i in queue.items if i.shared)
    load = result.load()
    if fmt == "json":
        emit(fmt, {"items": result.items, "shared": result.shared, "seed": seed,
                   "annotators": [{"name": k, "items": n, "shared": shared.get(k, 0)} for k, n in load.items()]})
        return
    for name, n in load.items():
        table.add_row(name, str(n), str(shared.get(name, 0)))
    print_table(out_console, table)
    out_console.print(
        f"{result.items} items, {result.shared} labelled twice (seed {seed}); queues written to "
        "RUN/labels/<annotator>/queue.json",
        highlight=False,
    )


@labels_app.command("import-official")
def import_cmd(
    results: Annotated[
        Path,
        typer.Argument(
            help="The official results folder (human_evaluation/, llm_as_a_judge_evaluation/, unit_test_evaluation/)."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Folder to write one run folder per agent type and model.")],
    bench: Annotated[Path | None, typer.Option("--bench", help="The task set (names tasks and indexes).")] = None,
    judge: Annotated[str, typer.Option("--judge-name", help="Folder name for the imported verdicts.")] = "official",
) -> None:
    """Import the official results layout (the input files are never modified)."""
    from lmrbench.benchmark.labels.official import import_official

    summary = import_official(results, out, bench=bench, judge=judge)
    for warning in summary.warnings:
        err_console.print(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False, soft_wrap=True)
    for line in summary.skipped_tasks:
        err_console.print(f"[yellow]skipped task:[/yellow] {escape(line)}", highlight=False, soft_wrap=True)
    for line in summary.no_verdict:
        err_console.print(f"[yellow]no verdict:[/yellow] {escape(line)}", highlight=False, soft_wrap=True)
    for line in summary.not_imported:
        err_console.print(f"[yellow]not imported:[/yellow] {escape(line)}", highlight=False, soft_wrap=True)
    out_console.print(
        f"imported {summary.verdicts} judge analyses, {summary.labels} labels of {len(summary.annotators)} "
        f"annotators ({', '.join(summary.annotators) or 'none'}) and {summary.unit_results} unit-test outcomes",
        highlight=False,
        markup=False,
    )
    for label, path in summary.runs.items():
        out_console.print(f"wrote {path}  ({label})", highlight=False, markup=False)


@labels_app.command("export-official")
def export_cmd(
    runs: Runs,
    out: Annotated[Path, typer.Option("--out", help="Folder to write human_evaluation/ and the analyses into.")],
    judge: JudgeOpt = None,
) -> None:
    """Write the runs' labels and verdicts in the official results layout."""
    from lmrbench.benchmark.labels.official import export_official

    summary = export_official(runs, out, judge=judge)
    out_console.print(
        f"wrote {summary.records} label records in {len(summary.human_files)} files and "
        f"{summary.analyses} judge analyses and {len(summary.unit_files)} results.txt under {out}",
        highlight=False,
    )


@labels_app.command("agreement")
def agreement_cmd(
    runs: Runs,
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder for agreement.md/.csv/.json (default: the first run).")
    ] = None,
    fmt: Format = "text",
    json_file: OldJsonFile = None,
    judge: JudgeOpt = None,
) -> None:
    """Human vs judge vs unit tests, and between annotators; per model and per category."""
    with result_format(fmt, out_console):
        _agreement(runs, out, fmt, json_file, judge)


def _agreement(runs: list[Path], out: Path | None, fmt: str, json_file: Path | None, judge: str | None) -> None:
    import json

    from lmrbench.benchmark.labels.agreement import agreement
    from lmrbench.benchmark.labels.render import HEADERS, overall_rows, pair_rows, render_json, write_agreement

    report = agreement(runs, judge=judge)
    table = Table(title=f"Agreement: {report.items} items, {report.labels} labels")
    for h in HEADERS:
        table.add_column(h, justify="left" if h == "Comparison" else "right")
    for row in overall_rows(report) + pair_rows(report):
        table.add_row(*row)
    print_table(out_console, table)
    alpha = report.inter_annotator.krippendorff_alpha
    out_console.print(
        f"between annotators: {report.inter_annotator.items} items with two or more labels, Krippendorff's alpha "
        f"(ordinal) {'-' if alpha is None else f'{alpha:.3f}'}",
        highlight=False,
    )
    out_console.print(f"method: {report.method}", highlight=False)
    for path in write_agreement(report, out or runs[0]):
        out_console.print(f"wrote {path}", highlight=False)
    emit(fmt, json.loads(render_json(report)), json_file, "label agreement")


@labels_app.command("binary")
def binary_cmd(
    runs: Runs,
    fmt: Format = "text",
    json_file: OldJsonFile = None,
) -> None:
    """Human labels collapsed to Completely Correct or not, per run, beside the paper's Appendix I table."""
    with result_format(fmt, out_console):
        _binary(runs, fmt, json_file)


def _binary(runs: list[Path], fmt: str, json_file: Path | None) -> None:
    from rich.text import Text

    from lmrbench.benchmark.report.binary import HEADERS, binary_rows, binary_table
    from lmrbench.benchmark.report.paper_figures import CITATION
    from lmrbench.benchmark.report.scoreboard import build_report

    rows = binary_rows(build_report(runs))
    table = Table(title="Completely Correct or not, by human label (Appendix I, %; * differs)")
    for k, h in enumerate(HEADERS):
        table.add_column(h, justify="left" if k == 0 else "right")
    for row in binary_table(rows):
        table.add_row(*(Text(cell) for cell in row))
    print_table(out_console, table)
    if any(b.paper is not None for b in rows):
        out_console.print(f"the paper: {CITATION}, Appendix I (Table 6)", highlight=False, markup=False,
                          soft_wrap=True)  # fmt: skip
    for b in rows:
        if b.paper is not None and not b.agrees:
            out_console.print(f"differs: {b.run} ({b.paper_row}): {b.cause}", highlight=False, markup=False,
                              soft_wrap=True)  # fmt: skip
    emit(fmt, {"rows": [b.as_dict() for b in rows], "paper": CITATION}, json_file, "label binary")


def register(app: typer.Typer) -> None:
    """Attach to the root app."""
    app.add_typer(labels_app, name="label")
