"""How the review screen looks after the first label (Textual and textual-diff-view are pinned exactly)."""

from __future__ import annotations

from textual.pilot import Pilot

from helpers.labels_run import write_review_run
from lmrbench.tui.app import make_app
from lmrbench.tui.screens.review import ReviewScreen

SIZE = (120, 40)


def test_review_screen_after_a_label(snap_compare, tmp_path) -> None:
    bench, run = write_review_run(tmp_path)

    async def run_before(pilot: Pilot) -> None:
        app = pilot.app
        app.sub_title = "bench"  # the real paths differ between runs
        for _ in range(200):
            await pilot.pause(0.05)
            if isinstance(app.screen, ReviewScreen) and app.screen.session is not None:
                break
        app.screen.sub_title = "review run"
        await pilot.press("1")
        await pilot.pause()

    assert snap_compare(make_app(bench, review=run, annotator="alice"), terminal_size=SIZE, run_before=run_before)
