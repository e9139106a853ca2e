"""What the sandbox provider and the scorer of one process share: the Docker runner, the harness's sandbox that
grades over it, and each task's image prepared once (``execution.unit.Prepared``, under the machine-wide lock)."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from lmrbench.benchmark.execution.unit import Prepared
from lmrbench.benchmark.sandbox.running.docker import DockerRunner
from lmrbench.core.taskset import Task
from lmrbench.harness.sandbox import Sandbox
from lmrbench.progress import NullProgress

logger = logging.getLogger("lmrbench.inspect")


class LogProgress(NullProgress):
    """Progress that passes lmrbench's log lines (image builds, warnings) to Python logging, which Inspect shows."""

    def log(self, line: str) -> None:  # noqa: D102
        (logger.warning if line.startswith("warning:") else logger.info)(line)


@dataclass
class Engine:
    """The Docker runner of this process, the grading sandbox over it and the images prepared so far."""

    sandbox: Sandbox
    prepared: Prepared = field(default_factory=Prepared)

    @property
    def runner(self) -> DockerRunner:
        """The Docker transport (the agent's containers and the graders' share its client and images)."""
        transport = self.sandbox.transport
        assert isinstance(transport, DockerRunner)
        return transport

    def image(self, task: Task) -> str:
        """The task's image tag, built when missing (once per process, and once per machine at a time)."""
        tag, _, _ = self.prepared.env_id(self.sandbox, task, rebuild=False, progress=LogProgress(), cancel=None)
        return tag


_lock = threading.Lock()
_engine: Engine | None = None


def engine() -> Engine:
    """This process's engine, made on first use. Candidates are graded untrusted and cold (no warm pool), as
    ``lmrbench evaluate`` grades them."""
    global _engine
    with _lock:
        if _engine is None:
            _engine = Engine(Sandbox(DockerRunner(), warm=False))
        return _engine
