"""``lmrbench analyze structure | regression | familiarity``: the paper's analyses of a task set and its runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from lmrbench.errors import LmrError

if TYPE_CHECKING:
    from lmrbench.authoring.taskset import Task

out_console = Console()
err_console = Console(stderr=True)

analyze_app = typer.Typer(
    help="The paper's analyses: repository structure, regression, familiarity.", no_args_is_help=True
)

Bench = Annotated[Path, typer.Argument(help="The task set folder (or one task folder).")]
JsonOut = Annotated[Path | None, typer.Option("--json", help="Also write the result as JSON to this file.")]
Only = Annotated[list[str] | None, typer.Option("--only", help="Only these tasks (folder name or number).")]


def _tasks(bench: Path, only: list[str] | None) -> list[Task]:
    from lmrbench.cli.run_cmd import _tasks as load

    return load(bench, only)


def _write_json(path: Path | None, data: object) -> None:
    if path is None:
        return
    from lmrbench.fsutil import atomic_write_text

    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    out_console.print(f"wrote {path}", highlight=False)


@analyze_app.command("structure")
def structure_cmd(bench: Bench, json_out: JsonOut = None, only: Only = None) -> None:
    """Per implementation: average directory depth, branch factor, imbalance, goal-function lines."""
    from lmrbench.benchmark.analysis.structure import structure

    rows, problems = structure(_tasks(bench, only))
    for problem in problems:
        err_console.print(f"[yellow]skipped:[/yellow] {problem}", highlight=False)
    if not rows:
        raise LmrError("no implementation could be measured", bench)
    table = Table(title="Repository structure per implementation")
    for h in ("Task", "Impl", "Category", "Depth", "Branch factor", "Imbalance", "Goal lines", "Files", "Folders"):
        table.add_column(h, justify="left" if h in ("Task", "Category") else "right")
    for r in rows:
        table.add_row(r.task, str(r.impl), r.category or "-", f"{r.depth:.2f}", f"{r.branch_factor:.2f}",
                      f"{r.imbalance:.2f}", str(r.goal_lines), str(r.files), str(r.folders))  # fmt: skip
    out_console.print(table)
    _write_json(json_out, {"bench": str(bench), "rows": [r.as_dict() for r in rows]})


def register(app: typer.Typer) -> None:
    """Attach ``analyze`` to the root app."""
    app.add_typer(analyze_app, name="analyze")
