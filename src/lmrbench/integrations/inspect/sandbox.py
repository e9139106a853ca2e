"""The ``lmrbench`` sandbox provider for Inspect AI: one container of a task's own image per sample.

The container is the one ``lmrbench agent`` gives an agent (``agents.container.AgentContainer``): the task's image,
no network, every capability dropped, the task's memory, CPU and pid limits, a non-root user, the agent view
(masked repository, paper, TASK.md; no tests, golden files or recorded data) copied into /workspace, removed at the
sample's end. Commands go over the Docker SDK's exec (Inspect's own docker provider needs Docker Engine 24.0.6 or
later and compose v2; this one needs neither). ``bash --login`` (Inspect's ``bash`` tool) reads /etc/profile,
which resets PATH; a profile drop-in puts the image's PATH back, so the agent runs the task's own Python.
"""

from __future__ import annotations

import io
import os
import posixpath
import shlex
import tarfile
import tempfile
from functools import partial
from pathlib import Path
from typing import Any, Literal, overload

import anyio
from inspect_ai.util import (
    ExecResult,
    OutputLimitExceededError,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxEnvironmentLimits,
    sandboxenv,
)
from pydantic import BaseModel, ConfigDict

from lmrbench.benchmark.agents.container import WORKSPACE, AgentContainer, RawExec
from lmrbench.benchmark.agents.runner import image_exposes
from lmrbench.benchmark.pipeline.agent import export_agent
from lmrbench.benchmark.sandbox.environments.containers import remove_stale_containers
from lmrbench.core.taskset import Task, load_task
from lmrbench.errors import LmrError
from lmrbench.integrations.inspect.engine import engine

PROFILE = "/etc/profile.d/lmrbench-path.sh"
_WRITE = ('f=$1; case "$f" in */*) mkdir -p -- "${f%/*}" || exit 1;; esac; if [ -d "$f" ]; then exit 21; fi; '
          'if [ -e "$f" ] && [ ! -w "$f" ]; then exit 13; fi; cat > "$f"')  # fmt: skip
_READ = ('f=$1; if [ -d "$f" ]; then exit 21; fi; if [ ! -e "$f" ]; then exit 2; fi; '
         'if [ ! -f "$f" ]; then exit 22; fi; if [ ! -r "$f" ]; then exit 13; fi; '
         'if [ "$(stat -L -c %s -- "$f")" -gt "$2" ]; then exit 27; fi; exec cat -- "$f"')  # fmt: skip
"""Shell programs (run as the sandbox's user, so its permissions hold) whose exit status names the error; a
read refuses what is not a regular file (a FIFO the agent left would block it)."""
_WHY_NOT_STARTED = ('u=$1; c=$2; if [ -n "$u" ] && ! id -u -- "$u" >/dev/null 2>&1; then '
                    'echo "unable to find user $u: no matching entries in passwd file"; exit 1; fi; '
                    'p=$(command -v -- "$c") || exit 0; if [ -d "$p" ] || [ ! -x "$p" ]; then '
                    'echo "exec: $c: permission denied"; exit 2; fi')  # fmt: skip
"""Why docker could not start a command (status 126): the engine's own message is lost when several execs start at
once (Docker 20.10), so it is found again: a user the image lacks, or a file that is not executable."""
FILE_TIMEOUT = 600.0
"""Seconds a file's write or read may take."""


class LmrbenchConfig(BaseModel):
    """The ``lmrbench`` sandbox of a sample: which task's image and agent view."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    task: str
    """The lmrbench task folder (its image is built when missing, as ``lmrbench agent`` builds it)."""
    lifetime: float = 7200.0
    """Seconds the container lives at most: it sleeps that long, so one left behind ends by itself."""


def _config(config: SandboxEnvironmentConfigType | None) -> LmrbenchConfig:
    if isinstance(config, LmrbenchConfig):
        return config
    if isinstance(config, str):  # a task folder given on its own: --sandbox lmrbench:DIR
        return LmrbenchConfig(task=config)
    raise LmrError("the lmrbench sandbox needs a config naming a task folder (LmrbenchConfig or a path)")


def open_container(config: LmrbenchConfig) -> AgentContainer:
    """Start a container of the task's image holding its agent view (removed again when anything fails)."""
    task = load_task(Path(config.task))
    if (problem := image_exposes(task)) is not None:
        raise LmrError(f"not run: {problem}", task.path)
    eng = engine()
    image = eng.image(task)
    box = AgentContainer(eng.runner, task, image, lifetime=config.lifetime)
    try:
        with tempfile.TemporaryDirectory(prefix="lmrbench-inspect-") as tmp:
            view = export_agent([task], Path(tmp) / "view", keep=False)
            box.start(view / task.name)
        _put_profile(box, image)
    except BaseException:
        box.remove()
        raise
    return box


def _put_profile(box: AgentContainer, image: str) -> None:
    """Write the profile drop-in that gives a login shell the image's own PATH."""
    env = box.client.images.get(image).attrs.get("Config", {}).get("Env") or []
    path = next((e.split("=", 1)[1] for e in env if e.startswith("PATH=")), "")
    if not path or box.container is None:
        return
    data = f"export PATH={shlex.quote(path)}\n".encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(posixpath.basename(PROFILE))
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))
    box.container.put_archive(posixpath.dirname(PROFILE), buf.getvalue())


@sandboxenv(name="lmrbench")
class LmrbenchSandbox(SandboxEnvironment):
    """A sample's container of its task's image (see the module's docstring)."""

    def __init__(self, box: AgentContainer) -> None:
        super().__init__()
        self.box = box

    @property
    def task(self) -> Task:
        """The lmrbench task whose image this container runs."""
        return self.box.task

    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:  # noqa: D102
        return LmrbenchConfig(**config)

    @classmethod
    def default_concurrency(cls) -> int | None:
        """Containers at once by default: two per core, as Inspect's own docker provider allows."""
        return 2 * (os.cpu_count() or 1)

    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        """Build the task's image before the first sample needs it (nothing when it exists)."""
        if config is not None:
            task = load_task(Path(_config(config).task))
            await anyio.to_thread.run_sync(engine().image, task)

    @classmethod
    async def sample_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                          metadata: dict[str, str]) -> dict[str, SandboxEnvironment]:  # fmt: skip
        """Start the sample's container."""
        box = await anyio.to_thread.run_sync(open_container, _config(config))
        return {"default": cls(box)}

    @classmethod
    async def sample_cleanup(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                             environments: dict[str, SandboxEnvironment], interrupted: bool) -> None:  # fmt: skip
        """Remove the sample's container."""
        for env in environments.values():
            if isinstance(env, LmrbenchSandbox):
                await anyio.to_thread.run_sync(env.box.remove)

    @classmethod
    async def cli_cleanup(cls, id: str | None) -> None:
        """``inspect sandbox cleanup lmrbench``: remove the containers lmrbench processes of this host left behind
        (the same sweep every lmrbench command makes at its start); an ``id`` is not needed."""
        await anyio.to_thread.run_sync(remove_stale_containers, engine().runner.client)

    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> ExecResult[str]:
        """Run ``cmd`` in the container (see ``SandboxEnvironment.exec``)."""
        limit = SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE
        data = input.encode("utf-8") if isinstance(input, str) else input
        raw = await self._run(cmd, stdin=data, cwd=cwd, env=env, user=user, timeout=timeout, limit=limit)
        if raw.timed_out:
            raise TimeoutError(f"the command timed out after {timeout} s: {shlex.join(cmd)[:200]}")
        stdout = raw.stdout.decode("utf-8", errors="replace")
        stderr = raw.stderr.decode("utf-8", errors="replace")
        if raw.returncode == 126 and not stdout and not stderr and cmd:
            why = await self._run(["/bin/sh", "-c", _WHY_NOT_STARTED, "sh", user or "", cmd[0]], cwd=cwd, env=env,
                                  timeout=FILE_TIMEOUT)  # fmt: skip
            stderr = why.stdout.decode("utf-8", errors="replace")
        if raw.returncode == 126 and "permission denied" in (stdout + stderr).lower():
            raise PermissionError(f"permission denied: {cmd[0] if cmd else ''}: {(stderr or stdout).strip()}")
        if raw.over_limit:
            raise OutputLimitExceededError(SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE_STR, stdout)
        return ExecResult(success=raw.returncode == 0, returncode=raw.returncode, stdout=stdout, stderr=stderr)

    async def write_file(self, file: str, contents: str | bytes) -> None:
        """Write ``file`` as the sandbox's user, making its folders (see ``SandboxEnvironment.write_file``)."""
        data = contents.encode("utf-8") if isinstance(contents, str) else contents
        raw = await self._run(["/bin/sh", "-c", _WRITE, "sh", file], stdin=data, timeout=FILE_TIMEOUT)
        if raw.timed_out:
            raise TimeoutError(f"writing {file} took over {FILE_TIMEOUT:g} s")
        if raw.returncode != 0:
            raise _file_error(file, raw)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        """Read ``file`` as the sandbox's user (see ``SandboxEnvironment.read_file``)."""
        limit = SandboxEnvironmentLimits.MAX_READ_FILE_SIZE
        raw = await self._run(["/bin/sh", "-c", _READ, "sh", file, str(limit)], limit=limit, timeout=FILE_TIMEOUT)
        if raw.timed_out:
            raise TimeoutError(f"reading {file} took over {FILE_TIMEOUT:g} s")
        if raw.returncode == 27 or (raw.returncode == 0 and raw.over_limit):
            raise OutputLimitExceededError(SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, None)
        if raw.returncode != 0:
            raise _file_error(file, raw)
        return raw.stdout.decode("utf-8") if text else raw.stdout

    async def _run(self, cmd: list[str], *, stdin: bytes | None = None, cwd: str | None = None,
                   env: dict[str, str] | None = None, user: str | None = None, timeout: float | None = None,
                   limit: int | None = None) -> RawExec:  # fmt: skip
        where = posixpath.join(WORKSPACE, cwd) if cwd else WORKSPACE  # a relative cwd is the workspace's
        run = partial(self.box.run, cmd, stdin=stdin, user=user, cwd=where, env=env, timeout=timeout,
                      limit=limit if limit is not None else SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE)
        return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)


def _file_error(file: str, raw: RawExec) -> OSError:
    """The error a file operation's exit status names."""
    said = raw.stderr.decode("utf-8", errors="replace").strip()
    if raw.returncode == 21:
        return IsADirectoryError(f"is a directory: {file}")
    if raw.returncode == 2:
        return FileNotFoundError(f"no such file: {file}")
    if raw.returncode == 22:
        return OSError(f"not a regular file: {file}")
    if raw.returncode == 13 or "permission denied" in said.lower():
        return PermissionError(f"permission denied: {file}")
    return OSError(f"{file}: {said or f'exit status {raw.returncode}'}")
