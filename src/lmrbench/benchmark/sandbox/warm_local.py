"""A warm process: a warm boot (``harness.warm``) of the local runner, serving a task's trusted runs one after
another in its own session, with the local runner's limits (address space, file size)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from lmrbench.harness.warm import WarmBoot


class WarmProcess(WarmBoot):
    """One warm boot process, used by one run at a time."""

    def __init__(self, key: tuple[object, ...], nonce: str, command: list[str], env: dict[str, str], cwd: Path,
                 limits: Callable[[], None]) -> None:
        super().__init__(key, nonce)
        self.proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True, preexec_fn=limits)
        for fd, stream in ((self.proc.stdout, 1), (self.proc.stderr, 2)):
            threading.Thread(target=self._read, args=(fd, stream), daemon=True, name="lmrbench-warm-read").start()

    def _read(self, pipe: object, stream: int) -> None:
        fileno = pipe.fileno()  # type: ignore[attr-defined]
        try:
            for chunk in iter(lambda: os.read(fileno, 65536), b""):
                self.streams.feed(stream, chunk)
        except OSError:
            pass
        finally:
            if stream == 1:
                self.streams.close()

    def _send(self, request: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(request)
        self.proc.stdin.flush()

    def kill(self) -> None:
        """Stop it at once (a cancel): the boot ends every process below it, then itself."""
        self.broken = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.proc.pid, signal.SIGTERM)

    def close(self) -> None:
        """End it: EOF on its stdin ends an idle boot; one that does not end is stopped."""
        self.broken = True
        with contextlib.suppress(OSError, ValueError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=35)  # the boot gives its processes 30 s to be gone
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        for pipe in (self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError):
                pipe.close()  # type: ignore[union-attr]
