"""The commands of a run as data, everything decided before they start (``spec.plan_variant``): what a sandbox
runs (``SandboxRequest``) and, for a test command, how its verdict is decided (``RunRequest``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from lmrbench.core.sandbox import Worker
from lmrbench.core.taskset import Task
from lmrbench.core.treeview import Tree
from lmrbench.harness.tagged import TaggedVariant


@dataclass(frozen=True)
class SandboxRequest:
    """One command in a fresh copy of ``tree``: its argv, limits, environment, harness files, the candidate's
    worker of a split run, and what fills the goal functions (whose type says how far the code is trusted)."""

    task: Task
    tree: Tree
    argv: list[str]
    timeout: float
    env: dict[str, str] = field(default_factory=dict)
    harness_files: dict[str, bytes] = field(default_factory=dict)
    """Files placed in ``$LMRBENCH_HARNESS`` (first on ``PYTHONPATH``)."""
    worker: Worker | None = None
    """The candidate's process of a split run (None: the command and the code share one process)."""
    variant: TaggedVariant | None = None
    """What fills the goal functions; None: a command of the task's tooling (recording, a probe), run cold."""
    preload: tuple[str, ...] = ()
    """Installed modules a warm boot imports once for it (the task's own code only)."""
    network: bool = False
    """Whether the command may reach the network (never for a test run)."""

    @property
    def warm_ok(self) -> bool:
        """True when a warm boot may serve it: the code under test is the task's own, and no network."""
        return self.variant is not None and self.variant.trusted and not self.network


@dataclass(frozen=True)
class RunRequest:
    """A test command of a run: what the sandbox runs, and what its verdict is decided from."""

    command: SandboxRequest
    kind: Literal["pytest", "legacy"]
    """pytest: decided from a sealed junit report; legacy: from the official scripts' sealed logs."""
    test_files: list[str]
    expected_ids: list[str] | None = None
    """The test ids that must be present and pass (None: every case of the report)."""
    key: bytes = b""
    """The key the command's report is sealed with (in ``command.harness_files``, read once by the sealer)."""
