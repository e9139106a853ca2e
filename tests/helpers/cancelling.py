"""A cancel pressed while work is under way, as the app presses it: the work runs in a thread with a cancel event,
the test waits until the work is seen running, sets the event and takes what ended the work."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


def cancel_once_running(work: Callable[[threading.Event], object], running: Callable[[], object],
                        wait: float = 300.0) -> object:
    """Start ``work(cancel)`` in a thread, wait until ``running()`` is truthy (at most ``wait`` seconds), set the
    cancel and return what ended the work: its result or the exception it raised. Fails the test when the work
    never starts or does not end within 120 s of the cancel."""
    cancel, ended = threading.Event(), []

    def go() -> None:
        try:
            ended.append(work(cancel))
        except BaseException as exc:  # noqa: BLE001 - the test looks at what ended the work
            ended.append(exc)

    thread = threading.Thread(target=go)
    thread.start()
    deadline = time.monotonic() + wait
    while not running():
        assert thread.is_alive() and time.monotonic() < deadline, f"the work never started: {ended}"
        time.sleep(0.1)
    cancel.set()
    thread.join(120)
    assert not thread.is_alive() and len(ended) == 1, ended
    return ended[0]
