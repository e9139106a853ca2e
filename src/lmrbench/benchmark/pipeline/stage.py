"""What generate, evaluate and judge share: a thread pool over (task, implementation) jobs and a summary."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TypeVar

from lmrbench.progress import NullProgress, Progress, check_cancel
from lmrbench.schemas.run import Usage

J = TypeVar("J")


@dataclass
class StageSummary:
    """What one stage did: outcomes by status, items skipped because already done, tokens spent."""

    statuses: Counter[str] = field(default_factory=Counter)
    skipped: int = 0
    usage: Usage = field(default_factory=Usage)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Lines that say what the stage took on (shown before the summary line)."""
    weaker: int = 0
    """Results of this stage that rest on weaker evidence (the local runner, a shared process, script logs)."""

    def line(self) -> str:
        """One line for the terminal."""
        parts = [f"{n} {s}" for s, n in sorted(self.statuses.items())]
        if self.weaker:
            parts.append(f"{self.weaker} on weaker evidence")
        if self.skipped:
            parts.append(f"{self.skipped} already done")
        if self.usage.calls or self.usage.cached:
            parts.append(
                f"{self.usage.prompt_tokens}+{self.usage.completion_tokens} tokens "
                f"({self.usage.calls} calls, {self.usage.cached} cached)"
            )
        return ", ".join(parts) or "nothing to do"


def run_jobs(
    jobs: Sequence[J],
    work: Callable[[J], tuple[str, Usage]],
    *,
    label: str,
    workers: int,
    summary: StageSummary,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    describe: Callable[[J], str] = str,
) -> StageSummary:
    """Run ``work`` on every job with ``workers`` threads; each returns (status, usage) into ``summary``.

    On cancel no new job starts, running ones finish (their files are whole), then Cancelled is raised.
    """
    progress = progress or NullProgress()
    progress.start(label, len(jobs))
    lock = threading.Lock()
    pending: set[Future[tuple[str, Usage]]] = set()
    names: dict[Future[tuple[str, Usage]], J] = {}
    todo = list(jobs)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        try:
            while todo or pending:
                while todo and len(pending) < max(1, workers) and not (cancel and cancel.is_set()):
                    job = todo.pop(0)
                    fut = pool.submit(work, job)
                    names[fut] = job
                    pending.add(fut)
                if not pending:
                    break
                done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for fut in done:
                    status, usage = fut.result()
                    with lock:
                        summary.statuses[status] += 1
                        summary.usage = summary.usage.add(usage)
                    progress.advance(1, f"{describe(names[fut])}: {status}")
        finally:
            for fut in pending:
                fut.cancel()
    check_cancel(cancel)
    return summary
