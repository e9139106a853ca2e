"""The review screen: label with the keys, resume, blind mode, filters, comments, one annotator at a time."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from textual.widgets import Input

from helpers.labels_run import write_review_run
from helpers.review_app import facts, opened, queue_rows, set_instructions, text_of
from lmrbench.benchmark.labels.store import LabelStore
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.schemas.run import JudgeCategory
from lmrbench.tui.app import make_app
from lmrbench.tui.dialogs.open_review import OpenReviewDialog
from lmrbench.tui.widgets.code_diff import WholeDiffView

pytestmark = pytest.mark.anyio
SIZE = (120, 40)


@pytest.fixture
def review_run(tmp_path: Path) -> tuple[Path, Path]:
    return write_review_run(tmp_path)


async def test_keys_label_at_once_and_a_new_session_resumes(review_run) -> None:
    bench, run = review_run
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        assert "0/3 labelled" in text_of(screen, "#progress")
        assert "1-Toy #1" in text_of(screen, "#item-title")
        diff = screen.query_one(WholeDiffView)
        assert "return 0.5" in diff.code_modified and "2 * len(a & b)" in diff.code_original
        await pilot.press("1")
        assert RunDir(run).labels("alice")[0].label is JudgeCategory.LOGICALLY_INCORRECT  # on disk at once
        assert "test_dice_overlap: assert 0.5 == 0.6666666666666666" in facts(screen)
        await pilot.press("n", "3")
        assert "2/3 labelled" in text_of(screen, "#progress")
        assert [r[2] for r in queue_rows(screen)] == ["1", "3", "·"]
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        assert "2/3 labelled" in text_of(screen, "#progress")
        assert "2-Async #1" in text_of(screen, "#item-title")  # resumes at the first unlabelled item
        await pilot.press("2")
        await pilot.press("p")
        assert "1-Toy #2" in text_of(screen, "#item-title")
    labels = {(lab.task, lab.impl): lab.label.score for lab in RunDir(run).labels("alice")}
    assert labels == {("1-Toy", 1): 1, ("1-Toy", 2): 3, ("2-Async", 1): 2}


async def test_blind_review_hides_tests_and_judge_until_the_item_is_labelled(review_run) -> None:
    bench, run = review_run
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        shown = facts(screen)
        assert "hidden until you label" in shown
        assert "judge thinks" not in shown and "passed" not in shown and "failed" not in shown
        assert "test_dice_overlap" not in shown
        await pilot.press("1")
        assert "failed, 1 of 2 cases passed" in facts(screen) and "logically_incorrect." in facts(screen)
        await pilot.press("n")
        assert "hidden until you label" in facts(screen) and "cases passed" not in facts(screen)
        await pilot.press("3")
        assert "3 completely correct" in facts(screen) and "The judge thinks completely_correct." in facts(screen)
        await pilot.press("n")
        assert "hidden until you label" in facts(screen)


async def test_show_outcomes_reveals_them_before_a_label(review_run) -> None:
    bench, run = review_run
    app = make_app(bench, review=run, annotator="alice", blind=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        assert "failed, 1 of 2 cases passed" in facts(screen) and "logically_incorrect." in facts(screen)
        assert "outcomes shown" in text_of(screen, "#progress")


async def test_filters_show_disagreements_and_unlabelled_items(review_run) -> None:
    bench, run = review_run
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("3")  # 1-Toy#1: judge 1, tests failed -> disagrees with both
        await pilot.press("n", "3")  # 1-Toy#2: judge 3, tests passed -> agrees with both
        await pilot.press("n", "1")  # 2-Async#1: judge 2, tests passed -> disagrees with both
        await pilot.press("a")
        assert "no item (unlabelled)" in text_of(screen, "#progress") and queue_rows(screen) == []
        await pilot.press("a", "a", "a")  # skipped, unsure: none
        assert "disagrees with judge" in text_of(screen, "#progress")
        assert [(r[0], r[1]) for r in queue_rows(screen)] == [("1-Toy", "1"), ("2-Async", "1")]
        await pilot.press("2")  # 2-Async#1 now agrees with the judge: it stays until the next move
        await pilot.press("a")
        assert "disagrees with tests" in text_of(screen, "#progress")
        assert [(r[0], r[1]) for r in queue_rows(screen)] == [("1-Toy", "1"), ("2-Async", "1")]
        await pilot.press("a")
        assert "item 3 of 3 (all)" in text_of(screen, "#progress")


async def test_annotators_never_see_each_others_labels(review_run) -> None:
    bench, run = review_run
    LabelStore(RunDir(run), "bob").save("1-Toy", 1, 3, note="bob thinks it is fine")
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        assert "0/3 labelled" in text_of(screen, "#progress")
        assert [r[2] for r in queue_rows(screen)] == ["·", "·", "·"]
        assert "bob" not in facts(screen) and "hidden until you label" in facts(screen)
        await pilot.press("1")
    assert RunDir(run).labels("bob")[0].label.score == 3  # alice's label went to her own folder
    assert RunDir(run).labels("alice")[0].label.score == 1


async def test_comment_typed_before_the_label_is_saved_with_it(review_run) -> None:
    bench, run = review_run
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("c")
        await pilot.pause()
        app.screen.query_one(Input).value = "returns a constant"
        await pilot.press("enter")
        await pilot.pause()
        assert "returns a constant (saved with the label)" in facts(screen)
        assert RunDir(run).labels("alice") == []
        await pilot.press("1")
        await pilot.press("c")
        await pilot.pause()
        app.screen.query_one(Input).value = "constant 0.5"
        await pilot.press("enter")
        await pilot.pause()
    (label,) = RunDir(run).labels("alice")
    assert label.note == "constant 0.5" and label.label.score == 1


async def test_palette_entry_opens_the_review(review_run) -> None:
    bench, run = review_run
    app = make_app(bench)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Review labels")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert isinstance(app.screen, OpenReviewDialog)
        app.screen.query_one("#run", Input).value = str(run)
        await pilot.press("enter")  # to the annotator field
        app.screen.query_one("#annotator", Input).value = "carol"
        await pilot.press("enter")
        screen = await opened(app, pilot)
        assert screen.session is not None and screen.session.annotator == "carol"


KILLED = textwrap.dedent(
    """
    import asyncio, sys, time
    from pathlib import Path
    from lmrbench.tui.app import make_app
    from lmrbench.tui.screens.review import ReviewScreen

    async def main():
        app = make_app(Path(sys.argv[1]), review=Path(sys.argv[2]), annotator="alice")
        async with app.run_test(size=(120, 40)) as pilot:
            while not (isinstance(app.screen, ReviewScreen) and app.screen.session is not None):
                await pilot.pause(0.05)
            await pilot.press("1")
            print("first", flush=True)
            await pilot.press("n", "3")
            print("second", flush=True)
            time.sleep(600)  # killed here, the app still running

    asyncio.run(main())
    """
)


def test_killing_the_app_between_two_labels_loses_neither(review_run, tmp_path) -> None:
    bench, run = review_run
    script = tmp_path / "label_then_hang.py"
    script.write_text(KILLED)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(bench), str(run)], stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "first"
        first = {(lab.task, lab.impl): lab.label.score for lab in RunDir(run).labels("alice")}
        assert first == {("1-Toy", 1): 1}
        assert proc.stdout.readline().strip() == "second"
        proc.kill()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    labels = {(lab.task, lab.impl): lab.label.score for lab in RunDir(run).labels("alice")}
    assert labels == {("1-Toy", 1): 1, ("1-Toy", 2): 3}
    assert not list((Path(run) / "labels").rglob("*.tmp"))


async def test_an_instruction_with_brackets_is_shown_as_written(review_run) -> None:
    # Label text is markup unless told otherwise: "x[i]" lost "[i]", and "[/]" made the app raise MarkupError
    bench, run = review_run
    wanted = "Scale x[i] into [0, 1]; keep [/] and [bold] as text."
    set_instructions(bench, wanted)
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        assert " ".join(text_of(screen, "#instruction").split()) == wanted


async def test_the_arrow_keys_in_the_queue_show_the_item_under_the_cursor(review_run) -> None:
    # the cursor moved, but the item shown (and labelled by 1/2/3) stayed the old one until enter
    bench, run = review_run
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        assert "1-Toy #1" in text_of(screen, "#item-title")
        await pilot.press("down")
        await pilot.pause()
        assert "1-Toy #2" in text_of(screen, "#item-title")
        await pilot.press("down", "3")
        await pilot.pause()
        assert "2-Async #1" in text_of(screen, "#item-title")
        await pilot.press("up")
        await pilot.pause()
        assert "1-Toy #2" in text_of(screen, "#item-title")
    assert [(lab.task, lab.impl, lab.label.score) for lab in RunDir(run).labels("alice")] == [("2-Async", 1, 3)]


async def test_agreement_shows_in_the_app_once_a_blind_review_is_done(review_run) -> None:
    # the agreement figures were on the command line only
    from lmrbench.tui.dialogs.text_view import TextDialog

    bench, run = review_run
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("1", "m")
        await pilot.pause()
        assert app.screen is screen  # blind: not before every item is labelled
        assert any("shows agreement once every item is labelled" in str(n.message) for n in app._notifications)
        await pilot.press("n", "3", "n", "2", "m")
        for _ in range(50):
            await pilot.pause(0.05)
            if isinstance(app.screen, TextDialog):
                break
        assert isinstance(app.screen, TextDialog)
        body = app.screen.text
        assert "3 labelled items" in body and "Human vs judge" in body
