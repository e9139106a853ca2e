"""Entry point of the ``lmrbench`` command. Sub-apps live in sibling modules, one per stage."""

from __future__ import annotations

import signal
import sys

import typer
from rich.console import Console

from lmrbench import __version__
from lmrbench.errors import LmrError

app = typer.Typer(
    name="lmrbench",
    help="Author, validate and run research-code reproduction benchmarks (LMR-Bench format).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err_console = Console(stderr=True)


@app.callback(invoke_without_command=True)
def _root(version: bool = typer.Option(False, "--version", help="Print the version and exit.")) -> None:
    if version:
        typer.echo(__version__)
        raise typer.Exit()


def _register() -> None:
    """Attach every stage's sub-app (imported here so that ``--help`` lists them all)."""
    from lmrbench.cli import schema_cmd, task_cmd

    schema_cmd.register(app)
    task_cmd.register(app)
    from lmrbench.cli import images_cmd

    images_cmd.register(app)
    from lmrbench.cli import record_cmd, tui_cmd

    record_cmd.register(app)

    tui_cmd.register(app)
    from lmrbench.cli import run_cmd

    run_cmd.register(app)
    from lmrbench.cli import validate_cmd

    validate_cmd.register(app)
    from lmrbench.cli import analyze_cmd

    analyze_cmd.register(app)
    from lmrbench.cli import labels_cmd

    labels_cmd.register(app)


_register()


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> None:
    """Run the CLI; an LmrError becomes one red line on stderr and exit status 2.

    SIGTERM is handled like Ctrl-C, so that running containers and temp folders are cleaned up on the way out.
    """
    signal.signal(signal.SIGTERM, _terminate)
    try:
        rv = app(standalone_mode=False)
    except LmrError as exc:
        err_console.print(f"[red]error:[/red] {exc}", highlight=False, markup=True, soft_wrap=True)
        sys.exit(2)
    except KeyboardInterrupt:
        err_console.print("[red]interrupted[/red]")
        sys.exit(130)
    except Exception as exc:  # click's usage errors and friends
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if isinstance(exc, click.exceptions.Exit):
            sys.exit(exc.exit_code)
        if isinstance(exc, click.exceptions.Abort):
            sys.exit(130)
        raise
    # Without standalone mode, click returns the exit code of typer.Exit and of Ctrl-C instead of raising.
    if isinstance(rv, int) and rv:
        if rv == 130:
            err_console.print("[red]interrupted[/red]")
        sys.exit(rv)
