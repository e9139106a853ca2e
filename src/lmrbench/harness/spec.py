"""The run as a spec, built first: a tagged variant that carries its trust, and one planning step that turns a task,
an implementation and a variant into the commands of its run, or the reason it cannot be run.

``plan_variant`` decides everything a run needs before anything starts (SWE-bench's ``make_test_spec`` before
``run_instance``): split or shared, the trees each side reads, the candidate's worker, the test files of each
command (pytest, then the official scripts), their argv, harness files and seal keys, the ids they must report, the
environment and the modules a warm boot may preload: one ``request.RunRequest`` per command, which the executors
(``pytest_run.run_pytest``, ``legacy.run_legacy``) write down as its spec before it starts. A candidate that cannot
be built (a goal function gone, a syntax error, a file the folder lacks) is ``Rejected``, with its reason: a wrong
answer. The task's own code that cannot be built is a broken task, an ``LmrError``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lmrbench.core.source.tree import build_tree, candidate_view, trusted_view
from lmrbench.core.taskset import Task
from lmrbench.core.treeview import Tree
from lmrbench.core.trust import impl_test_files, isolation_of
from lmrbench.errors import LmrError
from lmrbench.harness.import_closure import closure_modules
from lmrbench.harness.legacy import is_legacy_test, legacy_request
from lmrbench.harness.pytest_run import WATCH_READS, pytest_request
from lmrbench.harness.request import RunRequest
from lmrbench.harness.split import declared_ids, framework_modules, goal_modules, goals_env, make_worker
from lmrbench.harness.tagged import Candidate, Golden, Masked, Mutant, TaggedVariant
from lmrbench.schemas.task_info import Implementation

__all__ = ["Candidate", "Golden", "Masked", "Mutant", "Plan", "Rejected", "RunOptions", "TaggedVariant",
           "plan_variant"]


@dataclass(frozen=True)
class RunOptions:
    """The caller's settings of a run."""

    timeout: float
    expected_ids: list[str] | None = None
    """Ids every command must report passed besides those its test files declare (e.g. the golden run's)."""
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Plan:
    """The commands of one variant's run, and how it is isolated (``why``: the reason of a shared run)."""

    requests: list[RunRequest]
    isolation: str
    why: str


@dataclass(frozen=True)
class Rejected:
    """A candidate that cannot be built, and the test files its run would have had to pass."""

    reason: str
    expected: list[str]


def plan_variant(task: Task, impl: Implementation, variant: TaggedVariant, options: RunOptions,
                 scratch: Path) -> Plan | Rejected:
    """The run of ``variant`` of ``impl``: its commands, or why the candidate cannot be run. ``scratch``: an
    empty folder the caller owns for as long as the run lasts (a shared run's tree is written there; a split
    run reads the task in place). LmrError for a task that cannot be run (no tests, its own code broken)."""
    files = impl_test_files(task, impl)
    if not files:
        raise LmrError(f"implementation {impl.index} has no unit tests", task.path / "info.json")
    mode, why = isolation_of(task, impl)
    golden = isinstance(variant, Golden)
    worker = None
    tree: Tree
    try:
        if mode == "split":  # both sides read the task's repository in place: nothing is copied
            worker = make_worker(candidate_view(task, [impl.index], variant.source()), goal_modules(impl),
                                 framework_modules(task, impl), watch_reads=golden)
            tree = trusted_view(task)
        else:
            tree = build_tree(task, [impl.index], variant.source(), scratch / "shared" / task.info.repo_folder_name)
    except LmrError as exc:
        if variant.trusted:  # the task's own code: a broken task, not an answer
            raise
        return Rejected(str(exc), files)
    env = {**options.env, **(goals_env(task, impl) if worker else {})}
    if worker and golden:  # the files the trusted tests read are trusted (see validation)
        env[WATCH_READS] = "1"
    # the task's own code: a warm sandbox may import the installed modules it needs once, for every run
    preload = closure_modules(task, impl) if variant.trusted else ()
    legacy = [f for f in files if is_legacy_test(task.repo_dir / f)]  # test files are the task's own
    modern = [f for f in files if f not in legacy]
    requests: list[RunRequest] = []
    if modern:
        wanted = declared_ids(task, modern)
        wanted += [i for i in options.expected_ids or [] if i not in legacy and i not in wanted]
        requests.append(pytest_request(task, tree, modern, options.timeout, expected_ids=wanted or None, env=env,
                                       worker=worker, variant=variant, preload=preload))
    if legacy:  # legacy reports use the scripts' paths as ids: every script must pass
        requests.append(legacy_request(task, tree, legacy, options.timeout, env=env, worker=worker,
                                       variant=variant, preload=preload))
    return Plan(requests, mode, why)
