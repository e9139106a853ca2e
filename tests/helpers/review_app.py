"""Reading the review screen in the app's tests: wait for it to open, and the text of its parts."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Label, Static

from lmrbench.tui.screens.review import ReviewScreen
from lmrbench.tui.widgets.review_queue import ReviewQueue


async def opened(app, pilot) -> ReviewScreen:
    for _ in range(100):
        await pilot.pause(0.05)
        screen = app.screen
        if isinstance(screen, ReviewScreen) and screen.session is not None:
            await pilot.pause()
            return screen
    raise AssertionError("the review screen did not open")


def text_of(screen: ReviewScreen, selector: str) -> str:
    widget = screen.query_one(selector)
    return str(widget.render() if isinstance(widget, Label) else widget.visual)


def facts(screen: ReviewScreen) -> str:
    return " ".join(str(screen.query_one(f"#facts-{k}", Static).visual) for k in ("tests", "judge", "label"))


def queue_rows(screen: ReviewScreen) -> list[list[str]]:
    table = screen.query_one(ReviewQueue)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def set_instructions(bench: Path, text: str) -> None:
    """Give every implementation of the task set this instruction."""
    for info_path in bench.glob("*/info.json"):
        info = json.loads(info_path.read_text())
        for impl in info["implementations"]:
            impl["instruction"] = text
        info_path.write_text(json.dumps(info))
