"""``lmrbench task record``: unit tests from recorded calls of the golden code, or a scaffold to fill in."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from lmrbench.cli.limit_options import Cpus, Gpus, HfCache, Memory, SandboxOpt, run_limits
from lmrbench.errors import UsageError

console = Console()


def task_record(
    task_dir: Annotated[Path, typer.Argument(metavar="TASK", help="The task folder.")],
    impl: Annotated[int, typer.Option("--impl", help="The implementation's index in info.json.")],
    command: Annotated[
        str, typer.Option(help="Shell command running the reference code, from the repo root.")
    ] = "",
    max_calls: Annotated[int, typer.Option(
        help="Distinct calls kept per goal function for coverage; calls that catch more (a mutant, a parameter "
             "value, a special value) and added cases come on top.")] = 3,
    max_bytes: Annotated[int, typer.Option(help="Largest recorded data of one call, in bytes.")] = 20_000_000,
    self_factory: Annotated[
        str | None, typer.Option(help="module:function building the object a goal method is called on.")
    ] = None,
    sandbox: SandboxOpt = None,
    timeout: Annotated[float, typer.Option("--command-timeout", help="Seconds the command may run.")] = 1800.0,
    scaffold: Annotated[
        bool, typer.Option("--scaffold", help="Write a test file with TODO values instead.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Replace a test file edited or written by hand.")
    ] = False,
    memory: Memory = None,
    cpus: Cpus = None,
    gpus: Gpus = None,
    hf_cache: HfCache = None,
) -> None:
    """Record the goal function's first distinct calls; write unit_test/unit_test_<k>.py and its data."""
    from lmrbench.authoring.record.record import record_tests
    from lmrbench.authoring.record.recorded_tests import scaffold_tests
    from lmrbench.core.taskset import load_task

    task = load_task(task_dir)
    if scaffold:
        path = scaffold_tests(task, impl, force=force)
        console.print(
            f"wrote {path}: replace every LMRBENCH-TODO (vary every parameter over the cases and include special "
            "values, as its header says), then run `lmrbench validate`", soft_wrap=True
        )
        return
    if not command.strip():
        raise UsageError(
            "give the --command that runs the reference code (or --scaffold to write cases by hand)"
        )
    if sandbox not in (None, "docker", "local"):
        raise UsageError(f"unknown sandbox {sandbox!r}; use docker or local")
    from lmrbench.benchmark.execution.sandboxes import get_sandbox
    from lmrbench.cli.rich_progress import RichProgress

    with RichProgress() as progress:
        limits = run_limits(memory, cpus, gpus, hf_cache)
        box = get_sandbox(sandbox, progress=progress, limits=limits)  # type: ignore[arg-type]
        result = record_tests(
            task,
            impl,
            command,
            sandbox=box,
            max_calls=max_calls,
            max_bytes=max_bytes,
            self_factory=self_factory,
            timeout=timeout,
            force=force,
            progress=progress,
        )
    for case in result.cases:
        extra = [f"changes {', '.join(case.changed)}"] if case.changed else []
        extra += ["changes self"] if case.state_changed else []
        extra += ["draws random numbers"] if case.random_state else []
        note = f" ({'; '.join(extra)})" if extra else ""
        console.print(
            f"  {case.file:<20} {case.bytes:>10,} bytes  {case.target}{note}", highlight=False, soft_wrap=True
        )
    console.print(
        f"wrote {result.test_file} and {len(result.cases)} case(s), {result.total_bytes:,} bytes, in "
        f"{result.data_dir}",
        highlight=False,
        soft_wrap=True,
    )
    from lmrbench.authoring.record.bodycoverage import coverage_text

    for cov in result.coverage:
        console.print(f"coverage of {cov.target}'s golden body by the cases: {coverage_text(cov)}",
                      highlight=False, soft_wrap=True)
    if not result.coverage:
        console.print("coverage: not traced (another tracer was active)", highlight=False)
    for line in result.summary:
        console.print(line, highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``record`` to the ``task`` sub-app."""
    from lmrbench.cli.task_cmd import task_app

    task_app.command("record")(task_record)
