"""Textual test helpers shared by the app's tests."""

from __future__ import annotations

from textual.app import App
from textual.pilot import Pilot


async def wait_for_workers(app: App[object], pilot: Pilot[object]) -> None:
    """Wait until the app's workers are done and the messages they posted have been handled."""
    await app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()
