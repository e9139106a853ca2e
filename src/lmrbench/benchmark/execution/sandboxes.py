"""Which sandbox runs a task's code: the harness's run (``harness.sandbox``) over a transport of
``benchmark.sandbox``. Docker when its engine answers and a base image is present, can be pulled or bootstrapped
(``base_image``); else the local runner, saying why in one line and that isolation is weaker. Untrusted
candidates never fall back: they run locally only when ``--sandbox local`` asks for it."""

from __future__ import annotations

from lmrbench.benchmark.sandbox.running.run_limits import RunLimits
from lmrbench.core.sandbox import LOCAL_FALLBACK, SandboxKind
from lmrbench.errors import LmrError, UsageError
from lmrbench.harness.sandbox import Sandbox
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


UNTRUSTED_LOCAL = (
    "warning: --sandbox local: untrusted candidates run on the local runner (one user, no container); "
    "every result is weaker evidence"
)


def get_sandbox(
    kind: SandboxKind | None = None,
    *,
    progress: Progress | None = None,
    limits: RunLimits | None = None,
    untrusted: bool = False,
    warm: bool = True,
) -> Sandbox:
    """The sandbox of that kind. None picks Docker when the engine answers and a base image is present, can be
    pulled or bootstrapped; else the local runner, saying why in one line. For ``untrusted`` code (candidates)
    the local runner is only ever the one asked for: None then raises LmrError naming ``--sandbox local``
    where it would fall back, and asking for it says once that every result is weaker evidence. ``warm``:
    whether trusted runs may be served by warm containers or processes (``harness.warm``)."""
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner

    limits = limits or RunLimits()
    options = {"memory": limits.memory, "cpus": limits.cpus, "gpus": limits.gpus, "hf_cache": limits.hf_cache}
    if kind == "docker":
        return Sandbox(DockerRunner(**options), warm=warm)  # type: ignore[arg-type]
    if kind == "local":
        if untrusted:
            _say(progress, UNTRUSTED_LOCAL)
        return _local(progress, limits, warm)
    if kind is not None:
        raise UsageError(f"unknown runner {kind!r}; use docker or local")
    if not docker_available():
        _fallback(progress, "no Docker engine answers", untrusted)
        return _local(progress, limits, warm)
    from lmrbench.benchmark.sandbox.environments.base_image import NoBaseImage

    runner = DockerRunner(**options)  # type: ignore[arg-type]
    try:
        choice = runner.base_choice(progress)
    except NoBaseImage as exc:
        _fallback(progress, str(exc), untrusted)
        return _local(progress, limits, warm)
    _say(progress, choice.line())
    return Sandbox(runner, warm=warm)


def _fallback(progress: Progress | None, why: str, untrusted: bool) -> None:
    """Say why the local runner is used, or refuse it for untrusted code (never a silent fallback)."""
    if untrusted:
        raise LmrError(
            f"{why}: untrusted candidates run on the local runner only when asked; pass --sandbox local "
            "(weaker evidence) or start Docker"
        )
    _say(progress, f"warning: {why}: {LOCAL_FALLBACK}")


def _local(progress: Progress | None, limits: RunLimits, warm: bool) -> Sandbox:
    from lmrbench.benchmark.sandbox.running.local import LocalRunner

    if limits.is_set():
        _say(progress, "warning: --memory, --cpus, --gpus and --hf-cache apply to the Docker runner only")
    return Sandbox(LocalRunner(progress=progress), warm=warm)


def _say(progress: Progress | None, line: str) -> None:
    if progress is not None:
        progress.log(line)
