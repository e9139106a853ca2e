"""The tests step: a recording command or a scaffold, and the recorded cases."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, DataTable, Input, Label

from lmrbench.core.taskset import Task
from lmrbench.schemas.recording import RecordedCase


class TaskTests(Vertical):
    """Posts Record(command) or Scaffold(); shows the cases recorded for each implementation."""

    DEFAULT_CSS = """
    TaskTests { height: 1fr; }
    TaskTests #tests-cmd { width: 1fr; }
    TaskTests DataTable { height: 1fr; }
    """

    @dataclass
    class Record(Message):
        """Run the recording command on the golden code and write tests from what it observed."""

        command: str

    class Scaffold(Message):
        """Write a test scaffold for the author to fill in."""

    def compose(self) -> ComposeResult:
        yield Label("Tests: record the golden functions' inputs and outputs", classes="pane-title")
        yield Label(
            "The command runs in the repository with the golden code (e.g. python train.py);"
            " calls of a goal function become test cases. A scaffold leaves LMRBENCH-TODO values to fill in.",
            classes="hint",
        )
        with Horizontal(classes="row"):
            yield Input(placeholder="recording command", id="tests-cmd", select_on_focus=False)
            yield Button(
                "Record", id="record", variant="primary",
                tooltip="Run the command on the golden code and write the tests",
            )
            yield Button("Scaffold", id="scaffold")
        yield Label("", id="tests-status", classes="hint", markup=False)
        yield DataTable(id="tests-cases", cursor_type="row")

    def on_mount(self) -> None:
        """Columns of the case table."""
        self.query_one(DataTable).add_columns("impl", "test", "function", "arguments", "returns", "replay")

    def set_task(self, task: Task | None) -> None:
        """Say which task the tests belong to, which test files exist and the cases recorded; an empty command
        becomes the one the tests were recorded with."""
        status = self.query_one("#tests-status", Label)
        if task is None:
            status.update("the task is made in the draft folder when you record or scaffold")
            return
        have = [
            f"{impl.index}: {t}" for impl in task.info.implementations for t in impl.unit_test_files
            if (task.repo_dir / t).is_file()
        ]
        status.update(f"task {task.name}; test files: {', '.join(have) or 'none yet'}")
        from lmrbench.authoring.record.recorded_tests import recorded_cases, recorded_command

        for impl in task.info.implementations:  # the cases on disk, recorded in an earlier session too
            self.show_cases(impl.index, recorded_cases(task, impl.index))

        command = self.query_one("#tests-cmd", Input)
        if not command.value.strip():
            command.value = recorded_command(task)

    def show_cases(self, impl: int, cases: list[RecordedCase]) -> None:
        """Add the cases recorded for one implementation (replacing earlier ones of it)."""
        table = self.query_one(DataTable)
        for key in [k for k in table.rows if str(k.value).startswith(f"{impl}:")]:
            table.remove_row(key)
        for case in cases:
            args = ", ".join(f"{k}={v}" for k, v in case.arguments.items())
            cells = (str(impl), case.test, case.target, args, case.returns, case.replay)
            table.add_row(*cells, key=f"{impl}:{case.test}")

    @on(Button.Pressed, "#record")
    @on(Input.Submitted, "#tests-cmd")
    def action_record(self) -> None:
        """Ask the screen to record."""
        command = self.query_one("#tests-cmd", Input).value.strip()
        if not command:
            self.notify("type the command that exercises the goal functions", severity="warning")
            return
        self.post_message(self.Record(command))

    @on(Button.Pressed, "#scaffold")
    def action_scaffold(self) -> None:
        """Ask the screen for a scaffold."""
        self.post_message(self.Scaffold())
