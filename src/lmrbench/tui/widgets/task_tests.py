"""The tests step: a recording command or a scaffold, and the recorded test files of the task."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Button, DataTable, Input, Label

from lmrbench.authoring.taskset import Task


class TaskTests(Vertical):
    """Posts Record(command) or Scaffold(); shows the task's unit test files (set_task after each change)."""

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
            "The command runs in the repository with the golden code (e.g. python examples/run.py);"
            " every call of a goal function becomes a recorded test case.",
            classes="hint",
        )
        with Horizontal(classes="row"):
            yield Input(placeholder="recording command", id="tests-cmd")
            yield Button("Record (ctrl+g)", id="record", variant="primary")
            yield Button("Scaffold", id="scaffold")
        yield Label("", id="tests-status", classes="hint")
        yield DataTable(id="tests-files", cursor_type="row")

    def on_mount(self) -> None:
        """Columns of the file table."""
        table = self.query_one(DataTable)
        table.add_columns("implementation", "test file", "exists", "recorded data files")

    def set_task(self, task: Task | None) -> None:
        """Show the unit test files of a task (None: no draft task yet)."""
        table = self.query_one(DataTable)
        table.clear()
        status = self.query_one("#tests-status", Label)
        if task is None:
            status.update("the draft task is created when you record or scaffold")
            return
        data_dir = task.repo_dir / "unit_test"
        files = data_dir.rglob("*") if data_dir.is_dir() else iter(())
        data = [p for p in files if p.is_file() and p.suffix != ".py"]
        for impl in task.info.implementations:
            for test in impl.unit_test_files:
                exists = (task.repo_dir / test).is_file()
                table.add_row(str(impl.index), test, "yes" if exists else "no", str(len(data)))
        status.update(f"draft task {task.name}")

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
