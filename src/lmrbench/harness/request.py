"""One sandbox command of a run, with everything it needs decided before it starts (``spec.plan_variant``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from lmrbench.core.sandbox import Worker
from lmrbench.core.taskset import Task
from lmrbench.core.treeview import Tree


@dataclass(frozen=True)
class RunRequest:
    """A test command on a copy of ``tree``: its test files, limits, environment, and how far it is trusted."""

    task: Task
    tree: Tree
    test_files: list[str]
    timeout: float
    expected_ids: list[str] | None = None
    """The test ids that must be present and pass (None: every case of the report)."""
    env: dict[str, str] = field(default_factory=dict)
    worker: Worker | None = None
    """The candidate's process of a split run (None: the tests and the code share one process)."""
    trusted: bool = False
    """The code under test is the task's own (golden, masked, a mutant): a warm boot may serve it."""
    preload: tuple[str, ...] = ()
    """Installed modules a warm boot imports once for it (trusted runs only)."""
    kind: Literal["pytest", "legacy"] = "pytest"
    """pytest: decided from a sealed junit report; legacy: from the official scripts' sealed logs."""
