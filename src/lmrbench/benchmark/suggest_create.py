"""``task suggest --create N``: make tasks of the best candidates in one go, each as ``task new``, ``task record``
and ``validate`` would (their functions, called here), with a draft instruction written from the matched passage,
improved by a model when an OpenAI-compatible endpoint is given, and marked in info.json for a person to check.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from lmrbench.authoring.record.record import record_tests
from lmrbench.authoring.record.recorded_tests import RecordResult
from lmrbench.authoring.suggest.paper_passages import paper_title
from lmrbench.authoring.suggest.suggest import Candidate, Suggestion
from lmrbench.authoring.suggest.suggest_draft import draft_instruction, mark_draft, review_note
from lmrbench.authoring.task.task_new import create_task
from lmrbench.authoring.task.task_spec import FunctionRef, TaskSpec
from lmrbench.benchmark.pipeline.llm import LLMClient, LLMConfig
from lmrbench.benchmark.validation.task import validate_task
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError, UsageError
from lmrbench.harness.sandbox import Sandbox
from lmrbench.progress import NullProgress, Progress, check_cancel
from lmrbench.schemas.validation import ImplValidation

_SYSTEM = (
    "You write the instruction of a task of a research-code reproduction benchmark: a person or a model "
    "implements one masked function of a paper's repository from the paper and the instruction. Say what the "
    "function must compute, in the paper's terms, its inputs and its result; never write code."
)


@dataclass
class Created:
    """What ``--create`` made of one candidate."""

    candidate: Candidate
    instruction: str
    task: Task | None = None
    record: RecordResult | None = None
    validation: list[ImplValidation] = field(default_factory=list)
    error: str | None = None
    """The step that failed and why (the task folder, once made, is kept for the author to fix)."""
    seconds: float = 0.0
    """From the start of ``task new`` to the end of validation."""

    @property
    def valid(self) -> bool:
        """True when every implementation validated valid."""
        return bool(self.validation) and all(v.valid for v in self.validation)


def eligible(candidate: Candidate) -> str | None:
    """Why a candidate cannot be made a task now (None when it can)."""
    if candidate.task:
        return f"already task {candidate.task}"
    if candidate.not_recordable:
        return f"cannot be recorded: {candidate.not_recordable}"
    if candidate.caller is None:
        return "no command calls it"
    return None


def improve_instruction(config: LLMConfig, candidate: Candidate, draft: str) -> str:
    """The draft rewritten by the model (the draft itself when the reply is empty)."""
    passage = candidate.ranked.passage
    user = (
        f"Function: {candidate.function.ref}\nPaper passage ({passage.label}):\n{passage.text}\n\n"
        f"Draft instruction:\n{draft}\n\nRewrite the draft as the task's instruction in at most 150 words. "
        "Reply with the instruction only."
    )
    with LLMClient(config) as client:
        reply = client.complete([{"role": "system", "content": _SYSTEM}, {"role": "user", "content": user}])
    return reply.text.strip() or draft


def create_tasks(
    suggestion: Suggestion,
    repo: Path,
    paper: Path,
    bench: Path,
    count: int,
    *,
    sandbox: Sandbox,
    llm: LLMConfig | None = None,
    repo_url: str | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> list[Created]:
    """Tasks of the best ``count`` eligible candidates in ``bench``: created, recorded with the command that
    called the function, validated. A step that fails is kept in ``Created.error`` and the next candidate goes."""
    progress = progress or NullProgress()
    if count < 1:
        raise UsageError("--create must be at least 1")
    chosen = [c for c in suggestion.candidates if eligible(c) is None][:count]
    title = paper_title(paper)
    made: list[Created] = []
    for cand in chosen:
        check_cancel(cancel)
        start = time.monotonic()
        instruction = draft_instruction(cand.function, cand.ranked.passage)
        if llm is not None:
            progress.start(f"instruction of {cand.function.qualname} by {llm.params.model}", None)
            instruction = improve_instruction(llm, cand, instruction)
        out = Created(cand, instruction)
        made.append(out)
        spec = TaskSpec(source=str(repo), functions=[FunctionRef(cand.function.file, cand.function.qualname)],
                        instructions=[instruction], bench=Path(bench), paper=Path(paper), paper_name=title,
                        repo_url=repo_url)
        try:
            task = create_task(spec, progress=progress, cancel=cancel)
            out.task = mark_draft(task, review_note(cand.ranked.passage, llm.params.model if llm else None))
            out.record = record_tests(out.task, 1, str(cand.caller), sandbox=sandbox, progress=progress,
                                      cancel=cancel)
            out.validation = validate_task(out.task.path, sandbox=sandbox.name, progress=progress, cancel=cancel)
        except LmrError as exc:
            step = "task new" if out.task is None else "record" if out.record is None else "validate"
            out.error = f"{step}: {exc}"
        out.seconds = time.monotonic() - start
    return made
