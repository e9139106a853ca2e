"""A call run in a thread of its own, so that the caller's thread stays free to notice a cancel or Ctrl-C."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def in_thread(call: Callable[[], T], name: str, *, every: Callable[[], None] | None = None,
              on_interrupt: Callable[[], None] | None = None) -> T:
    """``call()`` in a daemon thread; its result or exception comes back here. While it runs, ``every()`` is called
    every 0.2 s (it may raise, e.g. Cancelled, leaving the call to end with the process); on Ctrl-C,
    ``on_interrupt()`` runs, the call gets 5 s to end, and KeyboardInterrupt goes on."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.2)
            if every is not None:
                every()
    except KeyboardInterrupt:
        if on_interrupt is not None:
            on_interrupt()
        thread.join(5)
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]
