"""An unedited generated Dockerfile built with one commit instead of the classic builder's one per instruction.

A container of the parent image gets requirements.txt and the wheels in /tmp/lmrbench, runs the Dockerfile's own
shell fragments (the venv, the offline pip install, the task's user; ``lmrbench.authoring.check.dockerfile``), deletes
the wheels and stops; one commit makes the image, its ENV, WORKDIR, USER and labels set as the Dockerfile sets them.
The wheels are gone before the commit, so no layer holds them (what the Dockerfile's two stages are for).

Why: the classic builder commits a container for every instruction (WORKDIR, USER and LABEL too), and where the
storage driver has no native diff (fuse-overlayfs, vfs) a commit walks the whole image tree: 3.5 s for the 275 MB
base here, seven commits per task image, 41 s for a numpy task against 9 s with one commit.
"""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from lmrbench.authoring.check.dockerfile import IMAGE_ENV, MAKE_VENV, PIP_INSTALL, USER_SETUP
from lmrbench.benchmark.sandbox.environments.build_log import failure_headline
from lmrbench.benchmark.sandbox.environments.containers import build_container_name
from lmrbench.benchmark.sandbox.environments.image_build import (
    BuildHeartbeat,
    build_context,
    image_id,
    record_build_seconds,
)
from lmrbench.errors import LmrError
from lmrbench.progress import NullProgress, Progress, check_cancel
from lmrbench.subprocess_progress import HEARTBEAT_SECONDS

if TYPE_CHECKING:
    import docker

def install_script(user: bool) -> str:
    """The shell script of a layer: the Dockerfile's fragments in its order, then the wheels deleted."""
    steps = [MAKE_VENV, PIP_INSTALL, "rm -rf /tmp/lmrbench"] + ([USER_SETUP] if user else [])
    return "set -e\n" + "\n".join(steps) + "\n"


def commit_build(
    client: docker.DockerClient,
    parent: str,
    tag: str,
    *,
    requirements: list[str],
    wheels: list[Path],
    user: tuple[int, int] | None,
    labels: dict[str, str],
    what: str,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> str:
    """Build ``tag`` on ``parent`` as the generated Dockerfile would; ``user`` is (UID, GID) for a task layer, None
    for a framework layer. One-line LmrError naming ``what`` on failure; no container is left either way."""
    progress = progress or NullProgress()
    started = time.monotonic()
    config = client.api.inspect_image(parent).get("Config") or {}
    replaced = image_id(client, tag)
    argv = ["sh", "-c", install_script(user is not None)]
    if user:
        argv = ["env", f"UID={user[0]}", f"GID={user[1]}", *argv]
    # a RUN ignores the parent's ENTRYPOINT (a CUDA image's banner script): the script replaces it here
    split = {"entrypoint": argv[:1], "command": argv[1:]} if config.get("Entrypoint") else {"command": argv}
    # named, not labelled, as this process's (a commit keeps the container's labels in the image)
    container = client.containers.create(parent, **split, name=build_container_name(), network_disabled=True)
    try:
        check_cancel(cancel)
        payload = build_context({"lmrbench/requirements.txt": ("\n".join(requirements) + "\n").encode()}, {},
                                wheels, under="lmrbench")
        with payload:
            container.put_archive("/tmp", payload)
        container.start()
        log = _follow(container, what, progress, cancel)
        status = int(container.wait().get("StatusCode", -1))
        if status != 0:
            cause = failure_headline("\n".join(log[-40:])) or f"the install exited with status {status}"
            raise LmrError(f"image build failed: {cause}", what)
        check_cancel(cancel)
        image = container.commit(*tag.rsplit(":", 1), conf=_config(config, user, labels),
                                 message=f"lmrbench: {len(wheels)} wheel(s) installed in one commit")
    finally:
        with contextlib.suppress(Exception):
            container.remove(force=True)
    if replaced and replaced != image.id:
        with contextlib.suppress(Exception):  # a rebuild's old image, untagged now (kept while a container uses it)
            client.images.remove(replaced, noprune=False)
    record_build_seconds(tag, time.monotonic() - started)
    return str(image.id)


def _config(parent: dict, user: tuple[int, int] | None, labels: dict[str, str]) -> dict:
    """The image's config: the parent's, with the Dockerfile's ENV (``/opt/venv/bin`` first on PATH), its WORKDIR
    and USER for a task layer, the labels, and the parent's entrypoint and command (not the install script's)."""
    env = dict(e.partition("=")[::2] for e in parent.get("Env") or [] if "=" in e)
    env.update(e.partition("=")[::2] for e in IMAGE_ENV.split())
    env["PATH"] = "/opt/venv/bin" + (f":{env['PATH']}" if env.get("PATH") else "")
    # the engine fills what the config leaves empty from the container's (the install script)
    conf: dict = {"Env": [f"{k}={v}" for k, v in env.items()], "Labels": {**(parent.get("Labels") or {}), **labels},
                  "Cmd": parent.get("Cmd") or ["python3"], "User": parent.get("User") or "",
                  "WorkingDir": parent.get("WorkingDir") or ""}
    if parent.get("Entrypoint"):
        conf["Entrypoint"] = parent["Entrypoint"]
    if user:
        conf.update(User=f"{user[0]}:{user[1]}", WorkingDir="/workspace")
    return conf


def _follow(container: docker.models.containers.Container, what: str, progress: Progress,
            cancel: threading.Event | None) -> list[str]:
    """The install's output, line by line to ``progress``, with a status line every heartbeat; kills the
    container on a cancel (pip may print nothing for minutes)."""
    log: list[str] = []
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.5):
            if cancel is not None and cancel.is_set():
                with contextlib.suppress(Exception):
                    container.kill()
                return

    threading.Thread(target=watch, daemon=True).start()
    try:
        with BuildHeartbeat(what, progress, HEARTBEAT_SECONDS) as beat:
            beat.step = "installing"
            pending = ""
            for chunk in container.logs(stream=True, follow=True):
                pending += chunk.decode(errors="replace")
                *lines, pending = pending.split("\n")
                for line in filter(str.strip, lines):
                    log.append(line)
                    progress.log(line)
            if pending.strip():
                log.append(pending)
                progress.log(pending)
    finally:
        done.set()
    check_cancel(cancel)
    return log
