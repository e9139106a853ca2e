"""A long-lived container of the Docker runner (a warm boot as its PID 1, see ``harness/warm.py``). Created like
a run's container (read-only root, no network, limits, tmpfs) and labelled as lmrbench's runs, so that one left
by a killed lmrbench is swept like theirs; its output is fed to the harness as it comes."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lmrbench.benchmark.sandbox.running.container_run import created
from lmrbench.core.sandbox import Output

if TYPE_CHECKING:
    import docker


class ContainerChannel:
    """One long-lived container, used by one run at a time (``core.sandbox.Channel``)."""

    def __init__(self, client: docker.DockerClient, create: Any, command: list[str], name: str,
                 on_output: Output, on_end: Callable[[], None]) -> None:
        """Create and start it: ``create(command=..., name=...)`` makes the container."""
        self._client = client
        self._on_output, self._on_end = on_output, on_end
        self.container = created(client, lambda: create(command=command, name=name))
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
                self._on_output(stream, data)
        except Exception:  # the socket closes when the container goes
            pass
        finally:
            self._on_end()

    def send(self, data: bytes) -> None:
        """Write to its stdin."""
        self._raw.sendall(data)

    def kill(self) -> None:
        """Stop it at once (a cancel)."""
        with contextlib.suppress(Exception):
            self._client.api.kill(self.container.id)

    def close(self) -> None:
        """End it and remove its container."""
        with contextlib.suppress(Exception):
            self._raw.shutdown(socket.SHUT_WR)
        with contextlib.suppress(Exception):
            self._client.api.remove_container(self.container.id, force=True)
        with contextlib.suppress(Exception):
            self._sock.close()
