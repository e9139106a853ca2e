"""Validate, Save and Cancel of the new-task flow: what keeps a task from being validated or saved (the CLI's
rules), which steps are done, whether the draft's validation still holds, and the questions asked before.

Both are plain objects the new-task screen owns. ``SaveRules`` reads the author's choices and the screen's ``Form``
and touches no widget, so it is tested without the app; ``SaveFlow`` acts through the screen (``FlowScreen``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lmrbench.authoring.task.draft import validation_state
from lmrbench.authoring.task.task_spec import TaskSpec, refuse_duplicate
from lmrbench.errors import LmrError
from lmrbench.tui.dialogs.confirm import ConfirmDialog
from lmrbench.tui.screens.new_task_steps import StepTracker, numbered

if TYPE_CHECKING:
    from textual.app import App
    from textual.notifications import SeverityLevel

    from lmrbench.core.taskset import Task
    from lmrbench.tui.screens.new_task_choices import TaskChoices
    from lmrbench.tui.screens.new_task_work import DraftWork

STALE = "stale: the task, its instruction or metadata changed since it was validated; ctrl+g validates again"
"""What the validate step says once the validation no longer holds."""


class Form(Protocol):
    """What the rules read of the new-task screen besides the choices: the form and the draft task."""

    @property
    def draft_task(self) -> Task | None:
        """The task made in the draft folder, or None."""

    def spec(self, bench: Path) -> TaskSpec:
        """The task spec built so far (LmrError when a required part is missing)."""

    def instruction(self) -> str:
        """The instruction as typed."""

    def metadata_problems(self, *, show: bool) -> dict[str, str]:
        """Metadata field -> problem; ``show``: also under each field."""


def tests_written(task: Task | None) -> bool:
    """Whether the draft task exists with every implementation's test files."""
    return task is not None and all((task.repo_dir / t).is_file() for i in task.info.implementations
                                    for t in i.unit_test_files)  # fmt: skip


class SaveRules:
    """The rules a draft meets before validate and Save, and the text that says where it stands."""

    def __init__(self, choices: TaskChoices, form: Form) -> None:
        self.choices = choices
        self.form = form

    def validation(self) -> str:
        """``none``, ``current`` or ``stale`` (the draft, instruction or metadata changed since it was validated)."""
        key = self.choices.valid_key
        try:
            return validation_state(key, self.form.spec(self.choices.bench))
        except LmrError:
            return "none" if key is None else "stale"

    def duplicate(self) -> str | None:
        """Why Save would refuse the ticked functions (another task masks one already), or None."""
        if self.choices.repo is None or not self.choices.selected:
            return None
        try:
            refuse_duplicate(self.form.spec(self.choices.bench), self.choices.bench / "-", hint="Save refuses it")
        except LmrError as exc:
            return str(exc)
        return None

    def complete(self) -> dict[str, bool]:
        """Step -> whether its part is done (Save never is before it has saved)."""
        flow, form = self.choices, self.form
        return {
            "source": flow.repo is not None and bool(flow.functions),  # no function to mask: not done
            "function": bool(flow.selected),
            "mask": flow.masked and bool(flow.selected),
            "paper": bool(form.instruction().strip()),
            "metadata": not form.metadata_problems(show=False),
            "tests": tests_written(form.draft_task),
            "validate": self.validation() == "current",
            "save": False,
        }

    def step_problems(self, *, tests: bool = False) -> list[tuple[str, str]]:
        """Every part still missing or wrong, as (step, what to do), in the order of the steps; ``tests``: the tests
        too (validation needs them, Save does not). Shows the metadata's problems under their fields."""
        flow, form = self.choices, self.form
        out: list[tuple[str, str]] = []
        if flow.repo is None:
            out.append(("source", "clone a repository (ctrl+g)"))
        elif not flow.functions:
            out.append(("source", "the repository has no Python function to mask: clone another"))
        if not flow.selected:
            out.append(("function", "tick at least one function (enter on it)"))
        elif flow.repo is not None:
            try:
                spec = form.spec(flow.bench)
                refuse_duplicate(spec, flow.bench / (spec.name or "-"), hint="pick another function")
            except LmrError as exc:
                out.append(("function", str(exc)))
        if not form.instruction().strip():
            out.append(("paper", "write the instruction"))
        out += [("metadata", f"{k}: {v}") for k, v in form.metadata_problems(show=True).items()]
        if tests and not tests_written(form.draft_task):
            out.append(("tests", "record the tests (ctrl+g) or write a scaffold"))
        return out

    def problems(self, *, tests: bool = False) -> list[str]:
        """The problems as lines that name their step: ``step 4: write the instruction``."""
        return numbered(self.step_problems(tests=tests))

    def summary(self) -> str:
        """What Save would write and what still keeps it from saving (the save step's text)."""
        problems = self.problems()
        lines = [f"task set: {self.choices.bench}"]
        if self.choices.selected:
            lines.append("functions: " + ", ".join(self.choices.selected))
        lines += [f"• {p}" for p in problems]
        untested = not tests_written(self.form.draft_task)
        if untested:  # Save does not need them, but a task without tests is not done: never "ready" in silence
            lines.append("• step 6: no tests yet (record them, or write a scaffold); Save writes the task without them")
        if not problems:
            lines.append("ready to save" + (", without tests" if untested else ""))
        if self.validation() == "stale":
            lines.append("• the validation is stale (changed since): validate again (step 7), or the task set will "
                         "list the task as stale")
        return "\n".join(lines)

    def unproven(self) -> str | None:
        """Why Save asks first (never validated, or changed since), or None when the validation is current."""
        return {
            "none": "The draft was never validated (step 7): the task set will list it as not validated.",
            "stale": "The draft changed since it was validated: the task set will list it as stale.",
        }.get(self.validation())


class FlowScreen(Form, Protocol):
    """What ``SaveFlow`` does through the new-task screen (Textual's ``notify``, ``dismiss`` and ``app`` too)."""

    @property
    def app(self) -> App[Any]:
        """The app (to ask a question)."""

    def go(self, step: str) -> None:
        """Show ``step``."""

    def refresh_marks(self) -> None:
        """Redraw the steps' marks."""

    def show_validation(self, text: str) -> None:
        """Say ``text`` on the validate step."""

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:  # fmt: skip
        """Show a notification."""

    def dismiss(self, result: str | None = None) -> object:
        """Close the flow with the saved task's name, or None."""


class SaveFlow:
    """Validate, Save and Cancel: each refused with every missing part listed by step, or asked about when
    something would be lost or unproven, then handed to ``DraftWork``; and the flow's other questions (``ask``)."""

    def __init__(self, screen: FlowScreen, rules: SaveRules, work: DraftWork, steps: StepTracker) -> None:
        self.screen = screen
        self.rules = rules
        self.work = work
        self.steps = steps

    def refuse(self, what: str, problems: list[tuple[str, str]]) -> bool:
        """When there are problems: mark their steps, list them all (a notification, and the validate step's
        summary for a validate); True when refused."""
        if not problems:
            return False
        lines = self.steps.flag(problems)
        self.screen.refresh_marks()
        if what == "validate":
            self.screen.show_validation("cannot validate yet:\n" + "\n".join(lines))
        self.screen.notify("\n".join(lines), title=f"Cannot {what} yet", severity="error", timeout=10)
        return True

    def validate(self) -> None:
        """Build the environment and validate the draft task; with parts missing, list them all by step."""
        if self.refuse("validate", self.rules.step_problems(tests=True)):
            return
        self.screen.show_validation("validating: the build and the runs are in the log below")
        try:
            spec = self.work.draft_spec()
            final = self.screen.spec(self.rules.choices.bench)
        except LmrError as exc:
            self.screen.notify(str(exc), severity="error")
            return
        self.work.validate(spec, final)

    def save(self) -> None:
        """Write the task into the task set (create_task), then leave; asks first when the draft was never
        validated or changed since."""
        if self.refuse("save", self.rules.step_problems()):
            self.screen.go("save")
            return
        unproven = self.rules.unproven()
        if unproven is None:
            self._save_now()
        else:
            self.ask(f"{unproven} Save anyway?", "Save", self._save_now)

    def _save_now(self) -> None:
        self.work.save(self.screen.spec(self.rules.choices.bench))

    async def saved(self, name: str) -> None:
        """The save has ended: remove the draft and leave with the task's name."""
        await self.work.discard()
        self.screen.dismiss(name)

    def cancel(self) -> None:
        """Leave without saving (asks first when there is something to lose)."""
        lost = self.work.unsaved()
        if lost is None:
            self.screen.dismiss(None)
            return

        async def discard() -> None:
            await self.work.discard()
            self.screen.dismiss(None)

        self.ask(f"Discard {lost}?", "Discard", discard)

    def ask(self, question: str, yes: str, then: Callable[[], Awaitable[None] | None]) -> None:
        """Ask ``question`` (a ``ConfirmDialog`` whose confirming button says ``yes``); when confirmed, run ``then``
        (awaited when it returns an awaitable)."""

        async def answered(confirmed: bool | None) -> None:
            if confirmed and inspect.isawaitable(done := then()):
                await done

        self.screen.app.push_screen(ConfirmDialog(question, yes=yes), answered)
