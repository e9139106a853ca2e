"""The app's shell: the palette lists each action once, one ^p in the footer, a help screen, a Screenshot that
saves, and a work panel that never shows progress it has not made."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.command import CommandPalette
from textual.widgets import ProgressBar
from textual.widgets._footer import FooterKey

from helpers.pilot import paste, wait_for_workers
from lmrbench.tui.app import make_app
from lmrbench.tui.screens.new_task import NewTaskScreen
from lmrbench.tui.screens.taskset import TaskSetScreen
from lmrbench.tui.widgets.work_panel import WorkPanel

pytestmark = pytest.mark.anyio


async def palette_titles(app, pilot) -> list[str]:
    await pilot.press("ctrl+p")
    await pilot.pause(0.5)
    palette = app.screen
    assert isinstance(palette, CommandPalette)
    options = palette.query_one("CommandList")
    titles = [str(options.get_option_at_index(i).prompt).split("\n")[0] for i in range(options.option_count)]
    await pilot.press("escape")
    await pilot.pause()
    return titles


async def test_the_palette_lists_quit_once_and_the_footer_one_palette_key(bench: Path) -> None:
    app = make_app(bench)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for_workers(app, pilot)
        for _ in range(2):  # the task set, then the new-task flow
            titles = await palette_titles(app, pilot)
            assert sum(t.strip() == "Quit" for t in titles) == 1, titles
            assert sum(t.strip() == "Help" for t in titles) == 1, titles
            keys = [k for k in app.screen.query(FooterKey) if k.action == "command_palette"]
            assert len(keys) == 1
            await pilot.press("n")
            await pilot.pause()
            assert isinstance(app.screen, NewTaskScreen)


async def test_f1_and_question_mark_open_the_help_of_the_screen(bench: Path) -> None:
    from lmrbench.tui.dialogs.help import HelpScreen

    app = make_app(bench)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_workers(app, pilot)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        rows = app.screen.rows()
        assert ("n", "New task", "Author a new task in a guided flow") in rows
        assert any(r[1] == "Quit" for r in rows) and any(r[1] == "Commands" for r in rows)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, TaskSetScreen)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("slash", "question_mark")  # in the filter, ? is a character
        await pilot.pause()
        assert isinstance(app.screen, TaskSetScreen) and app.screen.query_one("#filter").value == "?"


async def test_the_palettes_screenshot_saves_into_the_task_set(bench: Path) -> None:
    app = make_app(bench)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_workers(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause(0.3)
        await pilot.press(*"screenshot")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause(0.5)
        await pilot.pause()
        shots = list((bench / ".lmrbench" / "screenshots").glob("*.svg"))
        assert len(shots) == 1 and "lmrbench" in shots[0].read_text()
        notes = [str(n.message) for n in app._notifications]
        assert any(str(shots[0]) in n for n in notes), notes


async def test_the_work_panel_shows_no_bar_when_idle_and_no_full_bar_after_an_error(bench: Path) -> None:
    app = make_app(bench)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_workers(app, pilot)
        await pilot.press("n")
        await pilot.pause()
        screen = app.screen
        bar = screen.query_one(WorkPanel).query_one(ProgressBar)
        assert not bar.display or not bar.region.width  # idle: no (moving) bar
        await paste(app, pilot, str(bench / "no-such-repo"))
        await pilot.press("ctrl+g")
        await wait_for_workers(app, pilot)
        assert "error" in str(screen.query_one("#work-label").render())
        assert not bar.display or bar.percentage != 1  # an error is not 100 %


class PanelApp(App[None]):
    """A work panel alone."""

    def compose(self) -> ComposeResult:
        yield WorkPanel(id="work")


async def test_a_cancelled_phase_does_not_show_a_full_bar() -> None:
    app = PanelApp()
    async with app.run_test(size=(80, 10)) as pilot:
        panel = app.query_one(WorkPanel)
        bar = panel.query_one(ProgressBar)
        assert not bar.display  # idle
        panel.post_message(WorkPanel.Started("validate", 16))
        panel.post_message(WorkPanel.Advanced(4, "1-Toy#1 mutant 1/12: killed"))
        await pilot.pause()
        assert bar.display and bar.percentage == 0.25
        panel.stopped("validate: cancelled")
        await pilot.pause()
        assert not bar.display and "cancelled" in str(panel.query_one("#work-label").render())
        panel.post_message(WorkPanel.Started("validate", None))  # work without a known length moves the bar
        await pilot.pause()
        assert bar.display
        panel.done("validation finished")
        await pilot.pause()
        assert bar.percentage == 1


async def test_an_old_error_is_not_the_last_word_once_later_work_succeeds() -> None:
    from textual.widgets import RichLog

    app = PanelApp()
    async with app.run_test(size=(80, 10)) as pilot:
        panel = app.query_one(WorkPanel)
        panel.error("git clone failed: no such repository")
        panel.post_message(WorkPanel.Started("cloning", None))
        await pilot.pause()
        panel.done("cloned and indexed")
        await pilot.pause()
        lines = [str(line.text) for line in panel.query_one(RichLog).lines]
        assert lines[-1] == "done: cloned and indexed" and "error" not in str(panel.query_one("#work-label").render())
