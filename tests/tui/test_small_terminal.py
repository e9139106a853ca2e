"""The app at 80x24, the smallest size it is laid out for: each step keeps room for what it is for, the focused
field is unmistakable, and any panel can be shown whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, TextArea

from helpers.pilot import open_and_clone, screen_text, wait_for_workers
from lmrbench.tui.app import make_app
from lmrbench.tui.widgets.paper_view import PaperView

pytestmark = pytest.mark.anyio


async def test_the_paper_gets_rows_in_step_4_at_80x24(fixture_repo: Path, fixture_pdf: Path, bench: Path) -> None:
    app = make_app(bench)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        screen.go("paper")
        await pilot.pause()
        screen.query_one("#pdf", Input).value = str(fixture_pdf)
        await pilot.press("ctrl+g")
        await wait_for_workers(app, pilot)
        paper = screen.query_one(PaperView).query_one("#paper-text", TextArea)
        assert paper.content_region.height >= 4, paper.content_region  # it was 0: "found" with nothing shown
        assert "A Toy Paper" in screen_text(app)
        assert screen.query_one(PaperView).find_next("method in detail")
        await pilot.pause()
        assert "The method in detail" in screen_text(app)  # the hit is on screen, not only "found"
        instruction = screen.query_one("#instruction", TextArea)
        assert instruction.content_region.height >= 3

        # ctrl+f shows the focused panel whole and gives the layout back.
        paper.focus()
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert screen.maximized is paper and paper.content_region.height >= 18
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert screen.maximized is None
