"""The one place worker outcomes become what the author sees: the messages are defined here, once."""

from __future__ import annotations

import asyncio
import collections
import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from lmrbench.errors import LmrError
from lmrbench.progress import Cancelled

FAILED = {
    "load": "Could not load",
    "clone": "Could not clone",
    "mask": "Could not mask",
    "paper": "Could not read the paper",
    "tests": "Could not record the tests",
    "validate": "Could not validate",
    "save": "Could not save",
    "files": "Could not read the task's files",
}
"""Title of the notification when a worker of this group fails."""

DONE = {
    "clone": "cloned and indexed",
    "mask": "masked",
    "paper": "paper read",
    "tests": "tests written",
    "validate": "validation finished",
    "save": "saved",
    "load": "loaded",
    "files": "loaded",
}

RUNNING = {
    "clone": "cloning",
    "mask": "masking",
    "paper": "reading the paper",
    "tests": "recording",
    "validate": "validation",
    "save": "saving",
}
"""What a running worker of this group is doing, as a question to the author says it."""


def running_text(groups: list[str]) -> str:
    """``cloning and validation``: the running work, for a question before it is stopped."""
    return " and ".join(dict.fromkeys(RUNNING.get(g, g) for g in groups))


def error_text(exc: BaseException | None) -> str:
    """One line for the author: an LmrError as it is, anything else with its type."""
    text = str(exc) if isinstance(exc, LmrError) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())


def report_worker(screen: Screen[Any], event: Worker.StateChanged) -> None:
    """Show a worker's end on ``screen``'s work panel (when it has one) and, for errors, as a notification."""
    from lmrbench.tui.widgets.work_panel import WorkPanel

    worker = event.worker
    group = worker.group
    panels = screen.query(WorkPanel)
    panel = panels.first() if panels else None
    if event.state == WorkerState.ERROR:
        if isinstance(worker.error, Cancelled):
            if panel is not None:
                panel.stopped(f"{group}: cancelled")
            return
        text = error_text(worker.error)
        if panel is not None:
            panel.error(text)
        screen.notify(text, title=FAILED.get(group, f"{group} failed"), severity="error")
    elif event.state == WorkerState.CANCELLED:
        if panel is not None:
            panel.stopped(f"{group}: cancelled")
    elif event.state == WorkerState.SUCCESS and panel is not None:
        panel.done(DONE.get(group, f"{group}: done"))


F = TypeVar("F", bound=Callable[..., Any])


class ThreadBodies:
    """The thread-worker bodies of one screen that are still running, by worker group.

    Textual's ``Worker.cancel`` ends a thread worker's task at once, and ``Worker.wait`` returns then, while the
    thread goes on until its body sees the cancel event. So an exclusive worker started again (ctrl+g pressed twice)
    would run beside the one it cancelled, both writing the draft, and a screen that deletes what its threads write
    would delete under a running thread. A body therefore starts only when the bodies of its group have returned,
    and a screen waits for ``wait_ended`` before deleting.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._groups: collections.Counter[str] = collections.Counter()

    def enter(self, group: str, cancelled: threading.Event) -> bool:
        """Wait until no body of ``group`` runs, then count this one (True); False when cancelled meanwhile."""
        with self._cond:
            while self._groups[group]:
                if cancelled.is_set():
                    return False
                self._cond.wait(0.1)
            self._groups[group] += 1
            return True

    def leave(self, group: str) -> None:
        """A body of ``group`` has returned."""
        with self._cond:
            self._groups[group] -= 1
            self._cond.notify_all()

    def wait_ended(self, timeout: float) -> bool:
        """Block until no body runs (True) or ``timeout`` seconds have passed (False)."""
        with self._cond:
            return self._cond.wait_for(lambda: not any(self._groups.values()), timeout)


_BODIES_LOCK = threading.Lock()


def thread_bodies(screen: object) -> ThreadBodies:
    """The running-body count of ``screen`` (made on first use)."""
    with _BODIES_LOCK:
        bodies = getattr(screen, "_lmr_thread_bodies", None)
        if bodies is None:
            bodies = ThreadBodies()
            screen._lmr_thread_bodies = bodies  # type: ignore[attr-defined]
        return bodies


def counted(body: F) -> F:
    """Count a thread worker's body (put it under ``@work``): it starts after the earlier bodies of its group have
    returned, and ``threads_ended`` waits for it."""

    @functools.wraps(body)
    def run(self: object, *args: Any, **kwargs: Any) -> Any:
        worker = get_current_worker()
        bodies = thread_bodies(self)
        if not bodies.enter(worker.group, worker.cancelled_event):
            return None
        try:
            return body(self, *args, **kwargs)
        finally:
            bodies.leave(worker.group)

    return run  # type: ignore[return-value]


async def threads_ended(screen: object, timeout: float = 120.0) -> bool:
    """Wait, without blocking the app, until every counted thread body of ``screen`` has returned."""
    return await asyncio.to_thread(thread_bodies(screen).wait_ended, timeout)
