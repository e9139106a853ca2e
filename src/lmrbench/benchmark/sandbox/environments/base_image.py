"""Which base image task images build on, in the order that works on the most machines.

1. a base image already present locally (the bootstrapped one, else the official python image);
2. else the official python image, pulled where a registry answers;
3. else a base bootstrapped from Debian packages, where mmdebstrap or debootstrap is installed;
4. else none: :class:`NoBaseImage` says why, and the caller falls back to the local runner.
"""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from lmrbench.benchmark.sandbox.environments.images import (
    BASE_IMAGE_TAG,
    OFFICIAL_BASE_IMAGE,
    bootstrap_base_image,
    image_id,
)
from lmrbench.errors import LmrError
from lmrbench.progress import NullProgress, Progress, check_cancel

if TYPE_CHECKING:
    import docker

BOOTSTRAP_TOOLS = ("mmdebstrap", "debootstrap")
"""Programs that can write a Debian root filesystem for a bootstrapped base image."""


class NoBaseImage(LmrError):
    """No base image is present, none can be pulled, and none can be bootstrapped."""


@dataclass(frozen=True)
class BaseChoice:
    """The base image chosen and how it was obtained."""

    tag: str
    how: Literal["present", "pulled", "bootstrapped"]
    detail: str = ""
    """What was tried before (a failed pull), or the bootstrap tool."""

    def line(self) -> str:
        """One line for the user: which base, and how it came to be there."""
        said = {"present": "present locally", "pulled": "pulled from a registry", "bootstrapped": "bootstrapped"}
        extra = f" ({self.detail})" if self.detail else ""
        return f"note: base image {self.tag}: {said[self.how]}{extra}"


def bootstrap_tool() -> str | None:
    """The first bootstrap tool on PATH, or None."""
    return next((t for t in BOOTSTRAP_TOOLS if shutil.which(t)), None)


def pull_image(client: docker.DockerClient, ref: str) -> str | None:
    """Pull ``ref``; None on success, else the registry's one-line reason."""
    repo, _, tag = ref.rpartition(":") if ":" in ref.rsplit("/", 1)[-1] else (ref, "", "latest")
    try:
        client.images.pull(repo, tag=tag)
    except Exception as exc:
        return " ".join(str(getattr(exc, "explanation", None) or exc).split())[:300]
    return None


def obtain_base_image(
    client: docker.DockerClient,
    *,
    local: tuple[str, ...] = (BASE_IMAGE_TAG, OFFICIAL_BASE_IMAGE),
    official: str = OFFICIAL_BASE_IMAGE,
    bootstrap_tag: str = BASE_IMAGE_TAG,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> BaseChoice:
    """A usable base image, found, pulled or bootstrapped in that order; NoBaseImage when none can be had."""
    progress = progress or NullProgress()
    for tag in local:
        if image_id(client, tag):
            return BaseChoice(tag, "present")
    check_cancel(cancel)
    progress.log(f"no base image present: pulling {official}")
    pull_error = pull_image(client, official)
    if pull_error is None and image_id(client, official):
        return BaseChoice(official, "pulled")
    check_cancel(cancel)
    tool = bootstrap_tool()
    if tool is None:
        raise NoBaseImage(
            f"no base image: {official} cannot be pulled ({pull_error}) and neither mmdebstrap nor "
            "debootstrap is installed to bootstrap one"
        )
    progress.log(f"note: {official} cannot be pulled; bootstrapping {bootstrap_tag} with {tool} (once)")
    res = bootstrap_base_image(bootstrap_tag, progress=progress, cancel=cancel)
    return BaseChoice(res.tag, "bootstrapped" if res.created else "present", res.tool)


def ensure_base_image(sandbox: object, *, progress: Progress, cancel: threading.Event | None = None) -> None:
    """With the Docker runner and no base image at all, pull or bootstrap one (saying so): a fresh machine works.
    Other sandboxes need none."""
    if getattr(sandbox, "name", "") != "docker" or getattr(sandbox, "base_image", None):
        return
    choice = obtain_base_image(sandbox.client, progress=progress, cancel=cancel)  # type: ignore[attr-defined]
    if choice.how != "present":
        progress.log(choice.line())
