"""A lock shared by every lmrbench process of this machine: one image or framework layer is built once."""

from __future__ import annotations

import fcntl

from lmrbench.defaults import cache_root


class MachineLock:
    """An exclusive lock shared by every process of this machine (a file lock under the cache root)."""

    def __init__(self, name: str) -> None:
        folder = cache_root() / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        self._path = folder / f"{name}.lock"

    def __enter__(self) -> None:
        self._fd = open(self._path, "a")  # noqa: SIM115 - held for the lock's lifetime
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._fd.close()
