"""``lmrbench tui [BENCH]``: the authoring app."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

BenchArg = Annotated[Path, typer.Argument(help="The task set folder (created when missing).")]
SandboxOpt = Annotated[
    str | None, typer.Option("--sandbox", envvar="LMRBENCH_SANDBOX",
                              help="Where tasks build and validate: docker or local (default: docker if up)")
]


RunOpt = Annotated[list[Path] | None, typer.Option("--run", help="Open the summary of this run folder (repeatable).")]
ReviewOpt = Annotated[
    Path | None, typer.Option("--review", help="Open the review screen of this run folder (human labels).")
]
AnnotatorOpt = Annotated[
    str | None, typer.Option("--annotator", help="Who labels (default: $LMRBENCH_ANNOTATOR or the login name).")
]
OutcomesOpt = Annotated[
    bool,
    typer.Option(
        "--show-outcomes", help="Review: show the tests' outcome and the judge's verdict before labelling "
        "(adjudication; by default both stay hidden until an item is labelled).",
    ),
]


def tui(
    bench: BenchArg = Path("."),
    sandbox: SandboxOpt = None,
    run: RunOpt = None,
    review: ReviewOpt = None,
    annotator: AnnotatorOpt = None,
    show_outcomes: OutcomesOpt = False,
) -> None:
    """Open the terminal app: browse the task set, author and edit tasks, review a run's candidates."""
    from lmrbench.errors import UsageError
    from lmrbench.tui.app import make_app

    if sandbox is not None and sandbox not in ("docker", "local"):
        raise UsageError(f"unknown --sandbox {sandbox!r}; use docker or local")
    kind: Literal["docker", "local"] | None = "docker" if sandbox == "docker" else ("local" if sandbox else None)
    if review is not None:
        from lmrbench.benchmark.labels.store import check_annotator
        from lmrbench.benchmark.pipeline.rundir import RunDir

        RunDir(review).require_manifest()
        if annotator is not None:
            check_annotator(annotator)
    make_app(bench, sandbox=kind, runs=run, review=review, annotator=annotator, blind=not show_outcomes).run()


def register(app: typer.Typer) -> None:
    """Attach to the root app."""
    app.command("tui")(tui)
