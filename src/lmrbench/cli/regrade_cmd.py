"""``lmrbench regrade BENCH|RUN``: derive every verdict again from the kept evidence, with nothing run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from lmrbench.cli.output import Format, check_format, emit
from lmrbench.errors import LmrError
from lmrbench.schemas.validation import ImplValidation


def regrade(
    path: Annotated[Path, typer.Argument(
        metavar="BENCH|RUN", help="A validated task set, or a run folder (holding run.json).")],
    run_dir: Annotated[Path | None, typer.Option(
        "--validation", help="A task set's validation results (validate's --out; default "
        "<BENCH>/.lmrbench/validate).")] = None,
    seal_key: Annotated[Path | None, typer.Option(
        "--seal-key", help="The seal key file of the machine that kept the evidence (default: this machine's, "
        "<data dir>/seal.key): how an auditor checks another machine's runs.")] = None,
    fmt: Format = "text",
) -> None:
    """Decide every stored verdict again from its runs' evidence (run spec, junit and seal reports, whole log)
    without starting any container or test process, after checking each kept file against the seal key kept
    outside the run folder; print the figures, each verdict that now differs and the evidence no longer sealed.
    Exit 1 when a verdict differs, evidence is not sealed, or some result kept no evidence."""
    import os

    from lmrbench.harness.seal_key import KEY_ENV

    check_format(fmt)
    if not path.is_dir():
        raise LmrError("not a folder", path)
    if seal_key is not None:
        if not seal_key.is_file():
            raise LmrError("no such seal key file", seal_key)
        os.environ[KEY_ENV] = str(seal_key.resolve())
    console = Console(soft_wrap=True, quiet=fmt == "json")
    is_run = (path / "run.json").is_file()
    same, figures = _regrade_run(console, path) if is_run else _regrade_bench(console, path, run_dir)
    emit(fmt, {**figures, "same": same})
    if not same:
        raise typer.Exit(1)


def _rate(results: list[ImplValidation], rate: float | None) -> str:
    from lmrbench.benchmark.validation.store import golden_ran

    ran = len(golden_ran(results))
    return "-" if rate is None else f"{round(rate * ran)}/{ran} that ran ({rate:.1%})"


def _kills(results: list[ImplValidation]) -> str:
    return f"{sum(r.mutants_killed for r in results)}/{sum(r.mutants_total for r in results)}"


def _regrade_bench(console: Console, bench: Path, run_dir: Path | None) -> tuple[bool, dict[str, object]]:
    from lmrbench.benchmark.validation.regrade import regrade_bench

    out = regrade_bench(bench, run_dir)
    n = len(out.stored) - len(out.not_regraded) - out.not_run
    stood = f"; {out.not_run} not run stand as stored" if out.not_run else ""
    console.print(f"regraded {n}/{len(out.stored)} implementations from their evidence (nothing run{stood})",
                  highlight=False)
    console.print(f"golden pass rate: stored {_rate(out.stored, out.stored_rate)}, "
                  f"regraded {_rate(out.regraded, out.regraded_rate)}", highlight=False)
    console.print(f"mutants killed: stored {_kills(out.stored)}, regraded {_kills(out.regraded)}", highlight=False)
    for row in out.regraded:
        if row.mutants_total:
            console.print(f"  {escape(row.task)}#{row.impl}: {row.mutants_killed}/{row.mutants_total} killed",
                          highlight=False)
    return _differences(console, out.changed, out.not_regraded), {
        "bench": str(bench), "stored_rate": out.stored_rate, "regraded_rate": out.regraded_rate, "not_run": out.not_run,
        "changed": out.changed, "not_regraded": out.not_regraded,
        "regraded": [r.model_dump(mode="json") for r in out.regraded]}


def _regrade_run(console: Console, run: Path) -> tuple[bool, dict[str, object]]:
    from lmrbench.benchmark.pipeline.regrade import RunRegrade, regrade_run

    out = regrade_run(run)
    n = len(out.stored) - len(out.not_regraded) - len(out.unsealed) - out.without_run
    console.print(f"regraded {n}/{len(out.stored)} results from their evidence (nothing run; "
                  f"{out.without_run} decided without a test run stand as stored)", highlight=False)
    console.print(f"stored: {RunRegrade.counts(out.stored)}", highlight=False)
    console.print(f"regraded: {RunRegrade.counts(out.regraded)}", highlight=False)
    return _differences(console, out.changed, out.not_regraded, out.unsealed), {
        "run": str(run), "stored": RunRegrade.counts(out.stored), "regraded": RunRegrade.counts(out.regraded),
        "without_run": out.without_run, "changed": out.changed, "not_regraded": out.not_regraded,
        "unsealed": out.unsealed}


def _differences(console: Console, changed: list[str], missing: list[str], unsealed: list[str] | None = None) -> bool:
    for line in unsealed or []:
        console.print(f"[red]not sealed:[/red] {escape(line)}", highlight=False)
    for line in changed:
        console.print(f"[red]changed:[/red] {escape(line)}", highlight=False)
    for line in missing:
        console.print(f"[yellow]not regraded:[/yellow] {escape(line)}", highlight=False)
    if not changed and not missing and not unsealed:
        console.print("every verdict is the same, and all of its evidence is sealed", highlight=False)
    return not changed and not missing and not unsealed


def register(app: typer.Typer) -> None:
    """Attach to the root app."""
    app.command("regrade")(regrade)
