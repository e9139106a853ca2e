"""``lmrbench task record``: unit tests from recorded calls of the golden code, or a scaffold to fill in."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from lmrbench.errors import LmrError

console = Console()


def task_record(
    task_dir: Path = typer.Argument(..., help="The task folder."),
    impl: int = typer.Option(..., "--impl", help="The implementation's index in info.json."),
    command: str = typer.Option(
        "", "--command", help="Shell command that runs the reference code, from the repo root."
    ),
    max_calls: int = typer.Option(3, "--max-calls", help="Distinct calls kept per goal function."),
    max_bytes: int = typer.Option(
        20_000_000, "--max-bytes", help="Largest recorded data of one call, in bytes."
    ),
    self_factory: str | None = typer.Option(
        None, "--self-factory", help="module:function building the object a goal method is called on."
    ),
    runner: str | None = typer.Option(
        None, "--runner", help="docker or local (default: docker when it answers)."
    ),
    timeout: float = typer.Option(1800.0, "--timeout", help="Seconds the command may run."),
    scaffold: bool = typer.Option(False, "--scaffold", help="Write a test file with TODO values instead."),
    force: bool = typer.Option(
        False, "--force", help="Replace a test file that was edited or written by hand."
    ),
) -> None:
    """Record the goal function's first distinct calls and write unit_test/unit_test_<k>.py with its data."""
    from lmrbench.authoring.record import record_tests, scaffold_tests
    from lmrbench.authoring.taskset import load_task

    task = load_task(task_dir)
    if scaffold:
        path = scaffold_tests(task, impl, force=force)
        console.print(
            f"wrote {path}: replace every LMRBENCH-TODO, then run `lmrbench validate`", highlight=False
        )
        return
    if not command.strip():
        raise LmrError(
            "give the --command that runs the reference code (or --scaffold to write cases by hand)"
        )
    from lmrbench.benchmark.sandbox import get_sandbox
    from lmrbench.cli.rich_progress import RichProgress

    with RichProgress() as progress:
        sandbox = get_sandbox(runner, progress=progress)  # type: ignore[arg-type]
        result = record_tests(
            task,
            impl,
            command,
            sandbox=sandbox,
            max_calls=max_calls,
            max_bytes=max_bytes,
            self_factory=self_factory,
            timeout=timeout,
            force=force,
            progress=progress,
        )
    for case in result.cases:
        extra = [f"changes {', '.join(case.changed)}"] if case.changed else []
        extra += ["draws random numbers"] if case.random_state else []
        note = f" ({'; '.join(extra)})" if extra else ""
        console.print(f"  {case.file:<24} {case.bytes:>12,} bytes  {case.target}{note}", highlight=False)
    console.print(
        f"wrote {result.test_file} and {len(result.cases)} case(s), {result.total_bytes:,} bytes in "
        f"{result.data_dir}",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    """Add ``record`` to the ``task`` sub-app."""
    from lmrbench.cli.task_cmd import task_app

    task_app.command("record")(task_record)
