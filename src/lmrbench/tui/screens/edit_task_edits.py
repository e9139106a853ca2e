"""What the edit screen edits: the task, the implementation shown, whether its fields changed since they were shown,
and writing them into info.json. A plain object the screen owns; it reads no widget and is tested without the app."""

from __future__ import annotations

from lmrbench.authoring.check.check import check_task
from lmrbench.authoring.task.metadata import ImplFields, PaperFields, update_info
from lmrbench.core.taskset import Task
from lmrbench.tui.widgets.metadata_form import Metadata
from lmrbench.tui.workers import running_text

Fields = tuple[str, Metadata]
"""An implementation's instruction and the metadata form's values, as the screen shows them."""

LOSABLE = ("tests", "validate", "mask")
"""The worker groups whose work leaving would lose (the screen asks first)."""


class TaskEdits:
    """The task being edited, the implementation shown and its fields as shown, and whether anything was saved."""

    def __init__(self) -> None:
        self.task: Task | None = None
        """The task as last loaded or saved, or None before it is loaded."""
        self.impl_index = 1
        """The implementation shown."""
        self.saved = False
        """Whether info.json or the task's files changed (the task set reloads it)."""
        self.files: list[str] = []
        """The repository's Python files (the retrieval context to pick from)."""
        self.shown: Fields | None = None
        """The fields as the screen showed them (or as last saved)."""

    def take(self, task: Task, files: list[str], index: int | None) -> int | None:
        """A task loaded, or changed by a worker (``index``: the implementation it changed, which counts as saved);
        the implementation to show (``index`` when the task has it, else its first), or None when it has none."""
        if index is not None:
            self.saved = True
        self.task = task
        self.files = files
        indexes = [i.index for i in task.info.implementations]
        if not indexes:
            return None
        return index if index in indexes else indexes[0]

    def select(self, index: int) -> Fields:
        """Show implementation ``index``: its instruction and the metadata the form takes."""
        assert self.task is not None
        info = self.task.info
        impl = info.implementation(index)
        self.impl_index = index
        cat = impl.category_normalized
        year = info.year if isinstance(info.year, int) else None
        md = Metadata(self.task.name, info.paper_name, info.paper_url, year, cat.value if cat else "",
                      list(impl.retrieval_context))  # fmt: skip
        return impl.instruction, md

    def changed(self, fields: Fields) -> bool:
        """Whether ``fields`` (the screen's now) differ from those shown."""
        return self.shown is not None and fields != self.shown

    def unsaved(self, fields: Fields, running: list[str]) -> str | None:
        """What leaving now would lose (the edits, the running work of the ``running`` groups), or None."""
        lost = []
        if self.task is not None and self.changed(fields):
            lost.append(f"the unsaved edits of {self.task.name}#{self.impl_index}")
        if groups := [g for g in running if g in LOSABLE]:
            lost.append(f"the running {running_text(groups)}")
        return " and ".join(lost) or None

    def refusal(self, md: Metadata, problems: dict[str, str]) -> str | None:
        """Why Save refuses the form's ``problems`` (field -> problem), or None; an official file's odd paper URL
        does not block other edits while it stays as it is."""
        assert self.task is not None
        if md.paper_url == self.task.info.paper_url:
            problems = {k: v for k, v in problems.items() if k != "paper_url"}
        return "; ".join(f"{k}: {v}" for k, v in problems.items()) or None

    def save(self, instruction: str, md: Metadata) -> Task:
        """Write the shown implementation's fields and the paper's into info.json (``update_info``: the core's rules,
        LmrError when one is broken, nothing written) and return the task reloaded."""
        assert self.task is not None
        edit = ImplFields(instruction, md.category, md.retrieval_context)
        self.task = update_info(
            self.task, PaperFields(md.paper_name, md.paper_url, md.year), {self.impl_index: edit},
            check_url=md.paper_url != self.task.info.paper_url,
        )
        self.saved = True
        return self.task

    def problems(self) -> list[str]:
        """The checks of ``task check`` as lines (``NAME: no problems`` when there is none)."""
        assert self.task is not None
        return check_task(self.task) or [f"{self.task.name}: no problems"]

    def result(self) -> str | None:
        """What the screen dismisses with: the task's folder name when something was saved, else None."""
        return self.task.name if self.saved and self.task is not None else None
