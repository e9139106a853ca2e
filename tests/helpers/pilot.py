"""Textual test helpers shared by the app's tests."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.pilot import Pilot


async def wait_for_workers(app: App[object], pilot: Pilot[object]) -> None:
    """Wait until the app's workers are done and the messages they posted have been handled."""
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


async def paste(app: App[object], pilot: Pilot[object], text: str) -> None:
    """Paste ``text`` into the focused widget, as a terminal's bracketed paste delivers it (one event, not one
    key press per character: typing a 100-character path key by key costs seconds of the suite)."""
    from textual import events

    assert app.focused is not None, "nothing has focus to paste into"
    app.focused.post_message(events.Paste(text))
    await pilot.pause()


async def open_and_clone(app: App[object], pilot: Pilot[object], repo: object) -> Any:
    """From the task set, open the new-task screen, paste ``repo`` as its source and clone it; the screen."""
    from lmrbench.tui.screens.new_task import NewTaskScreen

    await wait_for_workers(app, pilot)
    await pilot.press("n")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, NewTaskScreen)
    await paste(app, pilot, str(repo))
    await pilot.press("ctrl+g")
    await wait_for_workers(app, pilot)
    return screen


def screen_text(app: App[object]) -> str:
    """The text on the terminal now, one line per row (what a person reads, borders included)."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())
