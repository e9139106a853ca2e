"""``lmrbench analyze structure | regression | familiarity``: the paper's analyses of a task set and its runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from lmrbench.cli.grammar import LmrGroup
from lmrbench.cli.limit_options import TaskFilter
from lmrbench.cli.output import Format, OldJsonFile, check_format, emit, result_format
from lmrbench.cli.tables import print_rows, print_table
from lmrbench.errors import LmrError, UsageError

if TYPE_CHECKING:
    from lmrbench.benchmark.analysis.familiarity import FamiliarityReport
    from lmrbench.benchmark.analysis.regression import Contribution
    from lmrbench.benchmark.analysis.structure import GoalLines
    from lmrbench.core.taskset import Task

out_console = Console()
err_console = Console(stderr=True)

analyze_app = typer.Typer(
    cls=LmrGroup,
    help="Repository structure and the regression (the paper's Table 5); familiarity (lmrbench's own).",
    no_args_is_help=True,
)

Bench = Annotated[Path, typer.Argument(help="The task set folder (or one task folder).")]
GoalLinesOpt = Annotated[
    str,
    typer.Option(
        "--goal-lines",
        help="file-sloc: source lines of code of the goal file (the paper's); function-lines: the goal "
        "functions' line span.",
    ),
]


def _goal_lines(value: str) -> GoalLines:
    from lmrbench.benchmark.analysis.structure import GOAL_LINES

    if value not in GOAL_LINES:
        raise UsageError(f"unknown --goal-lines {value!r}; use {' or '.join(GOAL_LINES)}")
    return value  # type: ignore[return-value]


def _tasks(bench: Path, only: list[str] | None) -> list[Task]:
    from lmrbench.cli.run_cmd import _tasks as load

    return load(bench, only)


@analyze_app.command("structure")
def structure_cmd(
    bench: Bench, fmt: Format = "text", json_out: OldJsonFile = None, only: TaskFilter = None,
    goal_lines: GoalLinesOpt = "file-sloc",
) -> None:
    """Per implementation: average directory depth, branch factor, imbalance, goal lines (the paper's Table 5)."""
    with result_format(fmt, out_console):
        _structure(bench, fmt, json_out, only, goal_lines)


def _structure(bench: Path, fmt: str, json_out: Path | None, only: list[str] | None, goal_lines: str) -> None:
    from lmrbench.benchmark.analysis.structure import structure

    how = _goal_lines(goal_lines)
    rows, problems = structure(_tasks(bench, only), how)
    for problem in problems:
        err_console.print(f"[yellow]skipped:[/yellow] {problem}", highlight=False)
    if not rows:
        raise LmrError("no implementation could be measured", bench)
    table = Table(title="Repository structure per implementation (all fields with --format json)")
    table.add_column("Task", no_wrap=True)
    for h in ("Impl", "Depth", "Branch", "Imbal.", "Lines", "Files"):
        table.add_column(h, justify="right", no_wrap=True, min_width=len(h))
    for r in rows:
        table.add_row(r.task, str(r.impl), f"{r.depth:.2f}", f"{r.branch_factor:.2f}", f"{r.imbalance:.2f}",
                      str(r.goal_lines), str(r.files))  # fmt: skip
    print_table(out_console, table)
    out_console.print(f"goal lines: {how}", highlight=False)
    emit(fmt, {"bench": str(bench), "goal_lines": how, "rows": [r.as_dict() for r in rows]}, json_out,
         "analyze structure")


def _bench_of(runs: list[Path], bench: Path | None) -> Path:
    """--bench, or the task set every run was made from (as run.json records it)."""
    if bench is not None:
        return bench
    from lmrbench.benchmark.pipeline.rundir import RunDir

    recorded = {RunDir(r).require_manifest().bench for r in runs}
    if len(recorded) != 1 or not next(iter(recorded)) or not Path(next(iter(recorded))).is_dir():
        shown = ", ".join(sorted(b or "(none)" for b in recorded))
        raise LmrError(f"the runs do not name one task set that exists here ({shown}); pass --bench", runs[0])
    return Path(next(iter(recorded)))


@analyze_app.command("regression")
def regression_cmd(
    runs: Annotated[list[Path], typer.Argument(help="Run folders (one model each; several give model indicators).")],
    bench: Annotated[
        Path | None, typer.Option("--bench", help="The task set (default: the one run.json names).")
    ] = None,
    outcome: Annotated[
        str, typer.Option("--outcome", help="tests: all unit tests pass; human: labelled Completely Correct.")
    ] = "tests",
    fmt: Format = "text",
    json_out: OldJsonFile = None,
    goal_lines: GoalLinesOpt = "file-sloc",
    reference: Annotated[
        str | None,
        typer.Option("--reference", help="The reference model (a run's model, or GPT-4o, GPT-4.1, o4-mini); "
                     "default: the run standing for GPT-4.1, as in the paper, else the first run."),
    ] = None,
    scale: Annotated[
        str, typer.Option("--scale", help="standardized: per standard deviation; raw: per unit of each predictor.")
    ] = "standardized",
    drop_empty: Annotated[
        bool, typer.Option("--drop-empty", help="Fit without runs that give no outcome (named) instead of refusing.")
    ] = False,
) -> None:
    """Logistic regression of success on structure predictors plus model indicators, beside the paper's Table 5."""
    with result_format(fmt, out_console):
        _regression(runs, bench, outcome, fmt, json_out, goal_lines, reference, scale, drop_empty)


def _regression(runs: list[Path], bench: Path | None, outcome: str, fmt: str, json_out: Path | None,  # noqa: PLR0913
                goal_lines: str, reference: str | None, scale: str, drop_empty: bool) -> None:
    from lmrbench.benchmark.analysis.paper_regression import (
        Setup,
        beside_paper,
        indicator_names,
        reasons,
        row_evidence,
    )
    from lmrbench.benchmark.analysis.regression import SCALES, fit_logit, gather, table
    from lmrbench.benchmark.analysis.structure import PREDICTORS, structure
    from lmrbench.benchmark.report.paper_figures import CITATION

    if outcome not in ("tests", "human"):
        raise UsageError(f"unknown --outcome {outcome!r}; use tests or human")
    if scale not in SCALES:
        raise UsageError(f"unknown --scale {scale!r}; use {' or '.join(SCALES)}")
    how = _goal_lines(goal_lines)
    rows, problems = structure(_tasks(_bench_of(runs, bench), None), how)
    for problem in problems:
        err_console.print(f"[yellow]skipped:[/yellow] {escape(str(problem))}", highlight=False)
    obs, parts = gather(runs, rows, outcome)  # type: ignore[arg-type]
    notes = _contribution_notes(parts, outcome, drop_empty)
    kept = [p for p in parts if p.joined]
    ref = _reference(kept, reference)
    result = fit_logit(obs, PREDICTORS, outcome=outcome, reference=ref, scale=scale)  # type: ignore[arg-type]
    headers, body = table(result)
    title = (f"Logit of success ({outcome}), n = {result.n}, successes = {result.successes}, "
             f"pseudo R2 = {result.pseudo_r2:.3f}")  # fmt: skip
    print_rows(out_console, title, headers, body)
    out_console.print(f"predictors {scale}; reference model: {result.reference_model}", highlight=False)
    for note in notes + result.notes:
        out_console.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)
    side = beside_paper(result, kept)
    print_rows(out_console, "Beside the paper's Table 5 (reference GPT-4.1)", *side)
    out_console.print(f"the paper: {CITATION}, Appendix G", highlight=False, markup=False, soft_wrap=True)
    for line in indicator_names(result, kept):
        out_console.print(line, highlight=False, markup=False, soft_wrap=True)
    setup = Setup(outcome, how, scale, tuple(sorted({t for p in kept for t in p.unmeasured})))
    evidence, why = row_evidence(result, kept), reasons(result, kept, setup)
    for line in evidence:
        out_console.print(f"rows: {line}", highlight=False, markup=False, soft_wrap=True)
    for line in why:
        out_console.print(f"may differ: {line}", highlight=False, markup=False, soft_wrap=True)
    emit(fmt, {"runs": [str(r) for r in runs], **result.as_dict(), "notes": notes + result.notes,
               "paper": {"citation": CITATION, "beside": side[1], "rows": evidence, "reasons": why}}, json_out,
         "analyze regression")


def _contribution_notes(parts: list[Contribution], outcome: str, drop_empty: bool) -> list[str]:
    """A note per run that lost outcomes; LmrError naming the runs that give no outcome, unless dropped."""
    what = "unit-test result" if outcome == "tests" else "human label"
    empty = [p for p in parts if not p.joined]
    why = {p.path: f"holds no {what}" if not p.outcomes else f"its {p.outcomes} outcomes are of tasks with no "
           "structure row" for p in empty}  # fmt: skip
    if empty and not drop_empty:
        named = "; ".join(f"{p.path} ({p.model}) {why[p.path]}" for p in empty)
        raise LmrError(f"{len(empty)} run(s) give the fit no outcome: {named}. Leave them out, or pass --drop-empty "
                       "to fit without them")  # fmt: skip
    models = len({p.model for p in parts if p.joined})
    lost = "its model indicator" if models > 1 else "this model (one model is left: no model indicators)"
    notes = [f"left out {p.path} ({p.model}): it {why[p.path]}; the fit lost {lost}" for p in empty]
    notes += [
        f"{p.path}: {len(p.unmeasured)} of {p.outcomes} outcomes left out, of tasks with no structure row: "
        f"{', '.join(sorted(set(p.unmeasured)))}"
        for p in parts
        if p.joined and p.unmeasured
    ]
    return notes


def _reference(parts: list[Contribution], wanted: str | None) -> str | None:
    """The reference model: ``wanted`` (a run's model or a paper model), else the run standing for GPT-4.1."""
    if wanted is None:
        return next((p.model for p in parts if p.paper_model == "GPT-4.1"), None)
    for p in parts:
        if wanted in (p.model, p.paper_model):
            return p.model
    have = ", ".join(f"{p.model}" + (f" ({p.paper_model})" if p.paper_model else "") for p in parts)
    raise LmrError(f"--reference {wanted!r} is not a model of the runs ({have})")


@analyze_app.command("familiarity")
def familiarity_cmd(
    bench: Bench,
    model: Annotated[str, typer.Option("--model", envvar="LMRBENCH_MODEL", help="Model id sent to the endpoint.")],
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", envvar="LMRBENCH_BASE_URL",
                     help="OpenAI-compatible base URL with /completions, echo and logprobs."),
    ] = None,
    api_key_env: Annotated[
        str, typer.Option("--api-key-env", help="Environment variable holding the API key.")
    ] = "OPENAI_API_KEY",
    run: Annotated[
        list[Path] | None, typer.Option("--run", help="A run folder whose unit-test results to correlate with.")
    ] = None,
    timeout: Annotated[float, typer.Option("--request-timeout", help="Seconds to wait for one reply.")] = 300.0,
    retries: Annotated[int, typer.Option("--retries", help="Retries after connection errors, 429 and 5xx.")] = 4,
    fmt: Format = "text",
    json_out: OldJsonFile = None,
    only: TaskFilter = None,
) -> None:
    """Per task, the mean probability the model gives each token of the golden file; --run adds success."""
    check_format(fmt)
    from lmrbench.benchmark.analysis.familiarity import familiarity
    from lmrbench.cli.rich_progress import RichProgress
    from lmrbench.cli.run_cmd import _client

    tasks = _tasks(bench, only)
    client = _client(model, base_url, api_key_env, 0.0, 1, timeout, retries, 1, cache_dir=None,
                     cache=False)
    with client, RichProgress() as progress:
        report = familiarity(client, tasks, run or [], progress=progress)
    with result_format(fmt, out_console):
        _familiarity_text(model, report)
    emit(fmt, report.as_dict(), json_out, "analyze familiarity")


def _familiarity_text(model: str, report: FamiliarityReport) -> None:
    table = Table(title=f"Familiarity of {model} with the golden goal files")
    for h in ("Task", "Tokens", "Mean prob.", "Mean logprob", "Success", "Problem"):
        table.add_column(h, justify="left" if h in ("Task", "Problem") else "right")
    for r in report.tasks:
        table.add_row(
            r.task, str(r.tokens), "-" if r.mean_prob is None else f"{r.mean_prob:.4f}",
            "-" if r.mean_logprob is None else f"{r.mean_logprob:.4f}",
            "-" if r.success is None else f"{100 * r.success:.1f}%", Text(r.error),
        )  # fmt: skip
    print_table(out_console, table)
    c = report.correlation
    if c is not None:
        if c.note:
            out_console.print(f"correlation with success: {c.note}", highlight=False, soft_wrap=True)
        else:
            out_console.print(
                f"correlation with success over {c.n} tasks: Pearson r = {c.pearson:.3f} (p = {c.pearson_p:.3g}), "
                f"Spearman rho = {c.spearman:.3f} (p = {c.spearman_p:.3g})",
                highlight=False,
                soft_wrap=True,
            )


def register(app: typer.Typer) -> None:
    """Attach ``analyze`` to the root app."""
    app.add_typer(analyze_app, name="analyze")
