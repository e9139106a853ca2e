"""The new-task flow's last step: what keeps a task from being saved (the CLI's rules), Save, Cancel, and whether the
draft's validation still holds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on
from textual.widgets import Button, Label, TextArea

from lmrbench.authoring.task.draft import validation_state
from lmrbench.authoring.task.task_spec import refuse_duplicate
from lmrbench.errors import LmrError
from lmrbench.tui.dialogs.confirm import ConfirmDialog
from lmrbench.tui.screens.new_task_work import NewTaskWork
from lmrbench.tui.widgets.metadata_form import MetadataForm
from lmrbench.tui.workers import running_text

if TYPE_CHECKING:
    from lmrbench.authoring.task.clone import ClonedRepo
    from lmrbench.core.source.index import FunctionInfo

STEPS = [
    ("source", "Source"),
    ("function", "Function"),
    ("mask", "Mask"),
    ("paper", "Paper & instruction"),
    ("metadata", "Metadata"),
    ("tests", "Tests"),
    ("validate", "Build & validate"),
    ("save", "Save"),
]
"""The new-task flow's steps (key, title), in order."""
KEYS = [k for k, _ in STEPS]


class NewTaskSave(NewTaskWork):
    """Save and cancel of the new-task flow (the flow's screen defines the steps and ``go``)."""

    valid_key: tuple[object, ...] | None = None
    """What the last valid validation was made for (``validated_key``), or None."""
    selected: list[str]
    """The functions ticked (``file::qualname``), set by the flow's screen."""
    repo: ClonedRepo | None
    """The clone, set by the flow's screen."""
    functions: list[FunctionInfo]
    """The clone's functions, set by the flow's screen."""
    flagged: set[str]
    """Steps a refused validate or save named, set by the flow's screen."""

    def go(self, step: str) -> None:
        """Show a step (the flow's screen defines it)."""
        raise NotImplementedError

    def _validation(self) -> str:
        """``none``, ``current`` or ``stale`` (the draft, instruction or metadata changed since it was validated)."""
        try:
            return validation_state(self.valid_key, self.spec(self.bench))
        except LmrError:
            return "none" if self.valid_key is None else "stale"

    def step_problems(self, *, tests: bool = False) -> list[tuple[str, str]]:
        """Every part still missing or wrong, as (step, what to do), in the order of the steps; ``tests``: the tests
        too (validation needs them, Save does not)."""
        out: list[tuple[str, str]] = []
        if self.repo is None:
            out.append(("source", "clone a repository (ctrl+g)"))
        elif not self.functions:
            out.append(("source", "the repository has no Python function to mask: clone another"))
        if not self.selected:
            out.append(("function", "tick at least one function (enter on it)"))
        elif self.repo is not None:
            try:
                spec = self.spec(self.bench)
                refuse_duplicate(spec, self.bench / (spec.name or "-"), hint="pick another function")
            except LmrError as exc:
                out.append(("function", str(exc)))
        if not self.query_one("#instruction", TextArea).text.strip():
            out.append(("paper", "write the instruction"))
        out += [("metadata", f"{k}: {v}") for k, v in self.query_one(MetadataForm).check_fields().items()]
        task = self.draft_task
        if tests and (task is None or not all((task.repo_dir / t).is_file() for i in task.info.implementations
                                              for t in i.unit_test_files)):  # fmt: skip
            out.append(("tests", "record the tests (ctrl+g) or write a scaffold"))
        return out

    def _problems(self, *, tests: bool = False) -> list[str]:
        """The problems as lines that name their step: ``step 4: write the instruction``."""
        return [f"step {KEYS.index(step) + 1}: {text}" for step, text in self.step_problems(tests=tests)]

    def refuse(self, what: str, problems: list[tuple[str, str]]) -> bool:
        """When there are problems: mark their steps, list them all (a notification, and step 7's summary for a
        validate); True when refused."""
        if not problems:
            return False
        self.flagged = {step for step, _ in problems}
        self.refresh_marks()
        lines = [f"step {KEYS.index(step) + 1}: {text}" for step, text in problems]
        if what == "validate":
            self.query_one("#validate-summary", Label).update("cannot validate yet:\n" + "\n".join(lines))
        self.notify("\n".join(lines), title=f"Cannot {what} yet", severity="error", timeout=10)
        return True

    def _summarize(self) -> None:
        problems = self._problems()
        lines = [f"task set: {self.bench}"]
        if self.selected:
            lines.append("functions: " + ", ".join(self.selected))
        lines += [f"• {p}" for p in problems] or ["ready to save"]
        if self._validation() == "stale":
            lines.append("• the validation is stale (changed since): validate again (step 7), or the task set will "
                         "list the task as stale")
        self.query_one("#save-summary", Label).update("\n".join(lines))

    @on(Button.Pressed, "#save")
    def action_save(self) -> None:
        """Write the task into the task set (create_task), then leave; asks first when the draft was never
        validated or changed since."""
        if self.refuse("save", self.step_problems()):
            self.go("save")
            return
        unproven = {
            "none": "The draft was never validated (step 7): the task set will list it as not validated.",
            "stale": "The draft changed since it was validated: the task set will list it as stale.",
        }.get(self._validation())
        if unproven is None:
            self._save_now()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self._save_now()

        self.app.push_screen(ConfirmDialog(f"{unproven} Save anyway?", yes="Save"), answered)

    def _save_now(self) -> None:
        final = self.spec(self.bench)
        self.save(final, None if self.draft_task is None else self.draft_spec())

    @on(NewTaskWork.Saved)
    async def _saved(self, message: NewTaskWork.Saved) -> None:
        await self.discard_draft()
        self.dismiss(message.name)

    def unsaved_work(self) -> str | None:
        """What leaving now would lose (the app asks before quitting), or None."""
        if self.draft is None:
            return None
        running = running_text([w.group for w in self.running_workers])
        return "the draft task" + (f" and the running {running}" if running else "")

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Leave without saving (asks first when there is something to lose)."""
        lost = self.unsaved_work()
        if lost is None:
            self.dismiss(None)
            return

        async def answered(yes: bool | None) -> None:
            if yes:
                await self.discard_draft()
                self.dismiss(None)

        self.app.push_screen(ConfirmDialog(f"Discard {lost}?", yes="Discard"), answered)

    def action_stop_work(self) -> None:
        """Cancel every running worker of this screen."""
        for worker in self.running_workers:
            worker.cancel()
