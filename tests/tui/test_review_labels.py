"""The review screen's second chances and its layout: undo, clear, skip, unsure, reassigned items, 80x24."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.labels_run import write_review_run
from helpers.review_app import facts, opened, queue_rows, text_of
from lmrbench.benchmark.labels.store import LabelStore
from lmrbench.benchmark.pipeline.rundir import RunDir, save_model
from lmrbench.schemas.run import LabelQueue, QueueItem, SkipList
from lmrbench.tui.app import make_app
from lmrbench.tui.widgets.code_diff import CodeDiff, WholeDiffView
from lmrbench.tui.widgets.review_queue import ReviewQueue

pytestmark = pytest.mark.anyio
SIZE = (120, 40)


@pytest.fixture
def review_run(tmp_path: Path) -> tuple[Path, Path]:
    return write_review_run(tmp_path)


def on_disk(run: Path) -> dict[tuple[str, int], tuple[int, bool]]:
    return {(lab.task, lab.impl): (lab.label.score, lab.unsure) for lab in RunDir(run).labels("alice")}


async def test_a_label_in_the_unlabelled_filter_stays_shown_with_its_outcome(review_run) -> None:
    bench, run = review_run
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("a")
        assert "(unlabelled)" in text_of(screen, "#progress")
        await pilot.press("2")
        assert "1-Toy #1" in text_of(screen, "#item-title")  # not gone to the next item
        assert "logically_incorrect." in facts(screen) and "2 logically correct" in facts(screen)
        await pilot.press("n")
        assert "1-Toy #2" in text_of(screen, "#item-title")
        assert [r[:2] for r in queue_rows(screen)] == [["1-Toy", "2"], ["2-Async", "1"]]


async def test_undo_and_clear_take_a_label_back(review_run) -> None:
    bench, run = review_run
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("1", "3")  # a mis-key, then the label meant
        assert on_disk(run) == {("1-Toy", 1): (3, False)}
        await pilot.press("z")
        assert on_disk(run) == {("1-Toy", 1): (1, False)}
        await pilot.press("z")
        assert on_disk(run) == {}
        assert "hidden until you label" in facts(screen)
        await pilot.press("2", "x")
        assert on_disk(run) == {} and "none yet" in facts(screen)
        await pilot.press("z")
        assert on_disk(run) == {("1-Toy", 1): (2, False)}
        await pilot.press("z", "z")
        assert on_disk(run) == {}
        assert any("nothing to undo" in str(n.message) for n in app._notifications)


async def test_unsure_marks_the_label_and_has_a_filter(review_run) -> None:
    bench, run = review_run
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("u")  # no label yet: refused in one line
        assert on_disk(run) == {}
        assert any("no label yet" in str(n.message) for n in app._notifications)
        await pilot.press("2", "u")
        assert on_disk(run) == {("1-Toy", 1): (2, True)}
        assert "2 logically correct (unsure)" in facts(screen)
        assert queue_rows(screen)[0][2] == "2 unsure"
        await pilot.press("a", "a", "a")
        assert "(unsure)" in text_of(screen, "#progress") and len(queue_rows(screen)) == 1
        await pilot.press("u")
        assert on_disk(run) == {("1-Toy", 1): (2, False)}


async def test_a_skip_is_kept_apart_from_labels_and_resumed_past(review_run) -> None:
    bench, run = review_run
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("s")
        assert "1-Toy #2" in text_of(screen, "#item-title")
        assert queue_rows(screen)[0][2] == "skip" and "1 skipped" in text_of(screen, "#progress")
    assert on_disk(run) == {}
    skips = RunDir(run).skips_path("alice")
    assert [(s.task, s.impl) for s in SkipList.model_validate_json(skips.read_text()).items] == [("1-Toy", 1)]
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        assert "1-Toy #2" in text_of(screen, "#item-title")  # resumes past the skipped item
        await pilot.press("p", "3")
        assert queue_rows(screen)[0][2] == "3" and "skipped" not in text_of(screen, "#progress")
    assert on_disk(run) == {("1-Toy", 1): (3, False)}
    assert SkipList.model_validate_json(skips.read_text()).items == []


async def test_an_earlier_label_of_a_reassigned_item_is_listed_and_can_be_cleared(review_run) -> None:
    bench, run = review_run
    digest = RunDir(run).candidate("2-Async", 1).digest
    LabelStore(RunDir(run), "alice").save("2-Async", 1, 2, candidate_digest=digest)
    # then `labels assign` gives 2-Async#1 to bob
    items = [QueueItem(task="1-Toy", impl=1, shared=True), QueueItem(task="1-Toy", impl=2)]
    queue = LabelQueue(annotator="alice", annotators=["alice", "bob"], seed=0, overlap=0.3, items=items)
    save_model(RunDir(run).queue_path("alice"), queue)
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        rows = queue_rows(screen)
        assert rows == [["1-Toy", "1", "·", "shared"], ["1-Toy", "2", "·", ""], ["2-Async", "1", "2", "moved"]]
        assert "shared: another annotator labels it too" in text_of(screen, "#item-title")
        await pilot.press("down", "down")
        await pilot.pause()
        assert "reassigned to others" in text_of(screen, "#item-title")
        await pilot.press("x")
    assert on_disk(run) == {}


async def test_at_80x24_the_code_takes_the_width_and_scrolls_from_the_keyboard(review_run) -> None:
    bench, run = review_run
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(app, pilot)
        assert not screen.query_one(ReviewQueue).display
        diff = screen.query_one(CodeDiff)
        assert diff.size.width >= 76  # the whole width but its scroll bar
        view = screen.query_one(WholeDiffView)
        assert not view.split  # a side would be too narrow for whole lines: one unified diff
        await pilot.press("q")
        await pilot.pause()
        assert screen.query_one(ReviewQueue).display
    async with make_app(bench, review=run, annotator="alice").run_test(size=(80, 14)) as pilot:
        screen = await opened(pilot.app, pilot)
        diff = screen.query_one(CodeDiff)
        assert diff.max_scroll_y > 0  # the code is taller than its room: the keys scroll it
        await pilot.press("pagedown")
        assert diff.scroll_y > 0
        await pilot.press("pageup")
        assert diff.scroll_y == 0
        await pilot.press("j")
        assert diff.scroll_y > 0
    async with make_app(bench, review=run, annotator="alice").run_test(size=(200, 50)) as pilot:
        screen = await opened(pilot.app, pilot)
        assert screen.query_one(ReviewQueue).display and screen.query_one(WholeDiffView).split

