"""``lmrbench tui [BENCH_DIR]``: the authoring app."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

BenchArg = Annotated[Path, typer.Argument(help="The task set folder (created when missing).")]
SandboxOpt = Annotated[
    str | None, typer.Option(help="Where tasks build and validate: docker or local (default: docker if up)")
]


RunOpt = Annotated[list[Path] | None, typer.Option("--run", help="Open the summary of this run folder (repeatable).")]


def tui(bench_dir: BenchArg = Path("."), sandbox: SandboxOpt = None, run: RunOpt = None) -> None:
    """Open the terminal app: browse the task set, author and edit tasks."""
    from lmrbench.errors import LmrError
    from lmrbench.tui.app import make_app

    if sandbox is not None and sandbox not in ("docker", "local"):
        raise LmrError(f"unknown --sandbox {sandbox!r}; use docker or local")
    kind: Literal["docker", "local"] | None = "docker" if sandbox == "docker" else ("local" if sandbox else None)
    make_app(bench_dir, sandbox=kind, runs=run).run()


def register(app: typer.Typer) -> None:
    """Attach to the root app."""
    app.command("tui")(tui)
