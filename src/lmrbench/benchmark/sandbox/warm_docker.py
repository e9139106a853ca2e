"""A warm container: its PID 1 is a warm boot (``harness.warm``) that serves a task's trusted runs one after
another. Created like a run's container (read-only root, no network, limits, tmpfs), labelled as lmrbench's
runs, so that one left by a killed lmrbench is swept like theirs."""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import TYPE_CHECKING, Any

from lmrbench.harness.warm import WarmBoot

if TYPE_CHECKING:
    import docker


class WarmContainer(WarmBoot):
    """One warm container, used by one run at a time."""

    def __init__(self, client: docker.DockerClient, key: tuple[object, ...], nonce: str,
                 create: Any, command: list[str], name: str) -> None:
        """Create and start it: ``create(image_kwargs...)`` makes the container from ``command``."""
        super().__init__(key, nonce)
        self._client = client
        self.container = create(command=command, name=name)
        try:
            self._sock = client.api.attach_socket(self.container.id,
                                                  params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
            self._raw = getattr(self._sock, "_sock", self._sock)
            threading.Thread(target=self._read, daemon=True, name="lmrbench-warm-read").start()
            self.container.start()
        except BaseException:
            self.close()
            raise

    def _read(self) -> None:
        from docker.utils.socket import frames_iter

        try:
            for stream, data in frames_iter(self._sock, tty=False):
                self.streams.feed(stream, data)
        except Exception:  # the socket closes when the container goes
            pass
        finally:
            self.streams.close()

    def _send(self, request: bytes) -> None:
        self._raw.sendall(request)

    def kill(self) -> None:
        """Stop it at once (a cancel); it serves nothing more."""
        self.broken = True
        with contextlib.suppress(Exception):
            self._client.api.kill(self.container.id)

    def close(self) -> None:
        """End it and remove its container."""
        self.broken = True
        with contextlib.suppress(Exception):
            self._raw.shutdown(socket.SHUT_WR)
        with contextlib.suppress(Exception):
            self._client.api.remove_container(self.container.id, force=True)
        with contextlib.suppress(Exception):
            self._sock.close()
