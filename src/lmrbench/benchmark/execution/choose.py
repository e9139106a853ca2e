"""Which executor runs a command's units: threads of this machine (the default) or a Ray cluster."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from lmrbench.benchmark.execution.schedule import Executor
from lmrbench.core.sandbox import SandboxKind
from lmrbench.core.taskset import Task
from lmrbench.errors import UsageError
from lmrbench.harness.sandbox import Sandbox
from lmrbench.progress import Progress

if TYPE_CHECKING:
    from lmrbench.benchmark.sandbox.running.run_limits import RunLimits

ExecutorKind = Literal["local", "ray"]
MakeExecutor = Callable[[dict[str, Task]], Executor]
"""Makes the executor for the tasks that have work, so that nothing starts (no cluster connection, no base
image) when every result is reused."""


def executor_factory(
    kind: str | None,
    *,
    sandbox: SandboxKind | Sandbox | None = None,
    address: str | None = None,
    jobs: int | None = None,
    limits: RunLimits | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    untrusted: bool = False,
) -> MakeExecutor:
    """The executor of ``kind`` (None: local). Asking for Ray without it installed is a one-line LmrError now,
    before any work; ``address`` is for Ray only. ``sandbox`` is a kind, or (local executor only) a sandbox
    made already. ``untrusted`` (candidates): no silent fallback to the local runner (``get_sandbox``)."""
    if kind not in (None, "local", "ray"):
        raise UsageError(f"unknown executor {kind!r}; use local or ray")
    if isinstance(sandbox, str | None) and sandbox not in (None, "docker", "local"):
        raise UsageError(f"unknown sandbox {sandbox!r}; use docker or local")
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be at least 1 (got {jobs})")
    if kind == "ray":
        from lmrbench.benchmark.execution.ray_cluster import RayExecutor, import_ray

        import_ray()

        def make_ray(tasks: dict[str, Task]) -> Executor:
            kind = sandbox if isinstance(sandbox, str) else sandbox.name if sandbox else "docker"
            return RayExecutor(tasks, address=address, jobs=jobs, sandbox=kind, limits=limits)

        return make_ray
    if address:
        raise UsageError("--address needs --executor ray")

    def make_local(tasks: dict[str, Task]) -> Executor:
        from lmrbench.benchmark.execution.sandboxes import get_sandbox
        from lmrbench.benchmark.execution.threads import ThreadExecutor
        from lmrbench.benchmark.sandbox.environments.base_image import ensure_base_image

        box = sandbox if not isinstance(sandbox, str | None) else get_sandbox(sandbox, progress=progress,
                                                                                limits=limits, untrusted=untrusted)
        ensure_base_image(box.transport, progress=progress or _null(), cancel=cancel)
        return ThreadExecutor(box, tasks, jobs=jobs or 1, progress=progress, cancel=cancel)

    return make_local


def _null() -> Progress:
    from lmrbench.progress import NullProgress

    return NullProgress()
