"""How the main screens look (Textual is pinned exactly, so these only change when the app does)."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input, Select

from lmrbench.tui.app import make_app

SIZE = (130, 36)


async def _new_task(pilot: Pilot, repo: Path, query: str) -> None:
    app = pilot.app
    app.sub_title = "bench"  # the real path differs between runs
    await app.workers.wait_for_complete()
    await pilot.press("n")
    await pilot.pause()
    app.screen.query_one("#source", Input).value = str(repo)
    await pilot.press("ctrl+g")
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press(*query, "enter", "enter")
    await pilot.pause()


def test_function_step(snap_compare, fixture_repo: Path, bench: Path) -> None:
    async def run_before(pilot: Pilot) -> None:
        await _new_task(pilot, fixture_repo, "scale")

    assert snap_compare(make_app(bench), terminal_size=SIZE, run_before=run_before)


def test_mask_step(snap_compare, fixture_repo: Path, bench: Path) -> None:
    async def run_before(pilot: Pilot) -> None:
        await _new_task(pilot, fixture_repo, "prefloss")
        await pilot.press("ctrl+n")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(make_app(bench), terminal_size=SIZE, run_before=run_before)


def test_metadata_step_shows_problems_under_fields(snap_compare, fixture_repo: Path, bench: Path) -> None:
    async def run_before(pilot: Pilot) -> None:
        await _new_task(pilot, fixture_repo, "prefloss")
        screen = pilot.app.screen
        for _ in range(3):
            await pilot.press("ctrl+n")
            await pilot.app.workers.wait_for_complete()
            await pilot.pause()
        screen.query_one("#md-year", Input).value = "20x3"
        screen.query_one("#md-paper_url", Input).value = "arxiv"
        screen.query_one("#md-category", Select).value = "Evaluation Metrics"
        screen.set_focus(None)  # no blinking cursor in the picture
        await pilot.pause()

    assert snap_compare(make_app(bench), terminal_size=SIZE, run_before=run_before)


def test_task_set(snap_compare, new_task, bench: Path) -> None:
    new_task()
    new_task()  # clean tasks only: a warning would show the test's temp path

    async def run_before(pilot: Pilot) -> None:
        pilot.app.sub_title = "bench"
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(make_app(bench), terminal_size=SIZE, run_before=run_before)


SMALL = (80, 24)


def test_task_set_at_80x24(snap_compare, new_task, bench: Path) -> None:
    new_task()

    async def run_before(pilot: Pilot) -> None:
        pilot.app.sub_title = "bench"
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(make_app(bench), terminal_size=SMALL, run_before=run_before)


def test_function_step_at_80x24(snap_compare, fixture_repo: Path, bench: Path) -> None:
    async def run_before(pilot: Pilot) -> None:
        await _new_task(pilot, fixture_repo, "prefloss")

    assert snap_compare(make_app(bench), terminal_size=SMALL, run_before=run_before)


def test_edit_screen_at_80x24_after_a_check(snap_compare, new_task, bench: Path) -> None:
    new_task()

    async def run_before(pilot: Pilot) -> None:
        pilot.app.sub_title = "bench"
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        pilot.app.screen.query_one("#edit-where").update("1-ToyDPO · repo src-repo/")  # not the temp path
        await pilot.press("ctrl+r")
        await pilot.pause()

    assert snap_compare(make_app(bench), terminal_size=SMALL, run_before=run_before)


def test_help_at_80x24(snap_compare, bench: Path) -> None:
    async def run_before(pilot: Pilot) -> None:
        pilot.app.sub_title = "bench"
        await pilot.app.workers.wait_for_complete()
        await pilot.press("f1")
        await pilot.pause()

    assert snap_compare(make_app(bench), terminal_size=SMALL, run_before=run_before)
