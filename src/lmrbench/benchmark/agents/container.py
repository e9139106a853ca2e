"""The container an agent works in: the task's own image, no network, the agent view copied in, commands run
through exec, the goal files read back out, removed in ``finally``.

Nothing of the host is mounted: the view goes in as a tar archive and the goal files come out as one, so what
the agent writes stays in the container. The container is labelled like every run container
(``containers.RUN_LABEL``, ``OWNER_LABEL``), so one left by a killed lmrbench is swept at the next start, and it
sleeps no longer than the agent's wall-clock limit, so even an unswept one ends by itself.
"""

from __future__ import annotations

import contextlib
import io
import socket
import tarfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from lmrbench.benchmark.sandbox.environments.containers import OWNER_LABEL, RUN_LABEL, owner
from lmrbench.benchmark.sandbox.running.run_limits import container_resources
from lmrbench.core.source.tree import MAX_SOURCE_BYTES
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError

if TYPE_CHECKING:
    import docker

    from lmrbench.benchmark.sandbox.running.docker import DockerRunner

WORKSPACE = "/workspace"
OUTPUT_KEEP = 200_000
"""Characters of one command's output kept (its head and tail); the rest is said to be elided."""


class ContainerError(LmrError):
    """The container could not be started, reached or read: an infrastructure error, not the agent's."""


@dataclass
class RawExec:
    """One command's output streams as bytes (each kept up to its limit), exit status and seconds."""

    stdout: bytes
    stderr: bytes
    returncode: int
    duration: float
    timed_out: bool = False
    over_limit: bool = False
    """True when a stream was longer than the limit asked for (what is kept is its head)."""


@dataclass
class ExecResult:
    """One command's merged output, exit status (124: killed at its timeout) and seconds."""

    output: str
    returncode: int
    duration: float
    timed_out: bool = False


def _view_archive(view: Path, uid: int, gid: int) -> bytes:
    """A tar of ``view`` under ``workspace/``, owned by the agent's user; links inside the view are refused."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        def add(path: Path, name: str) -> None:
            info = tar.gettarinfo(str(path), arcname=name)
            info.uid, info.gid, info.uname, info.gname = uid, gid, "", ""
            if info.issym() or info.islnk():
                return  # export_agent leaves no link that leaves the task; none is needed inside either
            if info.isdir():
                info.mode = 0o755
                tar.addfile(info)
                for child in sorted(path.iterdir()):
                    add(child, f"{name}/{child.name}")
            elif info.isfile():
                info.mode = 0o644
                with path.open("rb") as fh:
                    tar.addfile(info, fh)

        add(view, WORKSPACE.strip("/"))
    return buf.getvalue()


class AgentContainer:
    """A running container of ``task``'s image for an agent; use as a context manager (removed on exit)."""

    def __init__(self, runner: DockerRunner, task: Task, image: str, *, lifetime: float, user: str = "") -> None:
        self.runner, self.task, self.image = runner, task, image
        self.lifetime = lifetime
        self.user = user or f"{runner.uid}:{runner.gid}"
        self.name = f"lmrbench-agent-{uuid.uuid4().hex[:12]}"
        self.container: docker.models.containers.Container | None = None
        self._lock = threading.Lock()
        self._removed = False

    @property
    def client(self) -> docker.DockerClient:
        return self.runner.client

    def __enter__(self) -> AgentContainer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def start(self, view: Path) -> None:
        """Create and start the container and copy the agent view ``view`` into /workspace."""
        import docker
        import requests

        resources = container_resources(self.task, self.runner.limits)
        env = {"HOME": "/tmp", "PAGER": "cat", "MANPAGER": "cat", "PIP_PROGRESS_BAR": "off", "TQDM_DISABLE": "1",
               **resources.pop("environment", {})}  # fmt: skip
        try:
            with self._lock:  # a remove (Ctrl-C) before or during the create leaves no container behind
                if self._removed:
                    raise ContainerError("removed before it started", self.name)
                self.container = self.client.containers.create(
                    self.image, entrypoint=["sleep"], command=[str(int(self.lifetime) + 60)], name=self.name,
                    labels={RUN_LABEL: self.task.name, OWNER_LABEL: owner()}, user=self.user,
                    working_dir=WORKSPACE, environment=env, network_disabled=True, network_mode="none",
                    pids_limit=self.runner.pids, cap_drop=["ALL"], security_opt=["no-new-privileges"],
                    log_config=docker.types.LogConfig(type="none"), **resources)  # fmt: skip
            self.container.start()
            uid, _, gid = self.user.partition(":")
            if not self.container.put_archive("/", _view_archive(view, int(uid), int(gid or uid))):
                raise ContainerError("the agent view could not be copied in", self.name)
        except (docker.errors.DockerException, requests.exceptions.RequestException, OSError) as exc:
            raise ContainerError(f"cannot start the agent's container: {type(exc).__name__}: {exc}",
                                 self.image) from None  # fmt: skip

    def exec(self, command: str, *, cwd: str = WORKSPACE, timeout: float = 120.0,
             env: dict[str, str] | None = None) -> ExecResult:
        """Run ``command`` with bash in the container as the agent's user, killed after ``timeout`` seconds.

        ``bash -c``, not a login shell: a login shell reads /etc/profile, which resets PATH and so loses the
        image's venv; exec keeps the image's own environment (its ENV lines), as ``docker exec`` does."""
        import docker
        import requests

        if self.container is None:
            raise ContainerError("the container is not started", self.name)
        argv = ["timeout", "-k", "5", str(max(1, int(timeout))), "bash", "-c", command]
        t0 = time.monotonic()
        try:
            exec_id = self.client.api.exec_create(self.container.id, argv, user=self.user, workdir=cwd,
                                                  environment=env or {})["Id"]  # fmt: skip
            head, tail, total = bytearray(), bytearray(), 0
            for chunk in self.client.api.exec_start(exec_id, stream=True):
                total += len(chunk)
                if len(head) < OUTPUT_KEEP // 2:
                    head += chunk
                else:
                    tail = (tail + chunk)[-OUTPUT_KEEP // 2:]
            code = self.client.api.exec_inspect(exec_id).get("ExitCode")
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            raise ContainerError(f"cannot run a command in the agent's container: {type(exc).__name__}: {exc}",
                                 self.name) from None  # fmt: skip
        text = head.decode("utf-8", errors="replace")
        if tail:
            elided = total - len(head) - len(tail)
            text += (f"\n[{elided} bytes elided]\n" if elided > 0 else "") + tail.decode("utf-8", errors="replace")
        code = -1 if code is None else int(code)
        return ExecResult(text, code, time.monotonic() - t0, timed_out=code in (124, 137))

    def run(self, argv: list[str], *, stdin: bytes | None = None, user: str | None = None, cwd: str = WORKSPACE,
            env: dict[str, str] | None = None, timeout: float | None = None, limit: int = OUTPUT_KEEP) -> RawExec:
        """Run ``argv`` in the container (no shell), ``stdin`` fed to it, stdout and stderr kept apart, each up to
        ``limit`` bytes (the rest is read and dropped); killed with its process group after ``timeout`` seconds
        by ``/usr/bin/timeout`` (called by its absolute path, so no folder on the image's PATH can stand in)."""
        import docker
        import requests

        if self.container is None:
            raise ContainerError("the container is not started", self.name)
        if timeout is not None:
            argv = ["/usr/bin/timeout", "-k", "5", f"{max(timeout, 0.1):g}s", *argv]
        t0 = time.monotonic()
        try:
            exec_id = self.client.api.exec_create(self.container.id, argv, stdin=stdin is not None,
                                                  user=user or self.user, workdir=cwd,
                                                  environment=env or {})["Id"]  # fmt: skip
            sock = self.client.api.exec_start(exec_id, socket=True)
            out, err, over = _exchange(sock, stdin, limit)
            code = self.client.api.exec_inspect(exec_id).get("ExitCode")
        except (docker.errors.DockerException, requests.exceptions.RequestException, OSError) as exc:
            raise ContainerError(f"cannot run a command in the container: {type(exc).__name__}: {exc}",
                                 self.name) from None  # fmt: skip
        duration = time.monotonic() - t0
        code = -1 if code is None else int(code)
        timed_out = timeout is not None and code in (124, 137) and duration >= timeout
        return RawExec(out, err, code, duration, timed_out=timed_out, over_limit=over)

    def read_goal_files(self, rels: list[str], dest: Path) -> list[str]:
        """Copy the goal files (paths relative to the repository folder in /workspace) to ``dest`` as plain
        files; return those not found or refused (not a regular file, over the size cap)."""
        import docker
        import requests

        if self.container is None:
            raise ContainerError("the container is not started", self.name)
        missing = []
        repo = PurePosixPath(WORKSPACE) / self.task.info.repo_folder_name
        for rel in rels:
            try:
                stream, stat = self.container.get_archive(str(repo / rel))
            except docker.errors.NotFound:
                missing.append(rel)
                continue
            except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
                raise ContainerError(f"cannot read {rel} back: {type(exc).__name__}: {exc}", self.name) from None
            if int(stat.get("size", 0)) > MAX_SOURCE_BYTES or not _regular(stat):
                missing.append(rel)
                continue
            data = b"".join(stream)
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                member = next(iter(tar.getmembers()), None)
                fh = tar.extractfile(member) if member is not None and member.isfile() else None
                if fh is None or member is None or member.size > MAX_SOURCE_BYTES:
                    missing.append(rel)
                    continue
                target = dest / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(fh.read())
        return missing

    def remove(self) -> None:
        """Remove the container (by name: also one whose creation was interrupted); a second call waits for the
        first to finish."""
        import docker
        import requests

        with self._lock:
            if self._removed:
                return
            self._removed = True
            with contextlib.suppress(docker.errors.DockerException, requests.exceptions.RequestException):
                self.client.api.remove_container(self.container.id if self.container else self.name, force=True)


def _exchange(stream: Any, stdin: bytes | None, limit: int) -> tuple[bytes, bytes, bool]:
    """Feed ``stdin`` to an attached exec (``exec_start(socket=True)``'s stream) from a thread (a command that
    writes while it reads never waits on us) and read its multiplexed frames (an 8-byte header: stream, size)
    until the end.

    The frames are read through the HTTP response's buffered reader, not the bare socket: the engine starts the
    command as soon as it has written the upgrade's headers, and reading those headers can read past them, so the
    first frames of a command that writes at once (``cat`` of a small file) may already sit in that buffer, and a
    read from the socket would lose them (seen as a binary file read back wrong under load)."""
    sock: socket.socket = getattr(stream, "_sock", stream)
    response = getattr(getattr(getattr(stream, "_response", None), "raw", None), "_fp", None)
    buffered = getattr(response, "fp", None)
    read: Callable[[int], bytes] = buffered.read if buffered is not None else partial(_recv_exactly, sock)

    def feed() -> None:
        with contextlib.suppress(OSError):
            if stdin:
                sock.sendall(stdin)
            sock.shutdown(socket.SHUT_WR)

    writer = threading.Thread(target=feed, name="lmrbench-exec-stdin", daemon=True)
    if stdin is not None:
        writer.start()
    streams = {1: bytearray(), 2: bytearray()}
    over = False
    try:
        while len(header := read(8)) == 8:
            kind, size = header[0], int.from_bytes(header[4:8], "big")
            data = read(size)
            kept = streams.get(kind, streams[1])
            room = limit - len(kept)
            over = over or len(data) > room
            kept += data[:max(room, 0)]
    finally:
        if writer.is_alive():
            writer.join(timeout=5)
        sock.close()
    return bytes(streams[1]), bytes(streams[2]), over


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    """``n`` bytes from ``sock``, fewer at its end."""
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            break
        buf += chunk
    return bytes(buf)


def _regular(stat: dict[str, object]) -> bool:
    """Whether a container path's stat (``get_archive``'s) is a regular file: no directory, link or device."""
    mode = int(str(stat.get("mode", 0)))
    return mode & (0x80000000 | 0x8000000 | 0x4000000 | 0x200000 | 0x2000000 | 0x1000000) == 0
