"""The ``lmr_bench`` task for Inspect AI: one sample per implementation of an lmrbench task set.

``inspect eval lmrbench/lmr_bench -T bench=DIR --model M``. Each sample's sandbox is an ``lmrbench`` container of
its task's image holding the agent view; the default solver is Inspect's basic agent with a bash tool there; the
scorer (``lmr_grade``) reads the implementation's goal files back from the sandbox and grades them as ``lmrbench
evaluate`` grades a candidate, in containers of its own, keeping the verdict's evidence in the sample's metadata.
"""

from __future__ import annotations

import logging
import posixpath
from dataclasses import replace
from functools import partial
from pathlib import Path

import anyio
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import Solver, TaskState, basic_agent, system_message
from inspect_ai.tool import bash
from inspect_ai.util import OutputLimitExceededError, SandboxEnvironmentSpec, sandbox
from inspect_ai.util._sandbox.limits import override_max_read_file_size

from lmrbench.benchmark.agents.container import WORKSPACE
from lmrbench.benchmark.agents.runner import image_exposes
from lmrbench.benchmark.pipeline.agent import PROMPT_FILE, agent_prompt
from lmrbench.benchmark.pipeline.evaluate import DEFAULT_TIMEOUT, category_of
from lmrbench.core.source.tree import MAX_SOURCE_BYTES
from lmrbench.core.taskset import Task as LmrTask
from lmrbench.core.taskset import load_task, load_taskset
from lmrbench.errors import LmrError
from lmrbench.integrations.inspect.grading import grade_goal_files
from lmrbench.integrations.inspect.sandbox import LmrbenchConfig
from lmrbench.schemas.task_info import Implementation

logger = logging.getLogger("lmrbench.inspect")

SYSTEM = (
    "You are reproducing research code. You work in a container with no network, in the folder "
    f"{WORKSPACE}, which holds the paper's code repository with some functions left unimplemented, the paper "
    f"and {PROMPT_FILE}. Run shell commands with the bash tool: read the paper and the code, implement the "
    "functions in place, and run the code to check it (the repository's own Python and packages are installed; "
    "the tests that grade you are not given). When the functions are implemented, call submit; your answer is "
    "the goal file as you left it."
)


def sample_prompt(task: LmrTask, impl: Implementation) -> str:
    """The instruction of one implementation: ``lmrbench agent``'s TASK.md for it alone, its paths in the
    workspace."""
    one = replace(task, info=task.info.model_copy(update={"implementations": [impl]}))
    return agent_prompt(one) + f"\nThe paths above are relative to {WORKSPACE}.\n"


def samples(bench: Path, only: list[str] | None = None, lifetime: float = 7200.0) -> list[Sample]:
    """One sample per implementation of the task set at ``bench`` (``only``: the tasks named); a task that cannot
    be loaded, or whose image would expose its golden files and tests, is left out with a warning."""
    tasks, problems = load_taskset(bench, only)
    for problem in problems:
        logger.warning("not loaded: %s", problem)
    out = []
    for t in tasks:
        if (exposed := image_exposes(t)) is not None:
            logger.warning("%s: not run: %s", t.name, exposed)
            continue
        spec = SandboxEnvironmentSpec("lmrbench", LmrbenchConfig(task=str(t.path.resolve()), lifetime=lifetime))
        for impl in t.info.implementations:
            metadata = {"task": t.name, "task_path": str(t.path.resolve()), "impl": impl.index,
                        "category": category_of(impl) or "", "paper": t.info.paper_name,
                        "goal_files": list(impl.goal_files), "goal_functions": list(impl.goal_functions)}  # fmt: skip
            out.append(Sample(id=f"{t.name}#{impl.index}", input=sample_prompt(t, impl), sandbox=spec,
                              metadata=metadata))  # fmt: skip
    if not out:
        raise LmrError("no task of the set can be run (see the warnings above)", bench)
    return out


@scorer(metrics=[accuracy(), stderr()])
def lmr_grade(timeout: float = DEFAULT_TIMEOUT, evidence: str = "") -> Scorer:
    """Grade the implementation's goal files as they are in the sample's sandbox with lmrbench's tests (split
    from the candidate where the task allows); 1 when every declared test passes. ``evidence``: a folder where
    each verdict's evidence is also written, sealed, as ``lmrbench evaluate`` writes it."""

    async def score(state: TaskState, target: Target) -> Score:
        lmr = load_task(Path(str(state.metadata["task_path"])))
        impl = lmr.info.implementation(int(state.metadata["impl"]))
        files: dict[str, bytes | str] = {}
        for rel in impl.goal_files:
            path = posixpath.join(WORKSPACE, lmr.info.repo_folder_name, rel)
            try:
                with override_max_read_file_size(MAX_SOURCE_BYTES):
                    files[rel] = await sandbox().read_file(path, text=False)
            except OutputLimitExceededError:
                files[rel] = f"over the size cap of {MAX_SOURCE_BYTES} bytes"
            except (OSError, TimeoutError) as exc:  # not found, a folder, unreadable, not a regular file
                files[rel] = str(exc)
        grade = partial(grade_goal_files, lmr, impl.index, files, timeout=timeout,
                        evidence_dir=Path(evidence) if evidence else None)
        graded = await anyio.to_thread.run_sync(grade)
        result = graded.result
        state.metadata["lmrbench"] = {"result": result.model_dump(mode="json"), "evidence": graded.evidence}
        return Score(
            value=CORRECT if graded.passed else INCORRECT,
            explanation=(f"{result.passed_tests}/{result.total_tests} tests passed"
                         + (f": {result.reason}" if result.reason else "")),
            metadata={"status": result.status.value, "passed_tests": result.passed_tests,
                      "total_tests": result.total_tests, "isolation": result.isolation,
                      "weaker_evidence": result.weaker_evidence, "env_id": result.env_id},
        )  # fmt: skip

    return score


def default_solver(command_timeout: int, message_limit: int) -> Solver:
    """Inspect's basic agent with a bash tool in the sandbox, one submission (more would show it the verdict)."""
    return basic_agent(init=system_message(SYSTEM), tools=[bash(timeout=command_timeout)], max_attempts=1,
                       message_limit=message_limit)  # fmt: skip


@task
def lmr_bench(
    bench: str,
    tasks: str = "",
    solver: Solver | None = None,
    command_timeout: int = 300,
    message_limit: int = 50,
    time_limit: int = 3600,
    grade_timeout: float = DEFAULT_TIMEOUT,
    evidence: str = "",
) -> Task:
    """An lmrbench task set as an Inspect task.

    Args:
      bench: The task set's folder.
      tasks: Comma-separated task folder names or instance ids to keep (all when empty).
      solver: The solver (default: the basic agent with bash in the task's container).
      command_timeout: Seconds one bash command may run.
      message_limit: Messages of one sample at most.
      time_limit: Seconds of one sample at most (its container lives no longer).
      grade_timeout: Seconds the grading tests may run.
      evidence: A folder where each verdict's evidence is also written, sealed ('' for none).
    """
    only = [t.strip() for t in tasks.split(",") if t.strip()] or None
    dataset = MemoryDataset(samples(Path(bench), only, lifetime=float(time_limit) + 600), name=Path(bench).name)
    return Task(dataset=dataset, solver=solver or default_solver(command_timeout, message_limit),
                scorer=lmr_grade(timeout=grade_timeout, evidence=evidence), time_limit=time_limit)  # fmt: skip
