"""``lmrbench import-predictions | export-predictions``: SWE-bench's predictions JSONL into a run and out of one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lmrbench.cli.limit_options import TaskFilter
from lmrbench.cli.output import Format, check_format
from lmrbench.cli.run_cmd import Bench, Out, Run, _finish, _tasks, out_console

Predictions = Annotated[Path, typer.Argument(help="The predictions JSONL (instance_id, model_name_or_path, "
                                                  "model_patch per line; instance_id is <task>__<impl>).")]  # fmt: skip


def import_predictions_cmd(
    bench: Bench,
    predictions: Predictions,
    out: Out,
    label: Annotated[str, typer.Option("--label", help="The name in reports (default: model_name_or_path).")] = "",
    only: TaskFilter = None,
    fmt: Format = "text",
) -> None:
    """Take an agent's patches (unified diffs against the masked repositories) as candidates of a run."""
    from lmrbench.benchmark.pipeline.predictions import import_predictions

    check_format(fmt)
    summary = import_predictions(_tasks(bench, only), predictions, out, label=label, bench=str(bench))
    _finish(summary, "import-predictions", fmt)


def export_predictions_cmd(
    bench: Bench,
    run: Run,
    out: Annotated[Path, typer.Argument(metavar="PREDICTIONS", help="The predictions JSONL to write.")],
    model: Annotated[str, typer.Option("--model-name", help="model_name_or_path (default: the run's label).")] = "",
    only: TaskFilter = None,
) -> None:
    """Write a run's candidates as SWE-bench predictions: one unified diff per implementation."""
    from lmrbench.benchmark.pipeline.predictions import export_predictions

    count = export_predictions(_tasks(bench, only), run, out, model=model)
    out_console.print(f"export-predictions: {count} prediction(s) written to {out}", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Attach the commands to the root app."""
    app.command("import-predictions")(import_predictions_cmd)
    app.command("export-predictions")(export_predictions_cmd)
