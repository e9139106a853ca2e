"""Entry point of the ``lmrbench`` command. Sub-apps live in sibling modules, one per stage."""

from __future__ import annotations

import contextlib
import signal
import sys

import typer
from rich.console import Console
from rich.markup import escape

from lmrbench import __version__
from lmrbench.cli.grammar import QUIET, VERBOSE, LmrGroup
from lmrbench.errors import LmrError, NotRun, UsageError

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NOT_RUN = 0, 1, 2, 3
"""Every command's exit status: 0 ok; 1 a runtime error (an ``LmrError``) or a negative result (a task invalid,
a check failed); 2 a usage error (click's, or a ``UsageError``: a bad option value); 3 could not run (a ``NotRun``:
an endpoint or an environment unavailable) or problems left for a re-run."""

app = typer.Typer(
    name="lmrbench",
    cls=LmrGroup,
    help="Author, validate and run research-code reproduction benchmarks (LMR-Bench format).\n\n"
    "Exit status: 0 ok; 1 a runtime error or a negative result; 2 a usage error; 3 could not run, or problems "
    "left for a re-run.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err_console = Console(stderr=True)


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", help="Print the version and exit."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Print log lines above the progress bars (pip's "
                                 "and the image builds' whole output)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars, status or log lines; results, "
                               "warnings and errors only."),
) -> None:
    if verbose and quiet:
        raise typer.BadParameter("--verbose and --quiet exclude each other")
    if verbose:
        ctx.meta[VERBOSE] = True
    if quiet:
        ctx.meta[QUIET] = True
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
    from lmrbench.cli import suggest_cmd

    suggest_cmd.register(app)

    tui_cmd.register(app)
    from lmrbench.cli import run_cmd

    run_cmd.register(app)
    from lmrbench.cli import report_cmd

    report_cmd.register(app)
    from lmrbench.cli import predictions_cmd

    predictions_cmd.register(app)
    from lmrbench.cli import agent_cmd

    agent_cmd.register(app)
    from lmrbench.cli import validate_cmd

    validate_cmd.register(app)
    from lmrbench.cli import regrade_cmd

    regrade_cmd.register(app)
    from lmrbench.cli import analyze_cmd

    analyze_cmd.register(app)
    from lmrbench.cli import labels_cmd

    labels_cmd.register(app)


_register()


_Kinds = tuple[type[BaseException], ...]


def _click_kinds() -> tuple[_Kinds, _Kinds, _Kinds]:
    """(ClickException, Exit, Abort) classes of click and of the click that typer >= 0.15 vendors."""
    usage: list[type[BaseException]] = []
    exits: list[type[BaseException]] = [typer.Exit]
    aborts: list[type[BaseException]] = [typer.Abort]
    try:  # typer < 0.15 uses click itself; newer typer does not even install it
        import click
    except ImportError:
        pass
    else:
        usage.append(click.exceptions.ClickException)
        exits.append(click.exceptions.Exit)
        aborts.append(click.exceptions.Abort)
    try:
        from typer import _click as vendored  # type: ignore[attr-defined]
    except ImportError:
        pass
    else:
        for names, kinds in (("ClickException", usage), ("Exit", exits), ("Abort", aborts)):
            kind = getattr(vendored.exceptions, names, None)
            if isinstance(kind, type) and issubclass(kind, BaseException):
                kinds.append(kind)
    return tuple(usage), tuple(exits), tuple(aborts)


def usage_error_text(exc: BaseException) -> str:
    """One line naming the problem, then the help hint of the command it belongs to."""
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    line = "error: " + " ".join(str(message).split())
    ctx = getattr(exc, "ctx", None)
    if ctx is not None and getattr(ctx, "help_option_names", None):
        return f"{line}\nTry '{ctx.command_path} {ctx.help_option_names[0]}' for help."
    return line


def _terminate_as_interrupt() -> None:
    """SIGTERM unwinds like Ctrl-C, so every ``finally`` runs: temp folders (a half-downloaded wheelhouse) are
    removed and containers stopped, instead of the process vanishing with them left behind."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    with contextlib.suppress(ValueError):  # not the main thread (embedded use): leave the default
        signal.signal(signal.SIGTERM, handler)


def exit_status(exc: LmrError) -> int:
    """2 for a bad option value, 3 for what could not run (an endpoint, an environment), else 1."""
    if isinstance(exc, UsageError):
        return EXIT_USAGE
    return EXIT_NOT_RUN if isinstance(exc, NotRun) else EXIT_FAILED


def main() -> None:
    """Run the CLI; an LmrError becomes one red line on stderr and its ``exit_status``, a usage error of click one
    line plus the help hint and exit status 2."""
    usage, exits, aborts = _click_kinds()
    _terminate_as_interrupt()
    try:
        rv = app(standalone_mode=False)
    except LmrError as exc:
        err_console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, markup=True, soft_wrap=True)
        sys.exit(exit_status(exc))
    except KeyboardInterrupt:
        err_console.print("[red]interrupted[/red]")
        sys.exit(130)
    except usage as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # the help (already shown by typer, else here)
            text = str(exc.format_message()).strip()  # type: ignore[attr-defined]
            if text:
                print(text, file=sys.stderr)
        else:
            print(usage_error_text(exc), file=sys.stderr)
        sys.exit(int(getattr(exc, "exit_code", EXIT_USAGE) or EXIT_USAGE))
    except exits as exc:
        sys.exit(int(getattr(exc, "exit_code", 0)))
    except aborts:
        err_console.print("[red]interrupted[/red]")
        sys.exit(130)
    # Without standalone mode, click returns the exit code of typer.Exit and of Ctrl-C instead of raising.
    if isinstance(rv, int) and rv:
        if rv == 130:
            err_console.print("[red]interrupted[/red]")
        sys.exit(rv)
