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
from lmrbench.cli.tables import print_table
from lmrbench.schemas.validation import ValidationSummary


def validate(
    bench: Annotated[Path, typer.Argument(help="A task set folder (or one task folder).")],
    task: TaskFilter = None,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", help="Test runs at once (default 1; with --executor ray, the cluster's CPUs).")] = None,
    repeat: Annotated[int, typer.Option("--repeat", "-k", help="Golden runs per implementation.")] = 3,
    sandbox: SandboxOpt = None,
    executor: ExecutorOpt = None,
    address: AddressOpt = None,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Rebuild every task's environment.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Ignore earlier results.")] = False,
    run_dir: Annotated[Path | None, typer.Option(help="Results (<bench>/.lmrbench/validate).")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds one test run may take.")] = 600.0,
    max_mutants: Annotated[int, typer.Option(help="Most mutants run per implementation.")] = 12,
    min_kill_rate: Annotated[float, typer.Option(
        help="Valid but weak below this mutant kill rate (0-1; 0 never weak).")] = DEFAULT_MIN_KILL_RATE,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Print log lines above the bars.")] = False,
    memory: Memory = None,
    cpus: Cpus = None,
    gpus: Gpus = None,
    hf_cache: HfCache = None,
) -> None:
    """Run golden, masked and mutant variants of every implementation; exit 1 when any is invalid or weak."""
    from lmrbench.benchmark.execution.choose import executor_factory
    from lmrbench.benchmark.validation.plan import ValidateOptions
    from lmrbench.benchmark.validation.taskset import validate_taskset
    from lmrbench.cli.rich_progress import RichProgress
    from lmrbench.defaults import default_run_dir

    opts = ValidateOptions(repeat=repeat, timeout=timeout, max_mutants=max_mutants,
                           min_kill_rate=min_kill_rate, jobs=jobs or 1, force=force, rebuild=rebuild)
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 120)  # piped output: keep full task names and reasons
    limits = run_limits(memory, cpus, gpus, hf_cache)
    with RichProgress(verbose=verbose) as progress:
        make = executor_factory(executor, sandbox=sandbox, address=address, jobs=jobs,  # type: ignore[arg-type]
                                limits=limits, progress=progress)
        summary = validate_taskset(bench, only=task or None, sandbox=sandbox, options=opts,  # type: ignore[arg-type]
                                   run_dir=run_dir, progress=progress, executor=make)
    print_summary(console, summary, min_kill_rate, survivor_diffs(run_dir or default_run_dir(bench), summary))
    console.print(f"results: {run_dir or default_run_dir(bench)}", highlight=False)
    if summary.problems or any(not r.valid or r.weak for r in summary.rows):
        raise typer.Exit(1)


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
        if env := r.environment_error:  # nothing ran: no golden or masked count to show
            golden = masked = killed = margin = "-"
            r = r.model_copy(update={"evidence": ""})
            valid = "[red]environment error[/red] (below)"
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
        if env := r.environment_error:
            console.print(f"[red]environment error[/red] {escape(r.task)}: "
                          f"{escape(env)}", highlight=False, soft_wrap=True)
    if any(r.skipped for r in summary.rows):
        console.print("* reused: the task has not changed since that result (--force validates again)")
    for p in summary.problems:
        console.print(f"[red]problem:[/red] {escape(p)}", highlight=False)
    n = len(summary.rows)
    no_env = sum(bool(r.environment_error) for r in summary.rows)
    env_note = f"; {no_env}/{n} not run: environment error" if no_env else ""
    if summary.golden_pass_rate is not None:
        passed = round(summary.golden_pass_rate * (n - no_env))
        console.print(f"golden pass rate: {passed}/{n - no_env} = {summary.golden_pass_rate:.1%}; "
                      f"valid: {sum(r.valid and not r.weak for r in summary.rows)}/{n}, "
                      f"valid but weak: {sum(r.weak for r in summary.rows)}/{n}{env_note}", highlight=False)
    else:
        console.print(f"no implementation validated{env_note}", highlight=False)


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
