"""``lmrbench schema export``: the JSON Schema files of every on-disk format."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lmrbench.cli.grammar import LmrGroup

schema_app = typer.Typer(cls=LmrGroup, help="JSON Schema files of lmrbench's on-disk formats.", no_args_is_help=True)

DEFAULT_DIR = Path("schema")


@schema_app.command("export")
def export(
    out: Annotated[Path, typer.Option("--out", help="Folder to write *.schema.json into.")] = DEFAULT_DIR,
) -> None:
    """Write one JSON Schema file per format (info.json, reports, results, verdicts, labels)."""
    from lmrbench.schemas.export import export_schemas

    for path in export_schemas(out):
        typer.echo(str(path))


def register(app: typer.Typer) -> None:
    """Attach to the root app."""
    app.add_typer(schema_app, name="schema")
