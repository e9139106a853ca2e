"""The new-task flow's steps that build the task's image: cancel while the work runs, record, validate and save."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.message import Message
from textual.widgets import Select, TextArea
from textual.worker import Worker, WorkerState

from helpers.pilot import open_and_clone, wait_for_workers
from lmrbench.authoring.check.check import check_task
from lmrbench.core.taskset import load_taskset
from lmrbench.tui.app import make_app
from lmrbench.tui.screens.taskset import TaskSetScreen
from lmrbench.tui.widgets.work_panel import WorkPanel

pytestmark = pytest.mark.anyio


@pytest.mark.docker
async def test_cancel_while_the_environment_is_prepared_or_the_recording_runs_leaves_nothing(
        fixture_repo: Path, bench: Path, make_repo, docker_engine) -> None:
    from helpers.docker_engine import build_containers, owned_containers

    # the driver script never ends: the work is still running when the cancel comes, however busy the machine
    train = (fixture_repo / "train.py").read_text() + "import time\ntime.sleep(3600)\n"
    make_repo(fixture_repo, {"train.py": train})
    seen: list[Message] = []
    app = make_app(bench, sandbox="docker")
    async with app.run_test(size=(150, 45), message_hook=seen.append) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        await pilot.press(*"prfloss", "enter", "enter")
        screen.go("tests")
        await pilot.pause()
        await pilot.press(*"python train.py", "ctrl+g")
        for _ in range(600):  # the draft task is created, then its environment is prepared
            if any(isinstance(m, WorkPanel.Started) and m.label.startswith("environment of") for m in seen):
                break
            await pilot.pause(0.1)
        else:
            pytest.fail("the build never started")
        assert screen.draft is not None and any(screen.draft.path.rglob("info.json"))
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("y")
        await wait_for_workers(app, pilot)
        assert isinstance(app.screen, TaskSetScreen)
        assert not any(w.is_running for w in app.workers)
        ends = [m.state for m in seen if isinstance(m, Worker.StateChanged) and m.worker.name == "record"]
        assert ends[-1] in (WorkerState.CANCELLED, WorkerState.ERROR)  # stopped, not finished
    assert list(bench.iterdir()) == []
    assert owned_containers(docker_engine) == [] and build_containers(docker_engine) == []


@pytest.mark.docker
async def test_record_validate_and_save_a_valid_task(fixture_repo: Path, bench: Path) -> None:
    from lmrbench.benchmark.validation.store import latest_results

    app = make_app(bench, sandbox="docker")
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        await pilot.press(*"prfloss", "enter", "enter")
        screen.go("paper")
        screen.query_one("#instruction", TextArea).text = "Implement the DPO loss."
        screen.go("metadata")
        screen.query_one("#md-category", Select).value = "Training Objectives & Optimization"
        screen.go("tests")
        await pilot.pause()
        await pilot.press(*"python train.py", "ctrl+g")
        await wait_for_workers(app, pilot)
        assert screen.query_one("#tests-cases").row_count >= 1
        screen.go("validate")
        await pilot.press("ctrl+g")
        await wait_for_workers(app, pilot)
        assert "the task is valid" in str(screen.query_one("#validate-summary").render())
        await pilot.press("ctrl+s")
        await wait_for_workers(app, pilot)
        assert isinstance(app.screen, TaskSetScreen)
        await wait_for_workers(app, pilot)
        table = app.screen.query_one("#tasks")
        row = [str(c) for c in table.get_row_at(0)]
        assert row[2] == "valid"

    (task,) = load_taskset(bench)[0]
    assert check_task(task) == []
    result = latest_results(bench)[(task.name, 1)]
    assert result.valid and result.golden_passed and result.masked_failed
    assert not any(p.name.startswith(".lmrbench-draft") for p in bench.iterdir())
