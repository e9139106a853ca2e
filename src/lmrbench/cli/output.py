"""``--format text|json`` of every command that prints a result: JSON goes to stdout, alone; the old ``--json FILE``
still writes the file, with a note naming ``--format json``."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from lmrbench.cli.grammar import note_old

FORMATS = ("text", "json")

Format = Annotated[str, typer.Option(
    "--format", help="text: tables for a person; json: the result as one JSON document on stdout, nothing else.")]
OldJsonFile = Annotated[Path | None, typer.Option(
    "--json", hidden=True, help="Old spelling: also write the JSON to this file (use --format json).")]


def check_format(fmt: str, allowed: tuple[str, ...] = FORMATS) -> str:
    """``fmt`` when known, else a usage error naming the choices."""
    if fmt not in allowed:
        raise typer.BadParameter(f"{fmt!r} is not one of {', '.join(allowed)}", param_hint="'--format'")
    return fmt


@contextmanager
def result_format(fmt: str, *consoles: Console) -> Iterator[bool]:
    """Check ``--format``; with json, ``consoles`` (the text output) print nothing inside the block. Yields
    whether the format is json."""
    as_json = check_format(fmt) == "json"
    before = [c.quiet for c in consoles]
    if as_json:
        for c in consoles:
            c.quiet = True
    try:
        yield as_json
    finally:
        for c, was in zip(consoles, before, strict=True):
            c.quiet = was


def emit(fmt: str, data: object, json_file: Path | None = None, command: str = "") -> None:
    """Print ``data`` as JSON on stdout when ``fmt`` is json; write it to the old ``--json FILE`` too."""
    if fmt != "json" and json_file is None:
        return
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if fmt == "json":
        sys.stdout.write(text)
        sys.stdout.flush()
    if json_file is not None:
        from lmrbench.fsutil import atomic_write_text

        note_old("--json FILE", "--format json > FILE", f"lmrbench {command}" if command else "")
        atomic_write_text(json_file, text)
        if fmt != "json":
            print(f"wrote {json_file}")
