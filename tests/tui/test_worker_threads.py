"""A screen that deletes what its thread workers write must wait for the threads, not for Textual's worker: a
cancelled thread worker counts as ended while its thread still runs (seen as a draft folder left behind when the
author cancelled the new-task screen during an image build)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from textual import work
from textual.app import App
from textual.screen import Screen
from textual.worker import get_current_worker

from lmrbench.tui.workers import counted, threads_ended

pytestmark = pytest.mark.anyio


class SlowToStop(Screen[None]):
    """A worker that, like a build between two log lines, notices the cancel late and then writes once more."""

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()
        self.wrote_after_cancel = threading.Event()

    @work(thread=True, exit_on_error=False)
    @counted
    def build(self) -> None:
        self.started.set()
        get_current_worker().cancelled_event.wait(30)
        time.sleep(0.5)
        self.wrote_after_cancel.set()


async def test_threads_ended_waits_for_a_cancelled_thread_that_textual_already_counts_as_ended() -> None:
    screen = SlowToStop()
    async with App().run_test() as pilot:
        await pilot.app.push_screen(screen)
        worker = screen.build()
        assert await asyncio.to_thread(screen.started.wait, 10)
        worker.cancel()
        await pilot.pause()
        assert not worker.is_running  # Textual: ended
        assert not screen.wrote_after_cancel.is_set()  # the thread: still running
        assert await threads_ended(screen, timeout=10)
        assert screen.wrote_after_cancel.is_set()


class RestartedTwice(Screen[None]):
    """An exclusive worker started again while the first one is still stopping (ctrl+g pressed twice)."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []
        self.first_started = threading.Event()

    @work(thread=True, exclusive=True, exit_on_error=False, group="tests")
    @counted
    def record(self, name: str) -> None:
        self.events.append(f"{name} starts")
        if name == "first":
            self.first_started.set()
            get_current_worker().cancelled_event.wait(30)
            time.sleep(0.5)  # still writing the draft after the cancel
        self.events.append(f"{name} ends")


async def test_a_restarted_worker_starts_after_the_one_it_cancelled_has_returned() -> None:
    screen = RestartedTwice()
    async with App().run_test() as pilot:
        await pilot.app.push_screen(screen)
        screen.record("first")
        assert await asyncio.to_thread(screen.first_started.wait, 10)
        second = screen.record("second")  # exclusive: cancels the first
        await asyncio.wait_for(second.wait(), 10)
        assert await threads_ended(screen, timeout=10)
    assert screen.events == ["first starts", "first ends", "second starts", "second ends"]
