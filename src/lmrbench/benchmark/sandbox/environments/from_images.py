"""The images a Dockerfile lmrbench did not write builds ``FROM``, checked before the build: one that is neither
present nor pullable (an official ``FROM pytorch/pytorch:*`` on a machine without a registry) is an environment
error for that task in one line with the fix, never a build transcript or a golden run that "failed"."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from lmrbench.errors import EnvironmentUnavailable

if TYPE_CHECKING:
    import docker

_ARG = re.compile(r"^\s*ARG\s+(.+)$", re.IGNORECASE)
_FROM = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?", re.IGNORECASE)
_VAR = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}?")


def from_images(text: str, buildargs: dict[str, str] | None = None) -> list[str]:
    """The images a Dockerfile's stages start from, build args and ARG defaults substituted (earlier stages and
    ``scratch`` left out), in order."""
    values = dict(buildargs or {})
    stages: set[str] = set()
    out: list[str] = []
    for line in text.splitlines():
        if m := _ARG.match(line):
            for item in m.group(1).split():
                name, _, default = item.partition("=")
                values.setdefault(name, default.strip("\"'"))
        elif m := _FROM.match(line):
            ref = _VAR.sub(lambda v: values.get(v.group(1)) or v.group(2) or "", m.group(1))
            if ref and ref.lower() != "scratch" and ref not in stages and ref not in out:
                out.append(ref)
            if m.group(2):
                stages.add(m.group(2))
    return out


def check_from_images(client: docker.DockerClient, text: str, path: Path, base: str = "") -> None:
    """LmrError (one line, naming the Dockerfile and the fix) when an image the Dockerfile builds FROM is not
    present and cannot be pulled."""
    from lmrbench.benchmark.sandbox.environments.base_image import pull_image
    from lmrbench.benchmark.sandbox.environments.images import image_id

    for ref in from_images(text, {"BASE_IMAGE": base} if base else None):
        if image_id(client, ref):
            continue
        reason = pull_image(client, ref)
        if reason is None and image_id(client, ref):
            continue
        raise EnvironmentUnavailable(
            f"FROM {ref} is not here and cannot be pulled ({(reason or 'not found').rsplit(': ', 1)[-1][:80]}); "
            f"fix: `lmrbench image dockerfile {path.parent} --force` writes lmrbench's layered Dockerfile "
            "(it keeps the task's requirements)",
            path, cause="image",
        )
