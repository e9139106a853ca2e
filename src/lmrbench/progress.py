"""How long-running core functions report progress and learn they are cancelled.

The CLI implements :class:`Progress` with rich progress bars, the TUI with messages, tests with a list.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Protocol

from lmrbench.errors import LmrError


class Progress(Protocol):
    """Receives progress from a core function. Every method must be cheap and thread-safe."""

    def start(self, label: str, total: int | None) -> None:
        """A new phase begins with ``total`` steps (None when unknown)."""

    def advance(self, n: int = 1, detail: str = "") -> None:
        """``n`` steps of the current phase are done."""

    def log(self, line: str) -> None:
        """One line of log output (build logs, test output)."""


class NullProgress:
    """A Progress that ignores everything."""

    def start(self, label: str, total: int | None) -> None:  # noqa: D102
        pass

    def advance(self, n: int = 1, detail: str = "") -> None:  # noqa: D102
        pass

    def log(self, line: str) -> None:  # noqa: D102
        pass


class Cancelled(LmrError):
    """Raised by core functions when their cancel event is set."""

    def __init__(self) -> None:
        super().__init__("cancelled")


def check_cancel(cancel: threading.Event | None) -> None:
    """Raise :class:`Cancelled` when ``cancel`` is set."""
    if cancel is not None and cancel.is_set():
        raise Cancelled()


@contextlib.contextmanager
def stop_on_cancel(cancel: threading.Event | None, stop: Callable[[], None], every: float = 0.2) -> Iterator[None]:
    """While the block runs, call ``stop`` (from a thread, again every ``every`` seconds, so that a process
    started meanwhile is stopped too) once ``cancel`` is set; raise :class:`Cancelled` when the block then ends
    without an exception of its own. ``stop`` must be idempotent and must not raise."""
    check_cancel(cancel)
    if cancel is None:
        yield
        return
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if cancel.wait(every) and not done.is_set():
                stop()
                done.wait(every)

    watcher = threading.Thread(target=watch, daemon=True, name="lmrbench-stop-on-cancel")
    watcher.start()
    try:
        yield
    finally:
        done.set()
    check_cancel(cancel)
