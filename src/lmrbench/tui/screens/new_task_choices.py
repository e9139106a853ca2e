"""What the author has chosen in the new-task flow so far, and the task spec it makes.

``TaskChoices`` is a plain object the new-task screen owns: the clone and its functions, the functions ticked,
whether they are masked, the paper's pages, Suggest's pick and the last valid validation. It reads no widget (the
screen hands it the form's values), so it is tested without the app.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lmrbench.authoring.task.draft import repo_folder_name
from lmrbench.authoring.task.task_spec import FunctionRef, TaskSpec, next_task_name
from lmrbench.core.source.index import function_refs
from lmrbench.errors import LmrError

if TYPE_CHECKING:
    from lmrbench.authoring.task.clone import ClonedRepo
    from lmrbench.authoring.task.mask import MaskStyle
    from lmrbench.core.source.index import FunctionInfo
    from lmrbench.tui.screens.suggest import Suggested
    from lmrbench.tui.widgets.metadata_form import Metadata


class TaskChoices:
    """The author's choices, kept consistent as the clone, the ticks and the paper change."""

    def __init__(self, bench: Path, pick: Suggested | None = None) -> None:
        self.bench = bench
        self.pick = pick
        """What Suggest chose: cloned at once, its function ticked, its paper loaded at the passage."""
        self.repo: ClonedRepo | None = None
        self.functions: list[FunctionInfo] = []
        self.selected: list[str] = []
        """The functions ticked (``file::qualname``, ``@line`` added for a name the file defines twice)."""
        self.masked = False
        """Whether the mask step has masked the ticked functions."""
        self.pages: dict[str, str] = {}
        self.valid_key: tuple[object, ...] | None = None
        """What the last valid validation was made for (``validated_key``), or None."""
        self._auto_name = ""

    def take_clone(self, repo: ClonedRepo, functions: list[FunctionInfo]) -> int:
        """Use a new clone, keeping the ticked functions it has too; how many ticked functions it lacks."""
        refs = set(function_refs(functions))
        kept = {key for key in self.selected if key in refs}
        lost = len(self.selected) - len(kept)
        self.repo = repo
        self.functions = functions
        self.selected = [k for k in self.selected if k in kept]
        return lost

    def tick_pick(self) -> str | None:
        """Tick Suggest's function when nothing is ticked yet and the clone has it; its reference
        (``file::qualname``, with ``@line`` when the file defines the name twice)."""
        if self.pick is None or self.selected:
            return None
        refs = function_refs(self.functions)
        at_line = [f"{f.ref}@{f.lineno}" for f in self.functions]  # Suggest names a row by its line
        for known in (at_line, refs):
            if self.pick.ref in known:
                self.selected = [refs[known.index(self.pick.ref)]]
                return self.selected[0]
        return None

    def files(self) -> list[str]:
        """The clone's files that hold a function, sorted."""
        return sorted({f.file for f in self.functions})

    def clone_summary(self, skipped: int) -> str:
        """One line on the clone: where, at which commit, how many functions in how many files."""
        if self.repo is None:
            return ""
        commit = (self.repo.commit or "no commit")[:12]
        counts = f"{len(self.functions)} functions in {len(self.files())} files"
        return f"cloned {self.repo.url} at {commit}: {counts}" + (f"; {skipped} files did not parse" if skipped else "")

    def masking(self) -> str:
        """What the mask step masks: the ticked functions."""
        return "masking: " + (", ".join(self.selected) or "none selected yet (step 2: enter on a function)")

    def source_of(self, fn: FunctionInfo) -> str | None:
        """The text of the file that holds ``fn`` in the clone (None before a clone; OSError when unreadable)."""
        if self.repo is None:
            return None
        return (self.repo.path / fn.file).read_text(encoding="utf-8", errors="replace")

    def tick(self, selected: Sequence[str]) -> None:
        """The functions ticked now (they are to be masked again)."""
        self.selected = list(selected)
        self.masked = False

    def take_paper(self, pages: dict[str, str]) -> Suggested | None:
        """The paper's text per page; Suggest's pick the first time (its page and passage to show), else None."""
        self.pages = pages
        pick, self.pick = self.pick, None
        return pick

    def name_task(self, md: Metadata) -> bool:
        """Name the task after the paper's title (the repository before one is typed) unless the author has
        typed a name of their own; True when ``md.name`` was set."""
        if md.name and md.name != self._auto_name:
            return False
        title = md.paper_name or (repo_folder_name(self.repo.url) if self.repo else "Task")
        md.name = self._auto_name = next_task_name(self.bench, title)
        return True

    def spec(self, bench: Path, md: Metadata, *, pdf: str, instruction: str, style: MaskStyle) -> TaskSpec:
        """The task spec these choices and the form's values make, for the task set ``bench`` (LmrError when a
        required part is missing)."""
        if self.repo is None:
            raise LmrError("clone a repository first (step 1)")
        if not self.selected:
            raise LmrError("select at least one function (step 2)")
        return TaskSpec(
            source=str(self.repo.path),
            functions=[FunctionRef.parse(k) for k in self.selected],
            instructions=[instruction],
            bench=bench,
            category=md.category,
            paper=Path(pdf).expanduser() if pdf else None,
            paper_url=md.paper_url,
            paper_name=md.paper_name,
            year=md.year,
            commit=None,
            name=md.name or None,
            repo_folder_name=repo_folder_name(self.repo.url),
            retrieval_context=md.retrieval_context,
            mask_style=style,
            repo_url=self.repo.url,
        )
