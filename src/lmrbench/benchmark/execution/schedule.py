"""The one loop that runs units on an executor: at most ``slots`` at once, follow-ups first, stop on cancel.

Planners (validation, evaluation) hand over their first units and a callback; the callback gets each result
as it comes back and returns the units that it makes possible (a task's mutants once its golden runs are in).
Follow-ups go to the front of the queue, so that a started implementation finishes, and its result file is
written, before new ones start: an interrupted command loses little.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Protocol

from lmrbench.benchmark.execution.unit import RunUnit, UnitResult
from lmrbench.core.sandbox import SandboxKind
from lmrbench.progress import Cancelled


class Executor(Protocol):
    """Where units run: threads of this process, or the nodes of a cluster."""

    name: str
    """'local' or 'ray'."""
    slots: int
    """Units run at once."""
    sandbox_name: SandboxKind
    """The kind of sandbox the units run in (docker or local)."""

    def submit(self, unit: RunUnit) -> None:
        """Start ``unit``."""

    def wait(self, timeout: float) -> list[tuple[RunUnit, UnitResult]]:
        """The units that ended since the last call (at least one unless ``timeout`` passed). A unit that the
        machinery lost (a worker or node gone for good) comes back as an infrastructure error, never as a
        failed test."""
        ...

    def stop(self) -> None:
        """Kill every unit in flight; their results are dropped."""

    def close(self) -> None:
        """Release the executor's resources (threads, the cluster connection)."""


FollowUps = Callable[[RunUnit, UnitResult], Iterable[RunUnit]]


def run_units(
    executor: Executor,
    first: Iterable[RunUnit],
    on_done: FollowUps,
    *,
    cancel: threading.Event | None = None,
) -> None:
    """Run ``first`` and every follow-up ``on_done`` returns, until none is left.

    On ``cancel`` or any exception (Ctrl-C included) no new unit starts, the running ones are killed, and the
    exception (``Cancelled`` for a cancel) is raised; ``on_done`` has then seen only whole results.
    """
    cancel = cancel or threading.Event()
    queue = deque(first)
    in_flight = 0
    try:
        while queue or in_flight:
            while queue and in_flight < max(1, executor.slots) and not cancel.is_set():
                executor.submit(queue.popleft())
                in_flight += 1
            if cancel.is_set():
                raise Cancelled()
            for unit, result in executor.wait(0.5):
                in_flight -= 1
                queue.extendleft(reversed(list(on_done(unit, result))))
    except BaseException:
        cancel.set()
        executor.stop()
        raise
