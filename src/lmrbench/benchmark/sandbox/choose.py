"""Which sandbox runs a task's code: Docker when its engine answers, else the local runner (and it says so)."""

from __future__ import annotations

from lmrbench.core.sandbox import RunnerKind, Sandbox
from lmrbench.errors import LmrError
from lmrbench.progress import Progress


def docker_available(timeout: float = 3.0) -> bool:
    """True when a Docker engine answers a ping within ``timeout`` seconds."""
    try:
        import docker

        client = docker.from_env(timeout=int(max(1, timeout)))
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:
        return False


def get_sandbox(kind: RunnerKind | None = None, *, progress: Progress | None = None) -> Sandbox:
    """The sandbox of that kind; None picks Docker when the engine answers, else local (and says so)."""
    from lmrbench.benchmark.sandbox.docker import DockerRunner
    from lmrbench.benchmark.sandbox.local import LocalRunner

    if kind == "docker":
        return DockerRunner()
    if kind == "local":
        return LocalRunner(progress=progress)
    if kind is not None:
        raise LmrError(f"unknown runner {kind!r}; use docker or local")
    if docker_available():
        return DockerRunner()
    if progress is not None:
        progress.log("no Docker engine answers: using the local runner (weaker isolation)")
    return LocalRunner(progress=progress)
