"""Progress for output that is not a terminal (CI logs, pipes): one plain line every few seconds.

A progress bar is invisible in a log file, and a command that prints nothing for minutes looks hung; this prints
``tasks check: 12/29 done after 10 s (last: 26-Hyena)`` to stderr every ``every`` seconds while work runs.
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import TextIO

from rich.console import Console

from lmrbench.cli.rich_progress import RichProgress

EVERY_SECONDS = 10.0
"""How often a line is printed."""


class LineProgress:
    """A Progress (see :mod:`lmrbench.progress`) that prints a status line every ``every`` seconds."""

    def __init__(self, stream: TextIO | None = None, *, every: float = EVERY_SECONDS) -> None:
        self.stream = stream or sys.stderr
        self.every = every
        self._lock = threading.Lock()
        self._label = ""
        self._total: int | None = None
        self._done = 0
        self._detail = ""
        self._start = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="line-progress", daemon=True)

    def __enter__(self) -> LineProgress:
        self._start = time.monotonic()
        if self.every > 0:
            self._thread.start()
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        if self._done:
            self._print()  # the last state, so that a log always ends with how far the work got

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._print()

    def _print(self) -> None:
        with self._lock:
            if not self._label:
                return
            total = f"/{self._total}" if self._total is not None else ""
            last = f" (last: {self._detail})" if self._detail else ""
            line = f"{self._label}: {self._done}{total} done after {time.monotonic() - self._start:.0f} s{last}"
        print(line, file=self.stream, flush=True)

    def start(self, label: str, total: int | None) -> None:
        """A new phase."""
        with self._lock:
            self._label, self._total, self._done, self._detail = label, total, 0, ""

    def advance(self, n: int = 1, detail: str = "") -> None:
        """``n`` more steps done."""
        with self._lock:
            self._done += n
            self._detail = detail[:60]

    def log(self, line: str) -> None:
        """Print a ``warning:`` or ``note:`` line at once."""
        if line.startswith(("warning:", "note:")):
            print(line, file=self.stream, flush=True)


def progress_for(console: Console | None = None) -> RichProgress | LineProgress:
    """A progress bar on a terminal, a line every 10 s elsewhere (a context manager either way)."""
    console = console or Console(stderr=True)
    return RichProgress(console) if console.is_terminal else LineProgress()
