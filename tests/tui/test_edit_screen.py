"""The edit screen at 80x24: the work panel is on screen, nothing scrolls away, nothing unsaved is lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Input, Select, SelectionList, TabbedContent, TextArea

from helpers.pilot import wait_for_workers
from lmrbench.authoring.task.paper import write_paper
from lmrbench.core.taskset import load_task
from lmrbench.tui.app import make_app
from lmrbench.tui.dialogs.confirm import ConfirmDialog
from lmrbench.tui.screens.edit_task import EditTaskScreen
from lmrbench.tui.screens.taskset import TaskSetScreen
from lmrbench.tui.widgets.diff_view import DiffView
from lmrbench.tui.widgets.paper_view import PaperView
from lmrbench.tui.widgets.work_panel import WorkPanel

pytestmark = pytest.mark.anyio
SMALL = (80, 24)


async def open_edit(app, pilot) -> EditTaskScreen:
    await wait_for_workers(app, pilot)
    await pilot.press("e")
    await wait_for_workers(app, pilot)
    screen = app.screen
    assert isinstance(screen, EditTaskScreen)
    return screen


def log_text(screen) -> str:
    return "\n".join(str(line.text) for line in screen.query_one("#work-log").lines)


async def test_the_work_panel_is_on_screen_and_ctrl_r_shows_the_checks(new_task, bench: Path) -> None:
    new_task(with_test=False)
    app = make_app(bench)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_edit(app, pilot)
        await pilot.press("ctrl+r")
        await pilot.pause()
        panel = screen.query_one(WorkPanel)
        log = screen.query_one("#work-log")
        assert panel.region.height >= 3 and panel.region.bottom <= SMALL[1] - 1  # above the footer
        assert log.region.height >= 2 and log.region.bottom <= SMALL[1] - 1
        assert "unit_test_file" in log_text(screen)


async def test_moving_focus_keeps_the_implementation_selector_in_view(new_task, bench: Path) -> None:
    new_task()
    app = make_app(bench)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_edit(app, pilot)
        for _ in range(12):  # through the instruction, the metadata fields and the file list
            await pilot.press("tab")
            await pilot.pause()
            assert screen.scroll_y == 0
            select = screen.query_one("#impl", Select)
            assert select.region.y >= 1 and select.region.height >= 1, screen.focused
        screen.query_one(SelectionList).focus()
        await pilot.pause()
        assert screen.query_one("#impl", Select).region.y >= 1


async def test_escape_and_ctrl_q_ask_before_losing_edits(new_task, bench: Path) -> None:
    task = new_task()
    app = make_app(bench)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_edit(app, pilot)
        await pilot.press("escape")  # nothing edited: leaves at once
        await wait_for_workers(app, pilot)
        assert isinstance(app.screen, TaskSetScreen)
        screen = await open_edit(app, pilot)
        screen.query_one("#edit-instruction", TextArea).text = "A better instruction."
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog) and "unsaved edits" in app.screen.question
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen and screen.query_one("#edit-instruction", TextArea).text == "A better instruction."
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog) and "unsaved edits" in app.screen.question
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("escape")  # saved: nothing to lose
        await wait_for_workers(app, pilot)
        assert isinstance(app.screen, TaskSetScreen)
    assert load_task(task.path).info.implementations[0].instruction == "A better instruction."


async def test_validate_after_info_json_broke_says_so(new_task, bench: Path) -> None:
    task = new_task()
    app = make_app(bench, sandbox="local")
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_edit(app, pilot)
        (task.path / "info.json").write_text('{"implementations": [')
        await pilot.press("ctrl+g")
        await wait_for_workers(app, pilot)
        label = str(screen.query_one("#work-label").render())
        assert label.startswith("error: ") and "info.json" in label
        assert any("info.json" in str(n.message) for n in app._notifications)


async def test_the_edit_screen_shows_the_tests_the_mask_and_the_paper(new_task, bench: Path, fixture_pdf) -> None:
    task = new_task()
    write_paper(fixture_pdf, task.repo_dir)
    app = make_app(bench)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_edit(app, pilot)
        tabs = screen.query_one(TabbedContent)
        tabs.active = "tab-test-code"
        await pilot.pause()
        assert "def test_preference_loss" in screen.query_one("#test-code").text
        tabs.active = "tab-mask"
        await pilot.pause()
        diff = screen.query_one(DiffView).text
        assert "-    losses = -log_sigmoid(beta * logits)" in diff and "+    raise NotImplementedError" in diff
        tabs.active = "tab-paper"
        await pilot.pause()
        paper = screen.query_one(PaperView)
        assert len(paper.pages) == 2 and paper.find_next("method in detail") and paper.page == 1


async def test_test_files_are_not_offered_as_retrieval_context(new_task, bench: Path) -> None:
    new_task()
    app = make_app(bench)
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await open_edit(app, pilot)
        sel = screen.query_one(SelectionList)
        offered = [sel.get_option_at_index(i).value for i in range(sel.option_count)]
        assert "losses.py" in offered and "train.py" in offered
        assert not any("unit_test" in f for f in offered), offered


async def test_an_official_odd_url_does_not_block_other_edits(new_task, bench: Path) -> None:
    task = new_task()
    raw = json.loads((task.path / "info.json").read_text())
    raw["paper_url"] = "arxiv:2305.18290"
    (task.path / "info.json").write_text(json.dumps(raw))
    app = make_app(bench)
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await open_edit(app, pilot)
        screen.query_one("#md-year", Input).value = "2024"
        await pilot.press("ctrl+s")
        await pilot.pause()
    info = load_task(task.path).info
    assert (info.year, info.paper_url) == (2024, "arxiv:2305.18290")


async def test_the_tests_tab_lists_the_cases_recorded_before(new_task, bench: Path) -> None:
    # a recorded task opened in the edit screen listed no cases: they showed only right after a recording
    from datetime import UTC, datetime

    from lmrbench.authoring.record.recorded_tests import default_checker
    from lmrbench.defaults import recording_folder
    from lmrbench.fsutil import atomic_write_json
    from lmrbench.schemas.recording import RecordedCase, RecordingIndex

    task = new_task()
    impl = task.info.implementations[0]
    case = RecordedCase(file="case_1.npz", test="test_case_1", target="losses.py::preference_loss",
                        binding="function", bytes=10, digest="0" * 64, arguments={"beta": "0.1"}, returns="float64[2]")
    index = RecordingIndex(implementation=1, command="python train.py", sandbox="local", recorded_at=datetime.now(UTC),
                           max_calls=50, checker=default_checker(impl), cases=[case])  # fmt: skip
    atomic_write_json(task.repo_dir / recording_folder(1) / "index.json", index.model_dump(mode="json"))
    app = make_app(bench)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_edit(app, pilot)
        table = screen.query_one("#tests-cases")
        assert table.row_count == 1
        assert [str(c) for c in table.get_row_at(0)][:4] == ["1", "test_case_1", "losses.py::preference_loss",
                                                               "beta=0.1"]
        assert screen.query_one("#tests-cmd", Input).value == "python train.py"


async def test_leaving_after_a_validate_says_no_saved(new_task, bench: Path) -> None:
    # a validate (or a recording) marks the task changed, and the task set said "saved" though nothing was
    new_task()
    app = make_app(bench)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_edit(app, pilot)
        screen.saved = True  # what a finished validation sets: the task set must reload
        await pilot.press("escape")
        await wait_for_workers(app, pilot)
        assert isinstance(app.screen, TaskSetScreen)
        assert not any(str(n.message).startswith("saved") for n in app._notifications)
