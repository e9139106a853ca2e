"""The command palette lists the screen's actions; the edit screen changes a task's info.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.widgets import Input, TextArea

from helpers.pilot import wait_for_workers
from lmrbench.authoring.check.check import check_task
from lmrbench.core.taskset import load_task
from lmrbench.tui.app import make_app
from lmrbench.tui.screens.edit_task import EditTaskScreen
from lmrbench.tui.screens.new_task import NewTaskScreen
from lmrbench.tui.screens.taskset import TaskSetScreen

pytestmark = pytest.mark.anyio


async def test_every_binding_has_an_id_and_a_tooltip(bench: Path) -> None:
    app = make_app(bench)
    async with app.run_test() as pilot:
        await wait_for_workers(app, pilot)
        for screen in (TaskSetScreen, NewTaskScreen, EditTaskScreen, type(app)):
            for binding in screen.BINDINGS:
                assert binding.id and binding.tooltip and binding.description, (screen.__name__, binding)


async def test_palette_runs_a_screen_action(bench: Path) -> None:
    app = make_app(bench)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_workers(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"new task")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, NewTaskScreen)


async def test_edit_instruction_and_metadata(new_task, bench: Path) -> None:
    task = new_task()
    app = make_app(bench)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_for_workers(app, pilot)
        await pilot.press("e")
        await wait_for_workers(app, pilot)
        screen = app.screen
        assert isinstance(screen, EditTaskScreen)
        area = screen.query_one("#edit-instruction", TextArea)
        assert area.text == "Implement the DPO loss."
        area.text = "Implement the DPO loss on log-ratios (eq. 7)."
        screen.query_one("#md-year", Input).value = "1800"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert load_task(task.path).info.year == 2023  # a bad year is refused, nothing written
        screen.query_one("#md-year", Input).value = "2024"
        screen.query_one("#md-paper_url", Input).value = "https://arxiv.org/abs/2305.18290"
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("escape")
        await wait_for_workers(app, pilot)
        assert isinstance(app.screen, TaskSetScreen)

    raw = json.loads((task.path / "info.json").read_text())
    assert raw["year"] == 2024 and raw["paper_url"] == "https://arxiv.org/abs/2305.18290"
    assert raw["implementations"][0]["instruction"] == "Implement the DPO loss on log-ratios (eq. 7)."
    assert raw["implementations"][0]["goal_function"] == "preference_loss"
    assert check_task(load_task(task.path)) == []


def test_cli_refuses_a_file_as_the_task_set(tmp_path: Path) -> None:
    import subprocess
    import sys

    target = tmp_path / "notes.txt"
    target.write_text("x")
    cli = Path(sys.executable).with_name("lmrbench")
    out = subprocess.run([str(cli), "tui", str(target)], capture_output=True, text=True)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [f"error: {target}: not a folder"]


async def test_add_an_implementation_and_remask_in_the_edit_screen(new_task, bench: Path) -> None:
    import subprocess
    import sys

    from textual.widgets import Select

    task = new_task()
    app = make_app(bench)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_for_workers(app, pilot)
        await pilot.press("e")
        await wait_for_workers(app, pilot)
        screen = app.screen
        assert isinstance(screen, EditTaskScreen)
        before = {p: p.read_bytes() for p in task.path.rglob("*") if p.is_file()}
        screen.query_one("#add-function", Input).value = "losses.py::Scaler.scal"
        screen.query_one("#add-instruction", Input).value = "Scale by k."
        await pilot.press("ctrl+o")
        await wait_for_workers(app, pilot)
        assert "Scaler.scale" in str(screen.query_one("#work-label").render())  # the error, in the app
        assert {p: p.read_bytes() for p in task.path.rglob("*") if p.is_file()} == before

        screen.query_one("#add-function", Input).value = "losses.py::Scaler.scale"
        await pilot.click("#add-impl")
        await wait_for_workers(app, pilot)
        assert screen.query_one("#impl", Select).value == 2
        screen.query_one("#mask-style", Select).value = "pass"
        await pilot.press("ctrl+b")
        await wait_for_workers(app, pilot)
        await pilot.press("escape")
        await wait_for_workers(app, pilot)

    info = load_task(task.path).info
    assert [(i.index, i.goal_function, i.class_name) for i in info.implementations] == [
        (1, "preference_loss", ""), (2, "scale", "Scaler")]
    assert info.implementation(2).instruction == "Scale by k."
    assert info.implementation(2).category == info.implementation(1).category
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import losses, numpy as np\n"
            "assert losses.Scaler(2).scale(3) is None\n"
            "assert losses.preference_loss(np.zeros(1), np.zeros(1)) is None\nprint('pass-masked')\n")
    out = subprocess.run([sys.executable, "-c", code, str(task.repo_dir)], capture_output=True, text=True)
    assert out.stdout.strip() == "pass-masked", out.stderr
    assert [p for p in check_task(load_task(task.path)) if "unit_test_2" not in p] == []
