"""``lmrbench task new`` and ``lmrbench tasks list|check``."""

from __future__ import annotations

import typer

task_app = typer.Typer(help="Author one task.", no_args_is_help=True)
tasks_app = typer.Typer(help="Inspect a task set.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Attach to the root app."""
    app.add_typer(task_app, name="task")
    app.add_typer(tasks_app, name="tasks")
