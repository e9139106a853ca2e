"""The new-task flow keeps the CLI's rules: no second task of a masked function, a validation that no longer holds
is marked stale, and ctrl+g asks before restarting work that runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button, Input, Select, TextArea

from helpers.pilot import open_and_clone, screen_text, wait_for_workers
from lmrbench.authoring.task.draft import validated_key
from lmrbench.core.taskset import load_task
from lmrbench.tui.app import make_app
from lmrbench.tui.dialogs.confirm import ConfirmDialog

pytestmark = pytest.mark.anyio


async def test_a_function_another_task_masks_is_refused_as_the_cli_does(new_task, fixture_repo: Path,
                                                                        bench: Path) -> None:  # fmt: skip
    new_task()  # 1-ToyDPO masks losses.py::preference_loss of the fixture repository
    app = make_app(bench)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        await pilot.press(*"prfloss", "enter", "enter")
        await pilot.pause()
        assert any("already task 1-ToyDPO" in str(n.message) for n in app._notifications)
        problems = screen._problems()
        assert any("losses.py::preference_loss of this repository is already task 1-ToyDPO" in p for p in problems)
        screen.query_one("#instruction", TextArea).text = "Implement the DPO loss."
        await pilot.press("ctrl+s")
        await wait_for_workers(app, pilot)
        assert app.screen is screen and screen.step == "save"  # not saved
    assert sorted(p.name for p in bench.iterdir() if not p.name.startswith(".")) == ["1-ToyDPO"]


async def test_changing_the_instruction_after_validation_makes_it_stale(fixture_repo: Path, bench: Path) -> None:
    app = make_app(bench)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        await pilot.press(*"prfloss", "enter", "enter")
        await pilot.pause()
        area = screen.query_one("#instruction", TextArea)
        area.text = "Implement the DPO loss."
        screen.valid_key = validated_key(screen.spec(bench))  # what a valid validation of this draft records
        screen.go("validate")
        assert screen.step_states()["validate"] == "done"
        area.text = "Implement the DPO loss, with beta."
        screen.go("validate")
        await pilot.pause()
        assert screen.step_states()["validate"] == "problem"
        assert "stale" in str(screen.query_one("#validate-summary").render())
        screen.go("save")
        assert "the validation is stale" in str(screen.query_one("#save-summary").render())
        # Save asks before writing a task the set would list as stale; "no" writes nothing.
        screen.query_one("#md-year", Input).value = "2023"
        screen.query_one("#md-paper_name", Input).value = "Toy DPO"
        screen.query_one("#md-category", Select).value = "Training Objectives & Optimization"
        area.text = "Implement the DPO loss."
        await pilot.pause()  # the task's name follows the paper's title
        screen.valid_key = validated_key(screen.spec(bench))
        area.text = "Implement the DPO loss, with beta."
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog) and "changed since it was validated" in app.screen.question
        assert "Save anyway?" in screen_text(app)  # the whole question: it was cut to its first line
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen and not [p for p in bench.iterdir() if not p.name.startswith(".")]
        area.text = "Implement the DPO loss."  # as validated: current again
        assert screen.step_states()["validate"] == "done"


async def test_ctrl_g_while_the_recording_runs_asks_before_restarting(fixture_repo: Path, bench: Path) -> None:
    app = make_app(bench, sandbox="local")
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        await pilot.press(*"prfloss", "enter", "enter")
        await pilot.pause()
        screen.go("tests")
        screen.query_one("#tests-cmd", Input).value = "python -c 'import time; time.sleep(4)'"
        await pilot.press("ctrl+g")
        await pilot.pause()
        (running,) = [w for w in screen.running_workers if w.group == "tests"]
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        assert app.screen.question == "The recording is running: stop it and start again?"
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen and [w for w in screen.running_workers if w.group == "tests"] == [running]
        for _ in range(200):  # the recording ends (it fails: the command never calls the function)
            if not screen.running_workers:
                break
            await pilot.pause(0.1)


async def test_tests_made_before_the_metadata_survive_the_name_it_gives(fixture_repo: Path, bench: Path) -> None:
    # The draft task was named at the tests step ("1-Fixture..."); opening Metadata named it after the paper, and
    # the next validate or save made the draft again, throwing its recorded tests away.
    app = make_app(bench)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        await pilot.press(*"prfloss", "enter", "enter")
        await pilot.pause()
        screen.query_one("#instruction", TextArea).text = "Implement the DPO loss."
        screen.go("tests")
        screen.query_one("#scaffold", Button).press()
        await pilot.pause()
        await wait_for_workers(app, pilot)
        drafted = screen.draft_task
        assert drafted is not None and (drafted.repo_dir / "unit_test" / "unit_test_1.py").is_file()
        screen.go("metadata")
        screen.query_one("#md-year", Input).value = "2023"
        screen.query_one("#md-paper_name", Input).value = "Toy DPO"
        screen.query_one("#md-category", Select).value = "Training Objectives & Optimization"
        await pilot.pause()
        name = screen.query_one("#md-name", Input).value
        assert name != drafted.name
        await pilot.press("ctrl+s", "y")  # never validated: asks; yes
        await wait_for_workers(app, pilot)
        await wait_for_workers(app, pilot)
    assert not any("made again" in str(n.message) for n in app._notifications)
    saved = load_task(bench / name)
    assert saved.info.folder_name == name and saved.info.instance_id == int(name.split("-")[0])
    assert (saved.repo_dir / "unit_test" / "unit_test_1.py").is_file()
