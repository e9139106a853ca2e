"""A cold run: a fresh container per run, fed the payload on stdin, waited for with the run's timeout and
removed in ``finally`` (also on a timeout or Ctrl-C: ``create`` runs in a thread of its own, so that a Ctrl-C
during it still leaves none).
It gives back how the process ended and its raw stdout; reading the boot's closing frame is the harness's."""

from __future__ import annotations

import collections
import contextlib
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lmrbench.core.sandbox import RunResult, killed_at_timeout, tail
from lmrbench.runtime.lmrbench_protocol import OUT_LIMIT

if TYPE_CHECKING:
    import docker

_STDERR_KEEP = 256_000
_STDOUT_LIMIT = OUT_LIMIT * 2
"""Most of a run's stdout kept: the boot script's frame (base64 of a capped out folder) fits well inside."""


def run_in_container(client: docker.DockerClient, create: Callable[[str], Any], tag: str,
                     rebuilt: Callable[[], str], name: str, data: bytes, timeout: float, t0: float,
                     mem_limit: object = None) -> tuple[RunResult, bytes]:
    """Create (``create(image)``), start, feed, wait for and remove the run's container; how the run ended and
    its stdout (empty after a timeout or an infrastructure error). ``rebuilt()`` gives the image again when
    ``tag`` is gone."""
    import docker
    import requests

    container = None
    stdout, stderr = bytearray(), collections.deque[bytes]()
    try:
        try:
            container = created(client, lambda: create(tag))
        except docker.errors.ImageNotFound:  # removed since the task's last ``prepare``: build it again
            container = created(client, lambda: create(rebuilt()))
            t0 = time.monotonic()
        sock = client.api.attach_socket(container.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        reader = threading.Thread(target=_read_frames, args=(sock, stdout, stderr), daemon=True)
        container.start()
        reader.start()
        raw = getattr(sock, "_sock", sock)
        # fed from a thread: a boot that stops reading (a full work folder) ends its container, but the engine
        # leaves the attach connection open, and a send from here would block for minutes
        sender = threading.Thread(target=_send, args=(raw, data), daemon=True)
        sender.start()
        timed_out = False
        try:
            status = container.wait(timeout=max(0.1, timeout - (time.monotonic() - t0)))
            exit_code: int | None = int(status.get("StatusCode", -1))
        except Exception as exc:  # the wait's read timeout (requests raises several kinds)
            if "timed out" not in str(exc).lower() and "timeout" not in type(exc).__name__.lower():
                raise
            timed_out, exit_code = True, None
            container.kill()
        reader.join(timeout=10)
        if sender.is_alive():  # the container is gone: unblock the send
            with contextlib.suppress(OSError):
                raw.shutdown(socket.SHUT_RDWR)
            sender.join(timeout=10)
        state = (client.api.inspect_container(container.id) or {}).get("State", {})
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        return RunResult(None, False, _decode(stderr), time.monotonic() - t0,
                         infra_error=f"Docker: {type(exc).__name__}: {exc}"), b""
    finally:
        # by name when no create answered (one cut short by an error of its own may still have made it)
        with contextlib.suppress(docker.errors.DockerException, requests.exceptions.RequestException):
            client.api.remove_container(container.id if container is not None else name, force=True)
    duration = time.monotonic() - t0
    output = _decode(stderr)
    if state.get("OOMKilled"):
        output += f"\n[killed: out of memory (limit {mem_limit})]"
    if timed_out:
        return RunResult(None, True, killed_at_timeout(output, timeout), duration), b""
    return RunResult(exit_code, False, output, duration), bytes(stdout)


def _send(raw: socket.socket, data: bytes) -> None:
    try:
        raw.sendall(data)
        raw.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the container ended before reading it all; its status tells why


def created(client: docker.DockerClient, create: Callable[[], Any]) -> Any:
    """The container ``create()`` makes, the request made in a thread of its own. A Ctrl-C while the engine has
    not answered interrupts this wait, not the request: the container the engine then makes is removed here, by
    id, before the Ctrl-C goes on. Removed by name at once instead, the engine could make it after the removal
    (4 of 12 runs interrupted in that window left one)."""
    made: list[Any] = []
    failed: list[BaseException] = []
    answered = threading.Event()  # not Thread.join: a join cut short by Ctrl-C may then return at once

    def run() -> None:
        try:
            made.append(create())
        except BaseException as exc:  # noqa: BLE001 (re-raised in the caller's thread)
            failed.append(exc)
        finally:
            answered.set()

    threading.Thread(target=run, daemon=True, name="lmrbench-create").start()
    try:
        answered.wait()
    except BaseException:
        answered.wait(timeout=120)  # the request's own timeout ends it sooner
        for container in made:
            with contextlib.suppress(Exception):
                client.api.remove_container(container.id, force=True)
        raise
    if failed:
        raise failed[0]
    return made[0]


def _read_frames(sock: object, stdout: bytearray, stderr: collections.deque[bytes]) -> None:
    from docker.utils.socket import frames_iter

    kept = 0
    try:
        for stream, data in frames_iter(sock, tty=False):
            if stream == 1:
                if len(stdout) < _STDOUT_LIMIT:
                    stdout.extend(data)
            else:
                stderr.append(data)
                kept += len(data)
                while kept > _STDERR_KEEP and len(stderr) > 1:
                    kept -= len(stderr.popleft())
    except Exception:  # the socket closes when the container is removed
        pass


def _decode(chunks: collections.deque[bytes]) -> str:
    return tail(b"".join(chunks).decode("utf-8", errors="replace"))
