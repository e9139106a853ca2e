"""Where a task's code runs: the Sandbox interface and its result.

Layout every sandbox gives a run (the same in a container and in a local temp folder, made by the runtime's
boot script): ``<root>/trusted/repo`` is the working directory of the command, a copy of the tree;
``$LMRBENCH_OUT`` (``<root>/trusted/out``) is an empty folder whose content is copied back to ``out_dir``;
``$LMRBENCH_HARNESS`` (``<root>/trusted/harness``) holds the ``harness_files`` and is first on ``PYTHONPATH``.

A split run also has a ``Worker``: the candidate's repository (``<root>/cand/repo``) and a process that serves
the goal functions' calls from it over two pipes (``$LMRBENCH_CALL_FDS`` on both sides). In a container the two
sides run as two users who cannot read each other's files; the local runner has one user (weaker, and says so).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from lmrbench.core.taskset import Task
from lmrbench.core.treeview import Tree
from lmrbench.progress import Progress

OUTPUT_TAIL_CHARS = 4_000_000
"""How much of a command's combined output a RunResult keeps (the end of it): the whole output of any real test
run, stored beside its result as a log file (the JSON results keep a short tail)."""

SandboxKind = Literal["docker", "local"]
LOCAL_FALLBACK = "using the local runner, whose isolation is weaker than a container's"
"""The end of the line that says why the automatic choice fell back to the local runner."""


@dataclass(frozen=True)
class Worker:
    """The candidate's side of a split run."""

    tree: Tree
    """The candidate's repository: only its goal functions differ from the task's; no tests, no data."""
    argv: list[str]
    """The worker's command, run in its copy of ``tree``."""
    files: dict[str, bytes] = field(default_factory=dict)
    """The worker's harness (first on its ``PYTHONPATH``)."""
    frameworks: tuple[str, ...] = ()
    """Top-level modules of the environment (``torch``) that the boot imports once, before either side starts,
    and that both sides inherit by forking from it (see ``runtime/lmrbench_boot.py``); empty: each side's
    interpreter is started afresh."""


@dataclass(frozen=True)
class RunResult:
    """How one command ended in a sandbox."""

    exit_code: int | None
    """The command's exit status; None when it was killed by the timeout or never started."""
    timed_out: bool
    """True when the wall-clock timeout killed it."""
    output: str
    """The command's stdout+stderr (its last ``OUTPUT_TAIL_CHARS``), decoded with errors="replace"."""
    duration: float
    """Wall-clock seconds."""
    infra_error: str | None = None
    """Set when the sandbox itself failed (engine gone, copy failed): not the candidate's fault."""
    worker_output: str = ""
    """The end of the candidate's worker's output (split runs), kept apart from the command's."""

    def log_tail(self, limit: int) -> str:
        """The end of the command's output, then (split runs) the end of the worker's, labelled: ``limit``
        characters in all."""
        if not self.worker_output.strip():
            return self.output[-limit:]
        half = limit // 2
        return f"{self.output[-half:]}\n--- the candidate's process ---\n{self.worker_output[-half:]}"

    def full_log(self) -> str:
        """The whole output kept: the command's, then (split runs) the candidate's process's, labelled."""
        if not self.worker_output.strip():
            return self.output
        return f"{self.output}\n--- the candidate's process ---\n{self.worker_output}"


class Sandbox(Protocol):
    """An isolated place to run a task's commands on a copy of a repo tree."""

    name: SandboxKind

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
        tree: Tree,
        argv: list[str],
        *,
        timeout: float,
        env: dict[str, str] | None = None,
        out_dir: Path | None = None,
        network: bool = False,
        harness_files: dict[str, bytes] | None = None,
        worker: Worker | None = None,
        cancel: threading.Event | None = None,
        trusted: bool = False,
        preload: tuple[str, ...] = (),
    ) -> RunResult:
        """Run ``argv`` in a fresh copy of ``tree`` (never the tree itself) and return how it ended; ``cancel``
        ends the run (every process of it) and raises :class:`~lmrbench.progress.Cancelled`. ``trusted``: the
        code under test is the task's own (golden, masked, a mutant), never a candidate's, so the run may be
        served by a warm sandbox that served the task's other trusted runs (each still in fresh processes on
        fresh copies). ``preload``: installed modules (dotted names too) a warm sandbox imports once, besides
        its frameworks and pytest, before it forks the runs; only for trusted runs, and ignored by a cold one."""
        ...

    def close(self) -> None:
        """End what the sandbox keeps between runs (warm containers or processes): the end of a command."""
        ...


def tail(text: str, limit: int = OUTPUT_TAIL_CHARS) -> str:
    """The last ``limit`` characters of ``text``."""
    return text if len(text) <= limit else text[-limit:]


def killed_at_timeout(output: str, timeout: float) -> str:
    """A run's output with the line that says it was killed at its timeout (every runner says it alike)."""
    return tail(output + f"\n[killed: timeout after {timeout:g} s]")
