"""Where a task's code runs: the transport interface every sandbox plugin gives, and a run's result.

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
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

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


@dataclass(frozen=True)
class Environment:
    """A task's prepared environment as a transport runs it: what every run in it shares."""

    id: str
    """The image tag (Docker) or the venv folder (local)."""
    key: tuple[object, ...]
    """What tells a warm boot of this environment from another's (with the modules it preloads)."""
    ids: dict[str, list[int]] | None = None
    """The trusted side's and the candidate's ``[uid, gid]`` where the transport runs them as two users; None: one
    user (the local runner)."""
    env: dict[str, str] = field(default_factory=dict)
    """Variables every run in it gets (a mounted cache's ``HF_HOME``)."""
    reads: tuple[str, ...] = ()
    """The only paths, besides its own tree and /dev, that the process running a candidate's code may read (the
    local runner confines it by Landlock: the interpreter, the standard library, the packages, shared libraries);
    () where the transport keeps it apart otherwise (a container, another user)."""
    image_id: str = ""
    """The image's id where the environment is an image ('' otherwise, or when the engine cannot say)."""
    framework: str = ""
    """The framework layer the image builds on, with where its torch came from ('' without one)."""
    options: dict[str, Any] = field(default_factory=dict)
    """The transport's own (a container's resources)."""


class Channel(Protocol):
    """A long-lived process of an environment (a warm boot) as its transport keeps it: bytes in on its stdin; its
    stdout and stderr go to the ``on_output`` the transport was given."""

    def send(self, data: bytes) -> None:
        """Write to its stdin (OSError or ValueError when it is gone)."""

    def kill(self) -> None:
        """Stop it at once (a cancel); never raises."""

    def close(self) -> None:
        """End it (EOF, then stop it) and free what it holds; idempotent, never raises."""


Output = Callable[[int, bytes], None]
"""Where a channel's bytes go: stream 1 (stdout) or 2 (stderr), and the bytes."""


class Transport(Protocol):
    """What a sandbox is to the harness: it prepares a task's environment, spawns one process in it with input,
    limits, a kill and a wait, and opens long-lived processes there. What the process is (the boot script and its
    payload) and how its output is read are the harness's (``harness/sandbox.py``)."""

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

    def environment(self, task: Task) -> Environment:
        """The task's environment for a run (prepared when it is not); LmrError when it cannot be had."""
        ...

    def root(self, environment: Environment, warm_run: int | None) -> AbstractContextManager[str]:
        """The folder a run's boot unpacks into, as the process sees it, for the time of the run: a cold run's
        (``warm_run`` None) or the ``warm_run``-th run of a warm boot."""
        ...

    def spawn(
        self,
        task: Task,
        environment: Environment,
        root: str,
        command: list[str],
        stdin: bytes,
        *,
        timeout: float,
        t0: float,
        network: bool = False,
        cancel: threading.Event | None = None,
    ) -> tuple[RunResult, bytes]:
        """Run ``command`` (``python3`` first: the environment's interpreter) in a fresh process (a fresh
        container) fed ``stdin``, with the transport's limits, until it ends or ``timeout`` seconds past ``t0``
        (then every process of it is killed); how it ended (its stderr as the output) and its stdout. ``cancel``
        kills it and raises :class:`~lmrbench.progress.Cancelled`. A failure of the transport itself is the
        result's ``infra_error``."""
        ...

    def open(self, task: Task, environment: Environment, command: list[str], on_output: Output,
             on_end: Callable[[], None]) -> Channel | None:
        """Start ``command`` as a long-lived process of the environment, with the limits and isolation of a run,
        its output fed to ``on_output`` and ``on_end`` called when its output ends; None when it cannot start."""
        ...

    def close(self) -> None:
        """End what the transport keeps between runs (an engine connection); idempotent."""
        ...


def tail(text: str, limit: int = OUTPUT_TAIL_CHARS) -> str:
    """The last ``limit`` characters of ``text``."""
    return text if len(text) <= limit else text[-limit:]


def killed_at_timeout(output: str, timeout: float) -> str:
    """A run's output with the line that says it was killed at its timeout (every runner says it alike)."""
    return tail(output + f"\n[killed: timeout after {timeout:g} s]")
