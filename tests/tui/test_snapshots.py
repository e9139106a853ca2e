"""How every screen looks at 80x24 (the smallest the app is laid out for) and at 200x50 (Textual and
textual-diff-view are pinned exactly, so these only change when the app does). At 80x24 no label, footer or
header of these screens may be cut: the pictures are checked by eye when they are updated. The command palette has
no picture: the order of its entries depends on which provider answers first."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Select

from helpers.labels_run import write_review_run
from helpers.synthetic_runs import add_verdicts_and_labels, write_run
from lmrbench.schemas.run import JudgeCategory
from lmrbench.tui.app import make_app
from lmrbench.tui.screens.review import ReviewScreen
from lmrbench.tui.widgets.review_queue import ReviewQueue

SIZES = pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])


async def _settle(pilot: Pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


async def _new_task(pilot: Pilot, repo: Path, query: str | None) -> None:
    """The new-task flow, cloned; with ``query``: that function found and ticked."""
    app = pilot.app
    app.sub_title = "bench"  # the real path differs between runs
    await _settle(pilot)
    await pilot.press("n")
    await pilot.pause()
    app.screen.query_one("#source", Input).value = str(repo)
    await pilot.press("ctrl+g")
    await _settle(pilot)
    if query is not None:
        await pilot.press(*query, "enter", "enter")
        await pilot.pause()


async def _step(pilot: Pilot, n: int) -> None:
    for _ in range(n):
        await pilot.press("ctrl+n")
        await _settle(pilot)


@SIZES
def test_task_set(snap_compare, new_task, bench: Path, size: tuple[int, int]) -> None:
    new_task()
    new_task()  # clean tasks only: a warning would show the test's temp path

    async def run_before(pilot: Pilot) -> None:
        pilot.app.sub_title = "bench"
        await _settle(pilot)

    assert snap_compare(make_app(bench), terminal_size=size, run_before=run_before)


@SIZES
def test_source_step(snap_compare, bench: Path, size: tuple[int, int]) -> None:
    async def run_before(pilot: Pilot) -> None:
        pilot.app.sub_title = "bench"
        await _settle(pilot)
        await pilot.press("n")
        await pilot.pause()
        pilot.app.screen.set_focus(None)  # no blinking cursor in the picture
        await pilot.pause()

    assert snap_compare(make_app(bench), terminal_size=size, run_before=run_before)


@SIZES
def test_function_step(snap_compare, fixture_repo: Path, bench: Path, size: tuple[int, int]) -> None:
    async def run_before(pilot: Pilot) -> None:
        await _new_task(pilot, fixture_repo, "prefloss")

    assert snap_compare(make_app(bench), terminal_size=size, run_before=run_before)


@SIZES
def test_mask_step(snap_compare, fixture_repo: Path, bench: Path, size: tuple[int, int]) -> None:
    async def run_before(pilot: Pilot) -> None:
        await _new_task(pilot, fixture_repo, "prefloss")
        await _step(pilot, 1)

    assert snap_compare(make_app(bench), terminal_size=size, run_before=run_before)


@SIZES
def test_paper_step(snap_compare, fixture_repo: Path, bench: Path, size: tuple[int, int]) -> None:
    async def run_before(pilot: Pilot) -> None:
        await _new_task(pilot, fixture_repo, "prefloss")
        await _step(pilot, 2)
        pilot.app.screen.set_focus(None)  # no blinking cursor in the PDF field
        await pilot.pause()

    assert snap_compare(make_app(bench), terminal_size=size, run_before=run_before)


@SIZES
def test_metadata_step_shows_problems_under_fields(snap_compare, fixture_repo: Path, bench: Path,
                                                   size: tuple[int, int]) -> None:  # fmt: skip
    async def run_before(pilot: Pilot) -> None:
        await _new_task(pilot, fixture_repo, "prefloss")
        await _step(pilot, 3)
        screen = pilot.app.screen
        screen.query_one("#md-year", Input).value = "20x3"
        screen.query_one("#md-paper_url", Input).value = "arxiv"
        screen.query_one("#md-category", Select).value = "Evaluation Metrics"
        screen.set_focus(None)  # no blinking cursor in the picture
        await pilot.pause()

    assert snap_compare(make_app(bench), terminal_size=size, run_before=run_before)


@SIZES
def test_tests_validate_and_save_steps(snap_compare, fixture_repo: Path, bench: Path, size: tuple[int, int]) -> None:
    """The last three steps share one picture each run: the save step, after passing through tests and validate."""

    async def run_before(pilot: Pilot) -> None:
        await _new_task(pilot, fixture_repo, "prefloss")
        await _step(pilot, 6)
        summary = pilot.app.screen.query_one("#save-summary")
        summary.update(str(summary.render()).replace(str(pilot.app.bench_dir), "bench"))
        pilot.app.screen.set_focus(None)
        pilot.app.clear_notifications()  # the toast of leaving step 5 would stay or not, by timing
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()

    assert snap_compare(make_app(bench), terminal_size=size, run_before=run_before)


@SIZES
def test_edit_screen_after_a_check(snap_compare, new_task, bench: Path, size: tuple[int, int]) -> None:
    new_task()

    async def run_before(pilot: Pilot) -> None:
        pilot.app.sub_title = "bench"
        await _settle(pilot)
        await pilot.press("e")
        await _settle(pilot)
        pilot.app.screen.query_one("#edit-where").update("1-ToyDPO · repo src-repo/")  # not the temp path
        await pilot.press("ctrl+r")
        await pilot.pause()

    assert snap_compare(make_app(bench), terminal_size=size, run_before=run_before)


@SIZES
def test_help(snap_compare, bench: Path, size: tuple[int, int]) -> None:
    async def run_before(pilot: Pilot) -> None:
        pilot.app.sub_title = "bench"
        await _settle(pilot)
        await pilot.press("f1")
        await pilot.pause()

    assert snap_compare(make_app(bench), terminal_size=size, run_before=run_before)


async def _review(pilot: Pilot, keys: tuple[str, ...]) -> None:
    app = pilot.app
    app.sub_title = "bench"  # the real paths differ between runs
    # the session is set before the queue and the item are drawn: wait for the queue's rows, then for the rest
    # (on a busy machine a snapshot taken at once caught the task column before it had its width)
    for _ in range(200):
        await pilot.pause(0.05)
        screen = app.screen
        if isinstance(screen, ReviewScreen) and screen.session is not None and screen.query_one(ReviewQueue).row_count:
            break
    await _settle(pilot)
    app.screen.sub_title = "review run"
    await pilot.press(*keys)
    await _settle(pilot)


@SIZES
@pytest.mark.parametrize("keys", [(), ("1",)], ids=["before-a-label", "after-a-label"])
def test_review(snap_compare, tmp_path: Path, size: tuple[int, int], keys: tuple[str, ...]) -> None:
    """Blind before the label (no outcome, no verdict); both shown after it."""
    bench, run = write_review_run(tmp_path)

    async def run_before(pilot: Pilot) -> None:
        await _review(pilot, keys)

    app = make_app(bench, review=run, annotator="alice")
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@SIZES
def test_run_summary(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:
    cc, lc, li = JudgeCategory
    strong = write_run(tmp_path / "strong", "strong", {"1-A": True, "2-B": True, "3-C": False})
    write_run(tmp_path / "weak", "weak", {"1-A": False, "2-B": True, "3-C": False})
    add_verdicts_and_labels(strong, {"1-A": (cc, None), "2-B": (lc, None), "3-C": (li, None)})

    async def run_before(pilot: Pilot) -> None:
        pilot.app.sub_title = "bench"
        await _settle(pilot)

    (tmp_path / "bench").mkdir()  # a task set made now would say so in a toast
    app = make_app(tmp_path / "bench", runs=[tmp_path / "strong", tmp_path / "weak"])
    assert snap_compare(app, terminal_size=size, run_before=run_before)
