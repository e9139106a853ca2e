"""The CLI's implementation of the core Progress protocol, on rich progress bars."""

from __future__ import annotations

import threading
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

ALWAYS_SHOWN = ("warning:", "note:")
"""Log lines that start so are printed without --verbose: what the user must know about a run."""


class RichProgress:
    """Shows each phase as a rich progress bar; log lines are printed above the bars when ``verbose``."""

    def __init__(self, console: Console | None = None, *, verbose: bool = False) -> None:
        self.console = console or Console(stderr=True)
        self.verbose = verbose
        self._lock = threading.Lock()
        self._bar = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[detail]}", style="dim"),
            console=self.console,
            transient=False,
            disable=not self.console.is_terminal,
        )
        self._task: TaskID | None = None

    def __enter__(self) -> RichProgress:
        self._bar.start()
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self._bar.stop()

    def start(self, label: str, total: int | None) -> None:
        """A new phase: a new bar."""
        with self._lock:
            self._task = self._bar.add_task(label, total=total, detail="")

    def advance(self, n: int = 1, detail: str = "") -> None:
        """Advance the current bar."""
        with self._lock:
            if self._task is not None:
                self._bar.update(self._task, advance=n, detail=detail[:60])

    def log(self, line: str) -> None:
        """Print a log line above the bars when verbose; ``warning:`` and ``note:`` lines always."""
        if self.verbose or line.startswith(ALWAYS_SHOWN):
            self._bar.console.print(line, markup=False, highlight=False, soft_wrap=True)
