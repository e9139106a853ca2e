"""Run containers are labelled with their task and their owner (host and pid), image build containers name their
owner; those of owners that are gone (a killed lmrbench) are swept at each command's first call to the engine,
and before images are pruned."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import socket
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import docker

RUN_LABEL = "org.lmrbench.run"
"""Label of every run container: the task's name."""
OWNER_LABEL = "org.lmrbench.owner"
"""Label of every run container: ``host:pid`` of the lmrbench process that started it."""


BUILD_PREFIX = "lmrbench-build-"
"""Image build containers are named ``lmrbench-build-<host>-<pid>-<n>``: their owner is in the name, since a
commit would keep a label of the container in the image."""
_BUILD_NAME = re.compile(rf"^/?{BUILD_PREFIX}(?P<host>.+)-(?P<pid>\d+)-\d+$")
_builds = itertools.count()


def build_container_name() -> str:
    """A new build container name owned by this process."""
    return f"{BUILD_PREFIX}{socket.gethostname()}-{os.getpid()}-{next(_builds)}"


def owner() -> str:
    """This process's owner label: host and pid."""
    return f"{socket.gethostname()}:{os.getpid()}"


_swept = threading.Event()


def sweep_once(client: docker.DockerClient) -> list[str]:
    """``remove_stale_containers`` the first time this process talks to an engine (every command's start)."""
    if _swept.is_set():
        return []
    _swept.set()
    try:
        return remove_stale_containers(client)
    except Exception:  # an engine that cannot list containers still runs them; the next start tries again
        return []


def remove_stale_containers(client: docker.DockerClient) -> list[str]:
    """Remove run and build containers left by lmrbench processes of this host that are gone; return their
    names."""
    import docker

    removed = []
    # sparse: the list's own data, no inspect per container (one removed meanwhile would be a 404)
    found = [*client.containers.list(all=True, filters={"label": RUN_LABEL}, sparse=True),
             *client.containers.list(all=True, filters={"name": BUILD_PREFIX}, sparse=True)]
    for c in found:
        labels = c.attrs.get("Labels") or {}
        host, _, pid = str(labels.get(OWNER_LABEL, "")).partition(":")
        if m := _BUILD_NAME.match(str((c.attrs.get("Names") or [""])[0])):
            host, pid = m.group("host"), m.group("pid")
        if host != socket.gethostname() or not pid.isdigit() or _alive(int(pid)):
            continue
        with contextlib.suppress(docker.errors.NotFound):
            c.remove(force=True)
            removed.append(str((c.attrs.get("Names") or [c.id])[0]).lstrip("/"))
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


