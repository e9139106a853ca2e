"""Where a task's code runs: the Sandbox interface, its result, and the choice between Docker and local.

Layout every sandbox gives the command it runs (the same in a container and in a local temp folder):
``<root>/repo`` is the working directory, a copy of the tree; ``$LMRBENCH_OUT`` (``<root>/out``) is an empty
folder whose content is copied back to ``out_dir``; ``$LMRBENCH_HARNESS`` (``<root>/harness``) holds the
``harness_files`` given to ``run`` and is first on ``PYTHONPATH``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from lmrbench.core.taskset import Task
from lmrbench.progress import Progress

OUTPUT_TAIL_CHARS = 20_000
"""How much of a command's combined output a RunResult keeps (the end of it)."""

RunnerKind = Literal["docker", "local"]


@dataclass(frozen=True)
class RunResult:
    """How one command ended in a sandbox."""

    exit_code: int | None
    """The command's exit status; None when it was killed by the timeout or never started."""
    timed_out: bool
    """True when the wall-clock timeout killed it."""
    output: str
    """The end of stdout+stderr, decoded with errors="replace"."""
    duration: float
    """Wall-clock seconds."""
    infra_error: str | None = None
    """Set when the sandbox itself failed (engine gone, copy failed): not the candidate's fault."""


class Sandbox(Protocol):
    """An isolated place to run a task's commands on a copy of a repo tree."""

    name: RunnerKind

    def prepare(
        self,
        task: Task,
        *,
        rebuild: bool = False,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
    ) -> str:
        """Make the task's environment ready (image or venv, cached by hash); return its id."""
        ...

    def run(
        self,
        task: Task,
        tree: Path,
        argv: list[str],
        *,
        timeout: float,
        env: dict[str, str] | None = None,
        out_dir: Path | None = None,
        network: bool = False,
        harness_files: dict[str, bytes] | None = None,
    ) -> RunResult:
        """Run ``argv`` in a fresh copy of ``tree`` (never the tree itself) and return how it ended."""
        ...


def tail(text: str, limit: int = OUTPUT_TAIL_CHARS) -> str:
    """The last ``limit`` characters of ``text``."""
    return text if len(text) <= limit else text[-limit:]
