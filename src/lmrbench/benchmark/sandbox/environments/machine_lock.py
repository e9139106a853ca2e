"""A lock shared by every lmrbench process of this machine: one image or framework layer is built once."""

from __future__ import annotations

import fcntl
import threading
import time

from lmrbench.defaults import cache_root
from lmrbench.progress import check_cancel


class MachineLock:
    """An exclusive lock shared by every process of this machine (a file lock under the cache root); a wait for
    it ends with ``Cancelled`` when ``cancel`` is set."""

    def __init__(self, name: str, cancel: threading.Event | None = None) -> None:
        folder = cache_root() / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        self._path = folder / f"{name}.lock"
        self._cancel = cancel

    def __enter__(self) -> None:
        self._fd = open(self._path, "a")  # noqa: SIM115 - held for the lock's lifetime
        while True:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                try:
                    check_cancel(self._cancel)
                except BaseException:
                    self._fd.close()
                    raise
                time.sleep(0.1)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._fd.close()
