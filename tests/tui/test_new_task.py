"""The new-task flow driven by keys: pick, mask, read the paper, fill the metadata, save or cancel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.message import Message
from textual.widgets import Input, Select, TextArea

from helpers.pilot import open_and_clone, paste, wait_for_workers
from lmrbench.authoring.check.check import check_task
from lmrbench.core.taskset import load_task, load_taskset
from lmrbench.tui.app import make_app
from lmrbench.tui.dialogs.confirm import ConfirmDialog
from lmrbench.tui.screens.new_task import NewTaskScreen
from lmrbench.tui.screens.taskset import TaskSetScreen
from lmrbench.tui.widgets.diff_view import DiffView
from lmrbench.tui.widgets.step_list import StepList
from lmrbench.tui.widgets.work_panel import WorkPanel

pytestmark = pytest.mark.anyio


async def test_author_a_task_through_the_app(fixture_repo: Path, fixture_pdf: Path, bench: Path) -> None:
    seen: list[Message] = []
    app = make_app(bench)
    async with app.run_test(size=(150, 45), message_hook=seen.append) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        cloned = list({id(m): m for m in seen if isinstance(m, NewTaskScreen.Cloned)}.values())  # it bubbles
        assert len(cloned) == 1
        assert {f.qualname for f in cloned[0].functions} >= {"preference_loss", "Scaler.scale", "log_sigmoid"}
        assert screen.step == "function"
        assert screen.draft is not None and screen.draft.path.parent == bench

        # Fuzzy search: the letters in order find the function; enter selects it.
        await pilot.press(*"prfloss", "enter", "enter")
        await pilot.pause()
        assert screen.selected == ["losses.py::preference_loss"]
        assert "def preference_loss" in screen.query_one("#code").text

        # Mask: the diff shows the body replaced by the stub; another style changes it.
        await pilot.press("ctrl+n")
        await wait_for_workers(app, pilot)
        diff = screen.query_one(DiffView).text
        assert "-    losses = -log_sigmoid(beta * logits)" in diff
        assert "+    raise NotImplementedError" in diff
        screen.query_one("#mask-style", Select).value = "pass"
        await wait_for_workers(app, pilot)
        assert "+    pass" in screen.query_one(DiffView).text

        # Paper: parsed pages, search jumps to the page holding the text.
        await pilot.press("ctrl+n")
        await pilot.pause()
        screen.query_one("#pdf", Input).value = str(fixture_pdf)
        await pilot.press("ctrl+g")
        await wait_for_workers(app, pilot)
        paper = screen.query_one("#paper")
        assert paper.pages and len(paper.pages) == 2
        assert paper.find_next("method in detail") and paper.page == 1
        area = screen.query_one("#instruction", TextArea)
        area.focus()
        await pilot.press(*"Implement the DPO loss.")
        assert area.text == "Implement the DPO loss."

        # Metadata: problems appear under the field while typing and go away when fixed.
        await pilot.press("ctrl+n")
        await pilot.pause()
        year = screen.query_one("#md-year", Input)
        year.focus()
        await pilot.press(*"20x3")
        await pilot.pause()
        assert "year" in str(screen.query_one("#md-year-error").render())
        year.value = "2023"
        screen.query_one("#md-paper_name", Input).value = "Toy DPO"
        screen.query_one("#md-category", Select).value = "Training Objectives & Optimization"
        await pilot.pause()
        assert str(screen.query_one("#md-year-error").render()) == ""
        name = screen.query_one("#md-name", Input).value
        assert name.startswith("1-")

        # Nothing outside the draft folder yet.
        assert [p.name for p in bench.iterdir()] == [screen.draft.path.name]

        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)  # never validated: Save asks
        assert "never validated" in app.screen.question
        await pilot.press("y")
        await wait_for_workers(app, pilot)
        assert isinstance(app.screen, TaskSetScreen)
        await wait_for_workers(app, pilot)

    assert sorted(p.name for p in bench.iterdir()) == [name]
    task = load_task(bench / name)
    impl = task.info.implementations[0]
    assert impl.instruction == "Implement the DPO loss."
    assert (impl.goal_file, impl.goal_function, impl.category) == (
        "losses.py", "preference_loss", "Training Objectives & Optimization")
    assert "    pass" in task.goal_path(impl).read_text()
    assert json.loads((task.repo_dir / "paper.json").read_text())["2"].startswith("Section 2")
    # The same checks as `tasks check`: only the tests are missing (recording is a later step).
    assert [p for p in check_task(task) if "unit_test_file" not in p] == []
    tasks, problems = load_taskset(bench)
    assert [t.name for t in tasks] == [name] and problems == []


async def test_cancel_removes_the_draft(fixture_repo: Path, bench: Path) -> None:
    app = make_app(bench)
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        assert screen.draft is not None and (screen.draft.source_dir / "losses.py").is_file()
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("y")
        await wait_for_workers(app, pilot)
        assert isinstance(app.screen, TaskSetScreen)
    assert list(bench.iterdir()) == []


async def test_a_bad_source_is_one_line_in_the_app(bench: Path, tmp_path: Path) -> None:
    app = make_app(bench)
    async with app.run_test(size=(150, 45)) as pilot:
        await wait_for_workers(app, pilot)
        await pilot.press("n")
        await pilot.pause()
        await paste(app, pilot, str(tmp_path / "no-such-repo"))
        await pilot.press("ctrl+g")
        await wait_for_workers(app, pilot)
        screen = app.screen
        assert isinstance(screen, NewTaskScreen) and screen.repo is None
        label = str(screen.query_one(WorkPanel).query_one("#work-label").render())
        assert label.startswith("error: ") and "no-such-repo" in label and "\n" not in label
        assert any("no-such-repo" in str(n.message) for n in app._notifications)


async def test_saving_needs_the_missing_parts(fixture_repo: Path, bench: Path) -> None:
    app = make_app(bench)
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert screen.step == "save"
        summary = str(screen.query_one("#save-summary").render())
        assert "step 2: tick at least one function" in summary
        assert "step 4: write the instruction" in summary

        # Validate lists every problem at once, each with its step, and marks those steps.
        screen.go("validate")
        await pilot.press("ctrl+g")
        await pilot.pause()
        summary = str(screen.query_one("#validate-summary").render())
        for line in ("step 2: tick at least one function", "step 4: write the instruction", "step 5: category",
                     "step 6: record the tests"):  # fmt: skip
            assert line in summary, summary
        assert ".lmrbench-draft" not in summary
        steps = screen.query_one(StepList)
        marks = [steps.mark(k) for k in ("source", "function", "paper", "metadata", "tests")]
        assert marks == ["✔", "!", "!", "!", "!"]
        assert any("step 4: write the instruction" in str(n.message) for n in app._notifications)
    assert list(bench.iterdir()) == []


async def test_quitting_the_app_removes_the_draft(fixture_repo: Path, bench: Path) -> None:
    app = make_app(bench)
    async with app.run_test(size=(150, 45)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        assert screen.draft is not None and screen.draft.path.is_dir()
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog) and "the draft task" in app.screen.question
        await pilot.press("n")  # no: nothing is lost
        await pilot.pause()
        assert app.screen is screen and screen.draft.path.is_dir()
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
    assert list(bench.iterdir()) == []



async def test_a_notification_shows_its_text_as_it_is(bench: Path, tmp_path: Path) -> None:
    # notifications were markup: the toast of a bad source "no-[such]-repo" read "no--repo"
    from textual.widgets._toast import Toast

    source = str(tmp_path / "no-[such]-repo")
    app = make_app(bench)
    async with app.run_test(size=(150, 45), notifications=True) as pilot:
        await wait_for_workers(app, pilot)
        await pilot.press("n")
        await pilot.pause()
        await paste(app, pilot, source)
        await pilot.press("ctrl+g")
        await wait_for_workers(app, pilot)
        await pilot.pause(0.2)
        shown = ["".join(str(toast.render()).split()) for toast in app.screen.query(Toast)]  # a toast wraps long lines
        assert any("".join(source.split()) in text for text in shown), shown
