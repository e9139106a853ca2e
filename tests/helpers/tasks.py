"""The one task factory of the tests: copies of the example task set, hand-written task folders in the official
layout, and tasks made by the product's own task creation.

Modules that hold a fixture task's code (small_task, vec_task, run_task, defect_set, synthetic_runs,
record_fixture) say what the task is; this module writes it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lmrbench.core.taskset import Task
from lmrbench.harness.spec import TaggedVariant

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"
"""The example task set shipped with the project (read it, never write to it: copy it first)."""


def copy_examples(dest: Path) -> Path:
    """A copy of the whole example task set at ``dest``, without results of earlier runs; returns ``dest``."""
    shutil.copytree(EXAMPLES, dest, ignore=shutil.ignore_patterns(".lmrbench"))
    return dest


def copy_example(name: str, bench: Path) -> Path:
    """A copy of the example task ``name`` (e.g. ``1-DPO``) inside the task set folder ``bench``; returns it."""
    dest = bench / name
    shutil.copytree(EXAMPLES / name, dest, ignore=shutil.ignore_patterns(".lmrbench"))
    return dest


@dataclass(frozen=True)
class Impl:
    """One entry of info.json's ``implementations`` (its index is its place in the list, from 1)."""

    function: str
    test_file: str
    instruction: str = "Implement it."
    category: str = "Other"
    class_name: str = ""
    extra: Mapping[str, object] = field(default_factory=dict)
    """Further keys of the entry (``retrieval_context``, ``checker``, ...), or ones that replace the above."""


def write_task(
    bench: Path,
    name: str,
    *,
    repo: str,
    goal_file: str,
    goal: str,
    golden: str,
    impls: Sequence[Impl],
    files: Mapping[str, str] | None = None,
    info: Mapping[str, object] | None = None,
    dockerfile: bool | str = False,
) -> Path:
    """Write the task folder ``bench/name`` in the official layout and return it.

    ``goal`` is the text of the repository's goal file (masked or not, as the test wants), ``golden`` the golden
    file ``golden_files/<goal stem>_golden.py``, ``files`` further repository files (tests, data) by path,
    ``info`` further top-level info.json keys. ``dockerfile``: True writes the product's Dockerfile, a string is
    written as the Dockerfile, False writes none.
    """
    task = bench / name
    repo_dir = task / repo
    golden_file = f"golden_files/{Path(goal_file).stem}_golden.py"
    texts = {goal_file: goal, **(files or {})}
    repo_dir.mkdir(parents=True)
    for rel, text in texts.items():
        (repo_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo_dir / rel).write_text(text)
    (task / golden_file).parent.mkdir(parents=True)
    (task / golden_file).write_text(golden)
    entries = [
        {"instruction": impl.instruction, "index": k, "category": impl.category, "goal_file": goal_file,
         "goal_function": impl.function, "class_name": impl.class_name, "golden_file": golden_file,
         "unit_test_file": impl.test_file, **impl.extra}
        for k, impl in enumerate(impls, start=1)
    ]  # fmt: skip
    doc = {"instance_id": int(name.split("-")[0]), "paper_name": name, "folder_name": name,
           "repo_folder_name": repo, **(info or {}), "implementations": entries}  # fmt: skip
    (task / "info.json").write_text(json.dumps(doc, indent=4))
    if isinstance(dockerfile, str):
        (task / "Dockerfile").write_text(dockerfile)
    elif dockerfile:
        from lmrbench.authoring.check.dockerfile import write_dockerfile

        write_dockerfile(task, repo)
    return task


def create_task(
    source: Path,
    bench: Path,
    functions: Sequence[str],
    *,
    instruction: str = "Implement it.",
    category: str = "Training Objectives & Optimization",
    name: str | None = None,
    force: bool = False,
    paper_name: str = "",
    year: int | None = None,
) -> Task:
    """A task of the git repository ``source`` made by ``task new``'s own code, masking ``functions``
    (``path::qualname``), in the task set ``bench``."""
    from lmrbench.authoring.task.task_new import create_task as create
    from lmrbench.authoring.task.task_spec import FunctionRef, TaskSpec

    spec = TaskSpec(source=str(source), functions=[FunctionRef.parse(f) for f in functions],
                    instructions=[instruction], bench=bench, category=category, name=name, paper_name=paper_name,
                    year=year)  # fmt: skip
    return create(spec, force=force)


def tagged(variant: object) -> TaggedVariant:
    """A test's shorthand for a variant as the harness takes it: ``"golden"``, ``"masked"``, a candidate's
    folder, or a candidate's goal files."""
    from lmrbench.harness.spec import Candidate, Golden, Masked

    if variant == "golden":
        return Golden()
    if variant == "masked":
        return Masked()
    if isinstance(variant, Path):
        return Candidate(folder=variant)
    assert isinstance(variant, dict)
    return Candidate(files=dict(variant))


def as_candidate(task: Task, impl_index: int, which: str = "golden") -> TaggedVariant:
    """The task's own golden (or masked) goal files handed in as a candidate's: run untrusted, never warm."""
    from lmrbench.harness.spec import Candidate

    impl = task.info.implementation(impl_index)
    files = {}
    for k, goal in enumerate(impl.goal_files):
        path = task.golden_path(impl, k) if which == "golden" else task.goal_path(impl, k)
        files[goal] = path.read_text("utf-8")
    return Candidate(files=files)
