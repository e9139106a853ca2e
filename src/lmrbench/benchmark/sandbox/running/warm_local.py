"""A long-lived process of the local runner (a warm boot, see ``harness/warm.py``): started in its own session
with the local runner's limits (address space, file size), its output fed to the harness as it comes."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from lmrbench.core.sandbox import Output


class ProcessChannel:
    """One long-lived process, used by one run at a time (``core.sandbox.Channel``)."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path, limits: Callable[[], None],
                 on_output: Output, on_end: Callable[[], None]) -> None:
        self._on_output, self._on_end = on_output, on_end
        self.proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True, preexec_fn=limits)
        for fd, stream in ((self.proc.stdout, 1), (self.proc.stderr, 2)):
            threading.Thread(target=self._read, args=(fd, stream), daemon=True, name="lmrbench-warm-read").start()

    def _read(self, pipe: object, stream: int) -> None:
        fileno = pipe.fileno()  # type: ignore[attr-defined]
        try:
            for chunk in iter(lambda: os.read(fileno, 65536), b""):
                self._on_output(stream, chunk)
        except OSError:
            pass
        finally:
            if stream == 1:
                self._on_end()

    def send(self, data: bytes) -> None:
        """Write to its stdin."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def kill(self) -> None:
        """Stop it at once (a cancel): the boot ends every process below it, then itself."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.proc.pid, signal.SIGTERM)

    def close(self) -> None:
        """End it: EOF on its stdin ends an idle boot; one that does not end is stopped."""
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
