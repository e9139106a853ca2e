"""Edit's ctrl+g on a task the task set has just validated, unchanged since, keeps that result; again: anew."""

from __future__ import annotations

import pytest

from helpers.pilot import wait_for_workers
from lmrbench.benchmark.validation.store import result_path
from lmrbench.benchmark.validation.task import validate_task
from lmrbench.core.taskset import Task
from lmrbench.defaults import default_run_dir
from lmrbench.tui.app import make_app
from lmrbench.tui.screens.edit_task import EditTaskScreen

pytestmark = pytest.mark.anyio


async def test_an_unchanged_validated_task_is_not_run_again(small_task: Task) -> None:
    bench = small_task.path.parent
    validate_task(small_task.path, sandbox="local")  # what the task set's V does
    stored = result_path(default_run_dir(bench), small_task.name, 1)
    before = stored.read_bytes()
    app = make_app(bench, sandbox="local")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_workers(app, pilot)
        app.push_screen(EditTaskScreen(small_task.path, sandbox="local"))
        await wait_for_workers(app, pilot)
        await pilot.press("ctrl+g")
        await wait_for_workers(app, pilot)
        assert stored.read_bytes() == before  # the stored result is shown, not made again
        assert any("ctrl+g again" in n.message for n in app._notifications)
        await pilot.press("ctrl+g")
        await wait_for_workers(app, pilot)
        assert stored.read_bytes() != before  # asked twice: run anew
