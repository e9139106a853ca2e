"""A runner's keyed pool of warm sessions (a warm boot in a container, or a process of this machine).

Transport-level: the pool knows sessions only by key, age and whether they broke; what a session serves (the
warm boot's requests and replies) is the harness's (``harness/warm.py``).
"""

from __future__ import annotations

import threading
import time
from typing import Generic, Protocol, TypeVar

REUSE_SECONDS = 60.0
"""A runner does not hand a run to a warm boot idle for longer (it may be about to end); it starts another."""


class Session(Protocol):
    """A warm boot a runner keeps: in a container, or a process of this machine."""

    key: tuple[object, ...]
    """What runs it may serve: the same image (or venv), limits and preloaded modules."""
    last_used: float
    broken: bool
    """Set when it can serve no more runs (it ended, or a run's word never came)."""

    def close(self) -> None:
        """End it (idempotent, never raises)."""


S = TypeVar("S", bound=Session)


class Pool(Generic[S]):
    """A runner's idle warm boots, by key: a run takes one (or the runner starts one) and gives it back; at
    most ``limit`` are kept idle, the least recently used ended first."""

    def __init__(self, limit: int = 4) -> None:
        self.limit = limit
        self._idle: list[S] = []
        self._lock = threading.Lock()

    def take(self, key: tuple[object, ...]) -> S | None:
        """An idle warm boot for ``key`` (used within ``REUSE_SECONDS``), or None."""
        stale: list[S] = []
        found = None
        with self._lock:
            now = time.monotonic()
            for s in reversed(self._idle):
                if s.key == key and not s.broken and now - s.last_used < REUSE_SECONDS:
                    found = s
                    break
            stale = [s for s in self._idle if s.broken or now - s.last_used >= REUSE_SECONDS]
            self._idle = [s for s in self._idle if s is not found and s not in stale]
        for s in stale:
            s.close()
        return found

    def give(self, session: S) -> None:
        """Back after a run: kept idle, or ended when broken or over the limit."""
        session.last_used = time.monotonic()
        extra: list[S] = []
        with self._lock:
            if session.broken:
                extra = [session]
            else:
                self._idle.append(session)
                while len(self._idle) > self.limit:
                    extra.append(self._idle.pop(0))
        for s in extra:
            s.close()

    def close(self) -> None:
        """End every idle warm boot (a command's end: none is left running after it)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for s in idle:
            s.close()
