"""The CLI's implementation of the core Progress protocol: rich progress bars on a terminal, and a plain status
line every few seconds elsewhere (CI logs, pipes), where a bar is invisible and a command that prints nothing for
minutes looks hung: ``validate: 12/29 done after 10 s (last: 26-Hyena)``."""

from __future__ import annotations

import threading
import time
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

from lmrbench.cli import grammar

ALWAYS_SHOWN = ("warning:", "note:")
"""Log lines that start so are printed without --verbose: what the user must know about a run."""

EVERY_SECONDS = 10.0
"""How often a status line is printed off a terminal."""

QUIET_UNDER_SECONDS = 5.0
"""A phase shorter than this gets no status line when the next one starts (the last phase always gets one,
unless the command ends in an error, which then stays one line)."""


class RichProgress:
    """Shows each phase as a rich progress bar on a terminal, or as a status line every ``every`` seconds (and
    the last state at the end) elsewhere; log lines are printed above the bars when ``verbose``."""

    def __init__(self, console: Console | None = None, *, verbose: bool = False, every: float = EVERY_SECONDS,
                 quiet_under: float = QUIET_UNDER_SECONDS) -> None:
        self.console = console or Console(stderr=True)
        self.quiet = grammar.quiet()  # lmrbench --quiet: no bars, no status or log lines but warnings and notes
        self.verbose = (verbose or grammar.verbose()) and not self.quiet
        self.every, self.quiet_under = (0.0 if self.quiet else every), quiet_under
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
            disable=self.quiet or not self.console.is_terminal,
        )
        self._task: TaskID | None = None
        self._label, self._done, self._detail = "", 0, ""
        self._total: int | None = None
        self._start = self._phase_start = time.monotonic()
        self._printed = ""
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    @property
    def lines(self) -> bool:
        """True off a terminal: status lines instead of bars (neither with --quiet)."""
        return not self.quiet and not self.console.is_terminal

    def __enter__(self) -> RichProgress:
        self._start = self._phase_start = time.monotonic()
        self._bar.start()
        if self.lines and self.every > 0:
            self._ticker = threading.Thread(target=self._tick, name="progress-lines", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if self.lines and et is None:
            self._status(final=True)  # the last state, so that a log ends with how far the work got
        self._bar.stop()

    def _tick(self) -> None:
        while not self._stop.wait(self.every):
            self._status()

    def _status(self, *, final: bool = False) -> None:
        with self._lock:
            quick = time.monotonic() - self._phase_start < self.quiet_under
            if not self._label or not self._done or (quick and not final):
                return
            total = f"/{self._total}" if self._total is not None else ""
            last = f" (last: {self._detail})" if self._detail else ""
            line = f"{self._label}: {self._done}{total} done after {time.monotonic() - self._start:.0f} s{last}"
            if line == self._printed:
                return
            self._printed = line
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def start(self, label: str, total: int | None) -> None:
        """A new phase: a new bar."""
        if self.lines:
            self._status()  # how the phase before ended
        with self._lock:
            self._task = self._bar.add_task(label, total=total, detail="")
            self._label, self._total, self._done, self._detail = label, total, 0, ""
            self._phase_start = time.monotonic()

    def advance(self, n: int = 1, detail: str = "") -> None:
        """Advance the current bar."""
        with self._lock:
            self._done += n
            self._detail = detail[:60]
            if self._task is not None:
                self._bar.update(self._task, advance=n, detail=detail[:60])

    def log(self, line: str) -> None:
        """Print a log line above the bars when verbose; ``warning:`` and ``note:`` lines always."""
        if self.verbose or line.startswith(ALWAYS_SHOWN):
            self._bar.console.print(line, markup=False, highlight=False, soft_wrap=True)
