"""The default executor: units run in threads of this process, each in its own sandbox run.

Every run started here carries a random token in its environment; ``stop`` kills the runs holding it (Docker
containers found by their label, local process groups by their environment), so Ctrl-C leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from lmrbench.benchmark.execution.unit import Prepared, RunUnit, UnitResult, execute, infra_report
from lmrbench.core.taskset import Task
from lmrbench.harness.sandbox import Sandbox
from lmrbench.progress import Cancelled, NullProgress, Progress

RUN_TOKEN_ENV = "LMRBENCH_RUN_TOKEN"
"""Set in every run's environment so that an interrupted command can find and stop its own runs."""


class ThreadExecutor:
    """Units in ``jobs`` threads, against one sandbox of this machine."""

    name = "local"

    def __init__(
        self,
        sandbox: Sandbox,
        tasks: dict[str, Task],
        *,
        jobs: int = 1,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.sandbox_name = sandbox.name
        self.slots = max(1, jobs)
        self._tasks = tasks
        self._progress = progress or NullProgress()
        self._cancel = cancel or threading.Event()
        self._prepared = Prepared()
        self._token = secrets.token_hex(8)
        self._pool = ThreadPoolExecutor(max_workers=self.slots, thread_name_prefix="lmrbench-run")
        self._futures: dict[Future[UnitResult], RunUnit] = {}

    def submit(self, unit: RunUnit) -> None:
        """Start ``unit`` in a thread."""
        marked = RunUnit(**{**unit.__dict__, "env": {**unit.env, RUN_TOKEN_ENV: self._token}})
        fut = self._pool.submit(execute, marked, self._tasks[unit.task.path], self.sandbox, self._prepared,
                                progress=self._progress, cancel=self._cancel)
        self._futures[fut] = unit

    def wait(self, timeout: float) -> list[tuple[RunUnit, UnitResult]]:
        """The units that ended (their exceptions as infrastructure errors; Cancelled raised)."""
        done, _ = wait(list(self._futures), timeout=timeout, return_when=FIRST_COMPLETED)
        out = []
        for fut in done:
            unit = self._futures.pop(fut)
            try:
                out.append((unit, fut.result()))
            except Cancelled:
                raise
            except Exception as exc:  # a bug in one run never stops the others; a re-run retries it
                out.append((unit, UnitResult(infra_report(f"{type(exc).__name__}: {exc}", self.sandbox_name))))
        return out

    def stop(self) -> None:
        """Kill the runs in flight (by this executor's token) until every thread is done."""
        self._cancel.set()
        self.sandbox.close()
        for fut in self._futures:
            fut.cancel()
        while any(not f.done() for f in self._futures):
            stop_runs(self._token)
            wait(list(self._futures), timeout=0.5)
        stop_runs(self._token)
        self._futures.clear()

    def close(self) -> None:
        """Let the threads go, and end the sandbox's warm containers or processes."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.sandbox.close()


def stop_runs(token: str) -> int:
    """Kill every sandbox run of this machine started with ``token`` in its environment; returns how many.

    Docker: the containers of lmrbench runs (found by the runner's label, then the token in their environment)
    are removed. Local: the process groups whose environment holds the token are killed.
    """
    needle = f"{RUN_TOKEN_ENV}={token}"
    stopped = 0
    try:
        import docker

        from lmrbench.benchmark.sandbox.environments.containers import RUN_LABEL

        client = docker.from_env(timeout=10)
        try:
            for c in client.containers.list(all=True, filters={"label": RUN_LABEL}):
                if needle in (c.attrs.get("Config", {}).get("Env") or []):
                    with contextlib.suppress(docker.errors.APIError):
                        c.remove(force=True)
                        stopped += 1
        finally:
            client.close()
    except Exception:  # no engine: nothing of ours can run there
        pass
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        if needle.encode() in environ.split(b"\0"):
            with contextlib.suppress(OSError):
                os.killpg(os.getpgid(int(proc.name)), signal.SIGKILL)
                stopped += 1
    return stopped
