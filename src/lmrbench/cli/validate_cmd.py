"""``lmrbench validate``: prove each task valid (golden passes, masked fails, mutants die)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lmrbench.benchmark.validation.weakness import DEFAULT_MIN_KILL_RATE
from lmrbench.cli.limit_options import (
    AddressOpt,
    Cpus,
    ExecutorOpt,
    Gpus,
    HfCache,
    Memory,
    SandboxOpt,
    TaskFilter,
    run_limits,
)
from lmrbench.cli.output import Format, check_format, emit
from lmrbench.cli.tables import print_table
from lmrbench.schemas.validation import NOT_RUN_LABELS, ValidationSummary, verdict_of


def validate(
    bench: Annotated[Path, typer.Argument(help="The task set folder (or one task folder).")],
    task: TaskFilter = None,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", envvar="LMRBENCH_JOBS",
        help="Test runs at once (default 1; with --executor ray, the cluster's CPUs).")] = None,
    repeat: Annotated[int, typer.Option("--repeat", "-k", help="Golden runs per implementation.")] = 3,
    sandbox: SandboxOpt = None,
    executor: ExecutorOpt = None,
    address: AddressOpt = None,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Rebuild every task's environment.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Ignore earlier results.")] = False,
    run_dir: Annotated[Path | None, typer.Option(
        "--out", help="The folder to write the results into (default <BENCH>/.lmrbench/validate).")] = None,
    timeout: Annotated[float, typer.Option("--test-timeout", help="Seconds one test run may take.")] = 600.0,
    max_mutants: Annotated[int, typer.Option(help="Most mutants run per implementation.")] = 12,
    min_kill_rate: Annotated[float, typer.Option(
        help="Valid but weak below this mutant kill rate (0-1; 0 never weak).")] = DEFAULT_MIN_KILL_RATE,
    memory: Memory = None,
    cpus: Cpus = None,
    gpus: Gpus = None,
    hf_cache: HfCache = None,
    fmt: Format = "text",
) -> None:
    """Run golden, masked and mutant variants of every implementation.

    Exit status: 0 every implementation valid; 1 one is invalid or weak, or a task cannot be loaded; 3 none is
    invalid, but one could not be run (its golden code never ran: see the not-run causes)."""
    from lmrbench.benchmark.execution.choose import executor_factory
    from lmrbench.benchmark.validation.plan import ValidateOptions
    from lmrbench.benchmark.validation.taskset import validate_taskset
    from lmrbench.cli.rich_progress import RichProgress
    from lmrbench.defaults import default_run_dir

    check_format(fmt)
    opts = ValidateOptions(repeat=repeat, timeout=timeout, max_mutants=max_mutants,
                           min_kill_rate=min_kill_rate, jobs=jobs or 1, force=force, rebuild=rebuild)
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 120)  # piped output: keep full task names and reasons
    limits = run_limits(memory, cpus, gpus, hf_cache)
    with RichProgress() as progress:
        make = executor_factory(executor, sandbox=sandbox, address=address, jobs=jobs,  # type: ignore[arg-type]
                                limits=limits, progress=progress)
        summary = validate_taskset(bench, only=task or None, sandbox=sandbox, options=opts,  # type: ignore[arg-type]
                                   run_dir=run_dir, progress=progress, executor=make)
    if fmt == "json":
        emit(fmt, summary.model_dump(mode="json"))
    else:
        print_summary(console, summary, min_kill_rate, survivor_diffs(run_dir or default_run_dir(bench), summary))
        console.print(f"results: {run_dir or default_run_dir(bench)}", highlight=False)
    code = exit_code(summary)
    if code:
        raise typer.Exit(code)


EXIT_INVALID = 1
"""``validate``'s exit status when an implementation is invalid or weak (or a task cannot be loaded)."""
EXIT_NOT_RUN = 3
"""``validate``'s exit status when nothing is invalid but an implementation could not be run."""


def exit_code(summary: ValidationSummary) -> int:
    """0 all valid; ``EXIT_INVALID`` when any is invalid or weak; ``EXIT_NOT_RUN`` when the rest could not run."""
    if summary.problems or any(r.not_run is None and (not r.valid or r.weak) for r in summary.rows):
        return EXIT_INVALID
    return EXIT_NOT_RUN if any(r.not_run is not None for r in summary.rows) else 0


def print_summary(console: Console, summary: ValidationSummary, min_kill_rate: float = DEFAULT_MIN_KILL_RATE,
                  diffs: dict[tuple[str, int], list[tuple[str, str]]] | None = None) -> None:
    """The table of results, the surviving mutants (with their diffs when given), the problems, the pass rate."""
    from lmrbench.benchmark.validation.weakness import kinds_text, verdict

    table = Table(title=escape(f"validate {summary.bench} ({summary.sandbox})"))
    cols = ("task", "impl", "golden passes", "masked fails", "mutants killed", "flaky", "tol margin", "evidence",
            "seconds", "valid")
    for col in cols:
        table.add_column(col, justify="right" if col not in ("task", "valid", "evidence") else "left")
    for r in summary.rows:
        killed = f"{r.mutants_killed}/{r.mutants_total}" if r.mutants_total else "-"
        secs = f"{r.seconds:.1f}" + ("*" if r.skipped else "")
        text = verdict(r.valid, r.weak, r.mutants_killed, r.mutants_total, min_kill_rate, r.weak_reasons)
        valid = (f"[red]no[/red]: {escape('; '.join(r.reasons))}" if not r.valid
                 else f"[yellow]{text}[/yellow]" if r.weak else f"[green]{text}[/green]")
        masked = "yes" if r.masked_failed else "no"
        golden = f"{r.golden_passes}/{r.repeat}"
        margin = margin_text(r.tolerance_margin)
        if (why := r.not_run) is not None:  # the golden code never ran: no golden or masked count to show
            golden = masked = killed = margin = "-"
            r = r.model_copy(update={"evidence": ""})
            valid = f"[magenta]not run[/magenta]: {escape(NOT_RUN_LABELS[why.cause])} (below)"
        table.add_row(escape(r.task), str(r.impl), golden, masked, killed, str(r.flaky), margin, r.evidence or "-",
                      secs, valid)
    print_table(console, table)
    for r in summary.rows:
        if r.kinds:
            console.print(f"mutants of {escape(r.task)}#{r.impl} killed by kind: {kinds_text(r.kinds)}"
                          + (f"; {len(r.equivalent)} equivalent on every recorded input" if r.equivalent else ""),
                          highlight=False)
        if r.weak and r.kill_rate is not None and r.kill_rate < min_kill_rate:
            console.print(f"[yellow]{r.task}#{r.impl} is valid but weak[/yellow]: its tests kill "
                          f"{r.mutants_killed}/{r.mutants_total} mutants ({r.kill_rate or 0:.0%}), below "
                          f"--min-kill-rate {min_kill_rate:.0%}", highlight=False)
        for reason in r.weak_reasons if r.valid else []:
            console.print(f"[yellow]{r.task}#{r.impl} is valid but weak[/yellow]: {escape(reason)}", highlight=False)
        if r.survivors:
            console.print(f"surviving mutants of {r.task}#{r.impl}:", highlight=False)
            for name, diff in (diffs or {}).get((r.task, r.impl)) or [(s, "") for s in r.survivors]:
                console.print(f"  {name}", highlight=False)
                for line in diff.splitlines():
                    console.print(f"      {line}", highlight=False, markup=False)
    for r in summary.rows:
        if r.tolerance_margin is not None and r.tolerance_margin > 1:
            console.print(f"[red]{escape(r.task)}#{r.impl}[/red]: {escape(r.tolerance_note)}", highlight=False)
        if r.not_run is not None:
            fix = f"; fix: {r.not_run.fix}" if r.not_run.fix else ""
            console.print(f"[magenta]not run[/magenta] {escape(r.task)}#{r.impl}: {escape(r.not_run.detail + fix)}",
                          highlight=False, soft_wrap=True)
    if any(r.skipped for r in summary.rows):
        console.print("* reused: the task has not changed since that result (--force validates again)")
    for p in summary.problems:
        console.print(f"[red]problem:[/red] {escape(p)}", highlight=False)
    console.print(summary_line(summary), highlight=False, soft_wrap=True)


def summary_line(summary: ValidationSummary) -> str:
    """``golden pass rate: X/Y that ran (P%); Z not run: 23 LFS pointers the tests read, ...; valid: ...``."""
    from lmrbench.benchmark.validation.not_run import not_run_counts

    rows, n = summary.rows, len(summary.rows)
    if not n:
        return "no implementation validated"
    ran = [r for r in rows if r.not_run is None]
    passed = sum(r.golden_passes == r.repeat > 0 for r in ran)
    rate = f" ({passed / len(ran):.1%})" if ran else ""
    skipped = n - len(ran)
    not_run = f"; {skipped} not run: {not_run_counts(rows)}" if skipped else "; 0 not run"
    words = [r.verdict or verdict_of(r.valid, r.weak, r.not_run) for r in rows]
    return (f"golden pass rate: {passed}/{len(ran)} that ran{rate}{not_run}; valid: {words.count('yes')}/{n}, "
            f"valid but weak: {words.count('weak')}/{n}, invalid: {words.count('no')}/{n}")


def margin_text(margin: float | None) -> str:
    """The table's tolerance margin: the share of a tolerance a float64 re-run of the golden code used."""
    from lmrbench.benchmark.validation.tolerance import TIGHT_MARGIN

    if margin is None:
        return "-"
    text = f"{margin:.0%}" if margin >= 0.01 else f"{margin:.1%}"
    return f"[red]{text}[/red]" if margin > 1 else f"[yellow]{text}[/yellow]" if margin > TIGHT_MARGIN else text


def survivor_diffs(run_dir: Path, summary: ValidationSummary) -> dict[tuple[str, int], list[tuple[str, str]]]:
    """(name: description, diff) of each surviving mutant, read from the run folder's result files."""
    from lmrbench.benchmark.validation.store import load_result, result_path
    from lmrbench.benchmark.validation.weakness import survivors

    out = {}
    for r in summary.rows:
        if r.survivors and (res := load_result(result_path(run_dir, r.task, r.impl))) is not None:
            out[(r.task, r.impl)] = [(f"{m.name or m.kind}: {m.description}", m.diff) for m in survivors(res.mutants)]
    return out


def register(app: typer.Typer) -> None:
    """Attach to the root app."""
    app.command("validate")(validate)
