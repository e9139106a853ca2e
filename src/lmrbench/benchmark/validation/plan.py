"""What validating an implementation will run: its settings, the problems that stop it before anything runs,
and the mutants of its golden code."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lmrbench.authoring.testgen import TODO_MARK
from lmrbench.benchmark.validation.weakness import DEFAULT_MIN_KILL_RATE
from lmrbench.core.taskset import STATE_DIRS, Task
from lmrbench.core.trust import impl_test_files
from lmrbench.errors import LmrError
from lmrbench.fsutil import lfs_pointers
from lmrbench.schemas.task_info import Implementation

if TYPE_CHECKING:
    from lmrbench.authoring.mutants import Mutant


@dataclass
class ValidateOptions:
    """How thoroughly to validate."""

    repeat: int = 3
    """Golden runs per implementation; outcomes that disagree mark the test flaky."""
    timeout: float = 600.0
    """Wall-clock limit of one test run, in seconds."""
    max_mutants: int = 12
    """Most mutants run per implementation (picked evenly from the generated ones)."""
    min_kill_rate: float = DEFAULT_MIN_KILL_RATE
    """An implementation whose tests kill fewer mutants than this is valid but weak."""
    jobs: int = 1
    """Test runs at once, each in its own container (or, with a cluster, on any node)."""
    force: bool = False
    """Validate again even where a matching result exists."""
    rebuild: bool = False
    """Rebuild each task's environment."""


def static_problems(task: Task, impl: Implementation) -> list[str]:
    """Reasons an implementation is invalid before anything runs: no tests, unfinished scaffolds."""
    files = impl_test_files(task, impl)
    if not files:
        return ["no unit tests"]
    problems = []
    for f in files:
        text = (task.repo_dir / f).read_text(encoding="utf-8", errors="replace")
        if TODO_MARK in text:
            problems.append(f"{f}: scaffold still holds {TODO_MARK}")
    pointers = lfs_pointers(task.path, skip=frozenset({".git", *STATE_DIRS}))
    if pointers:
        shown = ", ".join(p.as_posix() for p in pointers[:3]) + (f" and {len(pointers) - 3} more" if len(pointers) > 3
                                                                  else "")
        problems.append(f"{len(pointers)} file(s) are Git LFS pointers, not their content ({shown}): run "
                        "`git lfs pull` in the source repository and copy the files into the task")
    return problems


PlannedMutant = tuple[str, str, "Mutant"]
"""(goal file, qualname, mutant of the whole golden file)."""


def pick_mutants(mutants: list[PlannedMutant], limit: int) -> list[PlannedMutant]:
    """At most ``limit`` mutants, spread evenly over the generated list (deterministic)."""
    if limit <= 0:
        return []
    if len(mutants) <= limit:
        return mutants
    step = len(mutants) / limit
    return [mutants[int(i * step)] for i in range(limit)]


def plan_mutants(task: Task, impl: Implementation) -> list[PlannedMutant]:
    """Every mutant of every goal function of ``impl``, in a deterministic order."""
    from lmrbench.authoring.mutants import generate_mutants  # LibCST: loaded only when mutants are made

    out: list[PlannedMutant] = []
    names = impl.qualnames
    for which, goal in enumerate(impl.goal_files):
        golden = task.golden_path(impl, which)
        try:
            source = golden.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise LmrError(f"cannot read the golden file: {exc}", golden) from None
        for q in names:
            try:
                mutants = generate_mutants(source, q, file=goal)
            except LmrError:
                if len(impl.goal_files) > 1:
                    continue  # the function lives in another goal file
                raise
            out.extend((goal, q, m) for m in mutants)
    return out


def mutant_files(task: Task, impl: Implementation, goal: str, mutant: Mutant) -> dict[str, str]:
    """The goal files of a mutant variant: the mutated goal file, the other goal files golden."""
    return {
        other: mutant.source if other == goal else task.golden_path(impl, which).read_text(encoding="utf-8")
        for which, other in enumerate(impl.goal_files)
    }
