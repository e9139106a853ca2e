"""A draft instruction for a suggested task, written from the paper passage its function matched, and the note
that marks it as a draft for a person to check (kept in info.json's ``provenance``)."""

from __future__ import annotations

import re
from pathlib import Path

from lmrbench.authoring.suggest.paper_passages import Passage
from lmrbench.core.source.index import FunctionInfo
from lmrbench.core.taskset import Task
from lmrbench.schemas.task_info import save_task_info

MAX_PASSAGE_CHARS = 900
"""The passage is quoted up to the last sentence that ends before this many characters."""
REVIEW_KEY = "instruction"
"""The provenance key that says the instruction is a draft."""


def _quoted(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= MAX_PASSAGE_CHARS:
        return text
    cut = text[:MAX_PASSAGE_CHARS]
    end = max(cut.rfind(". "), cut.rfind(".) "))
    return cut[: end + 1] if end > 0 else cut.rstrip() + " ..."


def draft_instruction(function: FunctionInfo, passage: Passage) -> str:
    """``Implement `name` in file as the paper describes it (p. 3, 3 Method): <the passage>``."""
    what = f"the method `{function.qualname}`" if function.is_method else f"the function `{function.qualname}`"
    return (
        f"Implement {what} in {function.file} as the paper describes it ({passage.label}): "
        f"{_quoted(passage.text)}"
    )


def review_note(passage: Passage, model: str | None = None) -> str:
    """The provenance note of a draft: where it came from, and that a person must check it."""
    source = f"the paper's passage {passage.label}"
    by = f", rewritten by the model {model}" if model else ""
    return f"draft written from {source}{by}; a person must check it before the task is published"


def mark_draft(task: Task, note: str) -> Task:
    """Record ``note`` under provenance ``instruction`` in the task's info.json (atomically)."""
    provenance = dict(task.info.provenance or {})
    provenance[REVIEW_KEY] = note
    info = task.info.model_copy(update={"provenance": provenance})
    save_task_info(info, Path(task.path) / "info.json")
    return Task(task.path, info)
