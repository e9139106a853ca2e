"""The pieces of a split run: the worker's harness, the trusted side's, and the test ids a task declares."""

from __future__ import annotations

import ast
import json
from pathlib import PurePosixPath

from lmrbench import jsonsafe, pyparse
from lmrbench.core.sandbox import Worker
from lmrbench.core.source.tree import goal_plan
from lmrbench.core.taskset import Task
from lmrbench.core.treeview import Tree
from lmrbench.core.trust import impl_test_files
from lmrbench.defaults import recording_folder
from lmrbench.errors import LmrError
from lmrbench.fsutil import read_capped
from lmrbench.runtime import worker_files
from lmrbench.runtime.lmrbench_protocol import ENV_GOALS
from lmrbench.schemas.task_info import Implementation

WORKER_ARGV = ["python", "-c", "import sys, lmrbench_worker; sys.exit(lmrbench_worker.main())"]
"""The worker's command (``-c``, not ``-m``: runpy and what it imports would be paid again in every run)."""


WATCH_READS_ARG = "watch-reads"
"""The worker's second argument in a golden run: it reports the repository files the goal code reads."""

FRAMEWORKS = ("numpy", "scipy", "pandas", "torch", "sklearn", "transformers", "jax", "tensorflow")
"""Third-party modules whose import costs a split run's two sides seconds each: imported once by the boot and
inherited by both (``framework_modules``)."""


def make_worker(cand_tree: Tree, preload: list[str] | None = None, frameworks: list[str] | None = None, *,
                watch_reads: bool = False) -> Worker:
    """The worker of a split run over the candidate's tree: the worker program and the codec, nothing else.
    ``preload``: goal modules it imports as it starts, while the trusted side starts (``goal_modules``);
    ``frameworks``: modules both sides inherit from the boot (``framework_modules``); ``watch_reads`` (golden
    runs only): its replies name the repository files the golden code read, which are the code's own inputs and
    so are never marked trusted (hidden from candidates) for being read by the tests."""
    argv = [*WORKER_ARGV, json.dumps(preload or [])] if preload or watch_reads else list(WORKER_ARGV)
    if watch_reads:
        argv.append(WATCH_READS_ARG)
    return Worker(tree=cand_tree, argv=argv, files=worker_files(), frameworks=tuple(frameworks or ()))


def framework_modules(task: Task, impl: Implementation) -> list[str]:
    """The ``FRAMEWORKS`` the goal files and the test files import, in that order, leaving out a name the
    repository itself holds at its root (``torch.py``, ``torch/``), which would shadow the installed one."""
    names: set[str] = set()
    for rel in [*impl.goal_files, *impl_test_files(task, impl)]:
        try:
            names |= pyparse.imported_modules(pyparse.parse(read_capped(task.repo_dir / rel, 16 << 20)))
        except (LmrError, OSError, SyntaxError, ValueError):
            continue
    repo = task.repo_dir
    return [m for m in FRAMEWORKS if m in names and not (repo / f"{m}.py").exists() and not (repo / m).exists()]


def goal_modules(impl: Implementation) -> list[str]:
    """The dotted names the goal files are most likely imported under from the repository's root
    (``dpo/trainers.py`` -> ``dpo.trainers``): the worker imports them early, so that a torch import overlaps the
    trusted side's start instead of following it. A wrong guess costs an import, never a result."""
    out = []
    for goal in impl.goal_files:
        parts = list(PurePosixPath(goal).with_suffix("").parts)
        if parts and parts[-1] == "__init__":
            parts.pop()
        if parts and all(p.isidentifier() for p in parts):
            out.append(".".join(parts))
    return out


def goals_env(task: Task, impl: Implementation) -> dict[str, str]:
    """``LMRBENCH_GOALS``: the goal functions the trusted side proxies, file by file, with the factory the
    recording named for their instances (the worker builds an instance with it when some of its attributes
    cannot cross the boundary)."""
    factory = recorded_factory(task, impl)
    goals = [
        {"file": goal, "qualname": q, "factory": factory} for goal, quals in goal_plan(task, impl) for q in quals
    ]
    return {ENV_GOALS: json.dumps(goals)}


def recorded_factory(task: Task, impl: Implementation) -> str | None:
    """The ``--self-factory`` of the implementation's recording, if it was recorded with one."""
    index = task.repo_dir / recording_folder(impl.index) / "index.json"
    try:
        data = jsonsafe.loads(read_capped(index, 16 << 20), where=index)
    except (LmrError, ValueError):
        return None
    factory = data.get("self_factory") if isinstance(data, dict) else None
    return factory if isinstance(factory, str) and ":" in factory else None


def declared_ids(task: Task, test_files: list[str]) -> list[str]:
    """The pytest ids the test files declare (``unit_test.unit_test_1::test_case_1``, ``...::TestX::test_y``):
    every one must be in the report and pass; a parametrized test is matched by its ``[...]`` cases."""
    ids: list[str] = []
    for rel in test_files:
        path = task.repo_dir / rel
        try:
            tree = pyparse.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (OSError, SyntaxError) as exc:
            raise LmrError(f"the test file cannot be read: {exc}", path) from None
        module = ".".join(PurePosixPath(rel).with_suffix("").parts)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
                ids.append(f"{module}::{node.name}")
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name.startswith("test"):
                        ids.append(f"{module}.{node.name}::{item.name}")
    return ids


def id_matches(expected: str, case_id: str) -> bool:
    """True when a report's case is the expected test or one of its parametrized cases."""
    return case_id == expected or case_id.startswith(expected + "[")
