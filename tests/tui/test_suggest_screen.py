"""The app's Suggest screen: the repository's functions ranked against the paper; Enter opens the new-task flow
with the repository as its source."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Static

from helpers.pilot import wait_for_workers
from helpers.suggest_fixture import METHODS, make_pair, target_ref
from lmrbench.tui.app import make_app
from lmrbench.tui.screens.new_task import NewTaskScreen
from lmrbench.tui.screens.suggest import SuggestScreen
from lmrbench.tui.screens.taskset import TaskSetScreen
from lmrbench.tui.widgets.paper_view import PaperView

pytestmark = pytest.mark.anyio


async def rank(app, pilot, repo: Path, paper: Path) -> SuggestScreen:
    """From the task set: open Suggest, give the repository and the paper, rank; the screen."""
    await pilot.press("g")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, SuggestScreen)
    screen.query_one("#suggest-repo", Input).value = str(repo)
    screen.query_one("#suggest-paper", Input).value = str(paper)
    await pilot.press("ctrl+g")
    await wait_for_workers(app, pilot)
    return screen


async def test_ranked_candidates_and_enter_opens_the_new_task_flow(tmp_path: Path) -> None:
    repo, pdf = make_pair(tmp_path, METHODS[3], git=False)
    bench = tmp_path / "bench"
    bench.mkdir()
    app = make_app(bench)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        await pilot.press("g")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SuggestScreen)
        screen.query_one("#suggest-repo", Input).value = str(repo)
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert "give the repository folder and the paper" in str(screen.query_one("#suggest-status", Static).render())
        screen.query_one("#suggest-paper", Input).value = str(pdf)
        await pilot.press("ctrl+g")
        await wait_for_workers(app, pilot)
        table = screen.query_one("#suggest-table", DataTable)
        assert table.row_count == 10
        first = [str(c) for c in table.get_row_at(0)]
        assert first[:2] == ["1", target_ref(METHODS[3])] and first[6] == "not run"
        await pilot.press("enter")
        await wait_for_workers(app, pilot)
        flow = app.screen
        assert isinstance(flow, NewTaskScreen)
        # cloned, the function ticked and the paper loaded at its passage: nothing to choose again by hand
        assert flow.query_one("#source", Input).value == str(repo) and flow.repo is not None
        assert flow.selected == [target_ref(METHODS[3])] and flow.step == "function"
        assert "def label_smoothing_cross_entropy" in flow.query_one("#code").text  # its code beside the list
        assert flow.query_one("#pdf", Input).value == str(pdf)
        paper = flow.query_one(PaperView)
        assert paper.pages and "found" in str(paper.query_one("#paper-where").render())


async def test_every_column_of_a_row_is_readable_at_80_columns(tmp_path: Path) -> None:
    repo, pdf = make_pair(tmp_path, METHODS[3], git=False)
    (tmp_path / "bench").mkdir()
    app = make_app(tmp_path / "bench")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await rank(app, pilot, repo, pdf)
        status = str(screen.query_one("#suggest-status", Static).render())
        for column in ("task: -", "copies: mlkit/methods.py:42-56", "codec: -", "calls: not run", "passage: p. 1"):
            assert column in status, status


async def test_a_bad_paper_is_said_and_escape_goes_back(tmp_path: Path) -> None:
    repo, _ = make_pair(tmp_path, METHODS[3], git=False)
    (tmp_path / "bench").mkdir()
    app = make_app(tmp_path / "bench")
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await rank(app, pilot, repo, tmp_path / "nope.pdf")
        status = str(screen.query_one("#suggest-status", Static).render())
        assert status.startswith("cannot suggest: ") and "nope.pdf" in status and "no such PDF" in status
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, TaskSetScreen)
