"""Trying a requirement change in seconds, before a full build: the changed requirements' wheels (resolved on the
host for the image's Python; only new wheels are downloaded) installed in a throwaway container of the task's last
built image, then an optional command (an import, the tests' collection). Nothing is kept: the container is
removed and no image changes."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from lmrbench.benchmark.sandbox.environments.build_log import failure_headline
from lmrbench.benchmark.sandbox.environments.inventory import inventory
from lmrbench.benchmark.sandbox.environments.requirements_source import read_task_requirements
from lmrbench.benchmark.sandbox.environments.wheelhouse import pip_options, resolve_wheels, wheel_name
from lmrbench.benchmark.sandbox.running.docker import DockerRunner
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError
from lmrbench.progress import NullProgress, Progress

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(frozen=True)
class TryResult:
    """How a requirement change went in a throwaway container."""

    ok: bool
    image: str
    """The image it was tried in."""
    headline: str
    """The line naming the cause when it failed; what changed when it worked."""
    output: str
    seconds: float


def project(requirement: str) -> str:
    """The canonical project name of a requirement line."""
    m = _NAME.match(requirement)
    if not m:
        raise LmrError(f"not a requirement: {requirement!r}")
    return re.sub(r"[-_.]+", "-", m.group(1)).lower()


def changed_requirements(current: list[str], changes: list[str]) -> list[str]:
    """``current`` with each change replacing the line of the same project (or added)."""
    by_name = {project(c): c for c in changes}
    out = [by_name.pop(project(line), line) for line in current]
    return out + list(by_name.values())


def last_image(runner: DockerRunner, task: Task) -> str:
    """The newest image built for ``task``; LmrError naming the command that builds one when there is none."""
    mine = [r for r in inventory(runner.client) if r.kind == "task" and r.task == task.name]
    if not mine:
        raise LmrError(f"no image of {task.name} yet: `lmrbench image build {task.path}` builds one", task.path)
    return max(mine, key=lambda r: r.created).tag


TRY_REPO = "/lmrbench-repo"
"""Where a try run mounts the task's masked repository (read-only), under its folder name."""


def try_requirements(
    runner: DockerRunner,
    task: Task,
    changes: list[str],
    *,
    command: str = "",
    progress: Progress | None = None,
    timeout: float = 600,
) -> TryResult:
    """Install ``changes`` (requirement lines) over the task's last image in a throwaway container and run
    ``command`` there (as the image's user), in the task's masked repository, mounted read-only and first on the
    Python path (so the command can import the goal module); the task's files are not touched."""
    progress = progress or NullProgress()
    t0 = time.monotonic()
    image = last_image(runner, task)
    reqs = read_task_requirements(task)
    target = runner.wheel_target(image)
    wheels = resolve_wheels(changes, target, options=[*pip_options(reqs.text), *runner.torch.pip_options()],
                            progress=progress)
    folder = sorted({p.parent for p in wheels})
    mounts = {str(f): {"bind": f"/lmrbench-wheels/{i}", "mode": "ro"} for i, f in enumerate(folder)}
    repo = f"{TRY_REPO}/{task.info.repo_folder_name}"
    mounts[str(task.repo_dir.resolve())] = {"bind": repo, "mode": "ro"}
    links = " ".join(f"--find-links /lmrbench-wheels/{i}" for i in range(len(folder)))
    wanted = " ".join(_quote(c) for c in changes)
    # everything on stderr: the engine keeps a failed container's stderr for the error
    script = (f"exec 1>&2; /opt/venv/bin/pip install --disable-pip-version-check --no-cache-dir --no-index {links}"
              f" {wanted} && echo '--- lmrbench: installed' ")
    if command:
        in_repo = (f"cd {_quote(repo)} && PYTHONPATH={_quote(repo)} PYTHONDONTWRITEBYTECODE=1 "
                   f"exec sh -c {_quote(command)}")
        script += f"&& su -s /bin/sh -c {_quote(in_repo)} \"$(getent passwd {runner.uid} | cut -d: -f1)\""
    progress.log(f"trying {', '.join(changes)} in {image}")
    try:
        out = runner.client.containers.run(image, ["sh", "-c", script], user="0:0", remove=True, volumes=mounts,
                                           network_disabled=True, working_dir="/tmp", stdout=True, stderr=True)
        text, ok = out.decode(errors="replace"), True
    except Exception as exc:  # ContainerError carries the output
        text, ok = _container_output(exc), False
    seconds = time.monotonic() - t0
    if not ok:
        return TryResult(False, image, failure_headline(text) or "the command failed", text, seconds)
    names = sorted({f"{n}=={v}" for n, v in map(wheel_name, wheels) if n in {project(c) for c in changes}})
    return TryResult(True, image, f"installs in {image}: {', '.join(names)}", text, seconds)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _container_output(exc: Exception) -> str:
    stderr = getattr(exc, "stderr", None)
    if isinstance(stderr, bytes):
        return stderr.decode(errors="replace")
    return str(exc)


def write_requirements(task: Task, changes: list[str]) -> Path:
    """Save ``changes`` into the task's requirements file (the one its image uses)."""
    from lmrbench.fsutil import atomic_write_text

    reqs = read_task_requirements(task)
    path = reqs.source if reqs.source is not None and reqs.source.name == "requirements.txt" else (
        task.path / "requirements.txt")
    options = pip_options(reqs.text)
    kept = [f"{options[i]} {options[i + 1]}" for i in range(0, len(options), 2)]
    atomic_write_text(path, "\n".join([*kept, *changed_requirements(reqs.lines, changes)]) + "\n")
    return path
