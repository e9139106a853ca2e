"""A task's Dockerfile: the official build args (UID, GID, DIR) plus ``ARG BASE_IMAGE``, requirements only.

The generated image holds the Python environment and nothing of the task: no golden files, no tests, no
repo. The runner copies the evaluated repo variant into a fresh container for each run. Its build context,
assembled by the runner rather than taken from the task folder, holds this Dockerfile,
``requirements.txt`` and ``wheels/`` (a host-side wheelhouse, installed with ``--no-index``: see
``lmrbench.benchmark.sandbox.environments.wheelhouse``).

Official Dockerfiles (``FROM`` a pytorch image, ``COPY . .`` of the whole task folder) still build with
the task folder as context where their base image is available; ``dockerfile_warnings`` says that such a
copy bakes the golden files into the image.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING

from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_text

if TYPE_CHECKING:
    from lmrbench.authoring.check.findings import Finding

DOCKERFILE = "Dockerfile"
GENERATED_MARK = "# lmrbench task image"
DEFAULT_BASE_IMAGE = "python:3.11-slim"

IMAGE_ENV = "LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 VIRTUAL_ENV=/opt/venv"
"""The environment a task image sets, besides ``/opt/venv/bin`` put first on ``PATH``."""
MAKE_VENV = "if [ ! -x /opt/venv/bin/python ]; then python3 -m venv /opt/venv; fi"
PIP_INSTALL = ("/opt/venv/bin/pip install --no-cache-dir --no-index --find-links /tmp/lmrbench \\\n"
               "        -r /tmp/lmrbench/requirements.txt pytest")
"""Installs requirements.txt and the wheels put in /tmp/lmrbench, offline."""
USER_SETUP = """\
if ! getent group "$GID" >/dev/null; then \\
        groupadd -g "$GID" lmrbench 2>/dev/null || echo "lmrbench:x:$GID:" >> /etc/group; fi \\
 && if ! getent passwd "$UID" >/dev/null; then \\
        useradd -m -u "$UID" -g "$GID" -s /bin/sh lmrbench 2>/dev/null \\
        || echo "lmrbench:x:$UID:$GID::/tmp:/bin/sh" >> /etc/passwd; fi \\
 && mkdir -p /workspace && chown "$UID:$GID" /workspace"""
"""The task's user (build args UID, GID) and /workspace, theirs; the image then runs as that user in /workspace.
The build arg DIR (the repository's folder, as the official tooling passes it) is taken and changes nothing: the
tooling mounts the task folder at /workspace, so one image serves every task with the same requirements."""
# The Dockerfile below and the runner's one-commit build of an unedited generated Dockerfile
# (``lmrbench.benchmark.sandbox.environments.commit_build``) both use these fragments: the two cannot drift apart.

_TEMPLATE = """\
{mark}: the task's Python environment only (no repo, tests or golden files).
# Build context (assembled by lmrbench): this file, requirements.txt{req_note},
# wheels/ (resolved on the host for the image's exact Python and platform). Build args: BASE_IMAGE (the parent:
# lmrbench's base image, or the framework layer holding torch that every task pinning the same version shares),
# UID, GID (the user the image runs as), DIR (the repository's folder, as the official tooling passes it; unused).
# Two stages: the wheels are installed in the first; only what the installation added to /opt/venv is copied
# into the image, so the wheels stay in no layer of it. Few instructions: each is a container of its own.
ARG BASE_IMAGE={base}
FROM ${{BASE_IMAGE}} AS install
COPY requirements.txt wheels/ /tmp/lmrbench/
RUN {make_venv} \\
 && find /opt/venv -xdev | sort > /tmp/lmrbench.before && touch /tmp/lmrbench.stamp \\
 && {pip_install} \\
 && find /opt/venv -xdev | sort > /tmp/lmrbench.after && mkdir -p /opt/lmrbench-layer \\
 && comm -23 /tmp/lmrbench.before /tmp/lmrbench.after > /opt/lmrbench-layer/.lmrbench-removed \\
 && find /opt/venv -xdev -newer /tmp/lmrbench.stamp ! -type d -print0 \\
    | tar --null --create --file - --files-from - 2>/dev/null | tar --extract --file - -C /opt/lmrbench-layer
FROM ${{BASE_IMAGE}}
ARG UID=1000 GID=1000 DIR=repo
ENV {image_env} PATH=/opt/venv/bin:$PATH
COPY --from=install /opt/lmrbench-layer/ /
RUN xargs -r -d '\\n' rm -rf -- < /.lmrbench-removed && rm -f /.lmrbench-removed \\
{user}"""

_USER = f"""\
 && {USER_SETUP}
# An instruction of your own (an apt package, say) goes here, where it still runs as root.
WORKDIR /workspace
USER $UID:$GID
"""

OFFICIAL_MARK = "# lmrbench task image, exported for the official LMR-Bench tooling"

_OFFICIAL = """\
{mark}: build it in this folder with
#   docker build --build-arg UID=$(id -u) --build-arg GID=$(id -g) --build-arg DIR={repo} -t NAME .
# and run the tests with this folder mounted at /workspace. The image holds the Python environment only.
# `python` (what the official runner calls, in a login shell that resets PATH) runs the venv's interpreter.
ARG BASE_IMAGE={base}
FROM ${{BASE_IMAGE}}
ARG UID=1000 GID=1000 DIR={repo}
ENV {image_env} PATH=/opt/venv/bin:$PATH
{copy}RUN {make_venv} \\
 && rm -f /usr/local/bin/python \\
 && printf '#!/bin/sh\\nexec /opt/venv/bin/python "$@"\\n' > /usr/local/bin/python \\
 && chmod 755 /usr/local/bin/python \\
 && {pip} pytest \\
 && rm -rf /tmp/lmrbench \\
{user}"""


def render_official_dockerfile(
    *, repo_folder_name: str, base_image: str = DEFAULT_BASE_IMAGE, requirements: str | None, wheels: bool
) -> str:
    """A Dockerfile that builds with the official ``docker build`` in the task folder (context = the folder):
    it copies only ``requirements`` (relative to the task folder) and ``wheels/`` when they are there."""
    pip = "pip install --no-cache-dir"
    if requirements:
        pip += " -r /tmp/lmrbench/requirements.txt"
    copy = f"COPY {requirements} /tmp/lmrbench/requirements.txt\n" if requirements else ""
    if wheels:
        copy += "COPY wheels/ /tmp/lmrbench/wheels/\n"
        pip += " --no-index --find-links /tmp/lmrbench/wheels"
    return _OFFICIAL.format(mark=OFFICIAL_MARK, repo=repo_folder_name, base=base_image, copy=copy, pip=pip,
                            image_env=IMAGE_ENV, make_venv=MAKE_VENV, user=_USER)


BODY_MARK = "# body "
"""Starts the comment line of a generated Dockerfile that holds the digest of its instructions as written."""


def body_digest(text: str) -> str:
    """A digest of a Dockerfile's instructions: comments, blank lines and the default of ``ARG BASE_IMAGE`` left
    out (a task's image always gets its parent as a build argument)."""
    lines = [line.rstrip() for line in text.splitlines()]
    body = [line for line in lines if line.strip() and not line.lstrip().startswith("#")
            and not re.match(r"^\s*ARG\s+BASE_IMAGE=", line)]
    return hashlib.sha256("\n".join(body).encode()).hexdigest()[:16]


def render_dockerfile(
    *, base_image: str = DEFAULT_BASE_IMAGE, requirements: str | None = None, user: bool = True
) -> str:
    """The Dockerfile text; ``requirements`` names (for the reader) where requirements.txt comes from. Without
    ``user`` it is a framework layer: no user, no WORKDIR, root stays (a task layer builds on it)."""
    note = f" (from {requirements})" if requirements else " (empty when the task has none)"
    text = _TEMPLATE.format(mark=GENERATED_MARK, base=base_image, req_note=note, make_venv=MAKE_VENV,
                            pip_install=PIP_INSTALL, image_env=IMAGE_ENV, user=_USER if user else " && true\n")
    first, rest = text.split("\n", 1)
    return (f"{first}\n{BODY_MARK}{body_digest(text)}: edit below and lmrbench builds the task's layer from this "
            f"file as written\n{rest}")


def edited(text: str) -> bool:
    """True for a generated Dockerfile whose instructions differ from those it was written with (an author added
    a package, say); False for one as written, and for one written before the digest was recorded."""
    m = re.search(rf"^{re.escape(BODY_MARK)}([0-9a-f]{{16}})\b", text, re.MULTILINE)
    return m is not None and m.group(1) != body_digest(text)


def write_dockerfile(
    task_dir: Path,
    repo_folder_name: str,
    requirements: str | None = None,
    *,
    base_image: str = DEFAULT_BASE_IMAGE,
    force: bool = False,
) -> tuple[Path, list[str]]:
    """Write ``<task_dir>/Dockerfile``; an existing one that lmrbench did not write is kept unless ``force``,
    which carries what it installs (``dockerfile_carry``: requirements into ``<task_dir>/requirements.txt``,
    editable folders, shell steps and ENV into the new file) or raises LmrError naming the step it cannot carry,
    writing nothing. Returns the path and one line per step carried.

    ``requirements`` is the requirements file relative to the task folder (default: requirements.txt of the
    task folder, else of the repo folder, else none).
    """
    from lmrbench.authoring.check.dockerfile_carry import Carried, carried_instructions, read_original, torch_note

    task_dir = Path(task_dir)
    if not (task_dir / repo_folder_name).is_dir():
        raise LmrError(f"repo folder {repo_folder_name!r} does not exist", task_dir)
    path = task_dir / DOCKERFILE
    original = path.read_text(errors="replace") if path.is_file() else ""
    if path.exists() and not force and not is_generated(original):
        raise LmrError("a Dockerfile not written by lmrbench exists; pass force to replace it", path)
    carried = Carried()
    if original and not is_generated(original):
        try:
            carried = read_original(original, task_dir, repo_folder_name)
        except LmrError as exc:
            raise LmrError(f"{exc.problem}; nothing was written", path) from None
    req_text = None
    if carried.requirements:
        own = task_dir / "requirements.txt"
        kept = [ln.strip() for ln in own.read_text(errors="replace").splitlines()] if own.is_file() else []
        lines = list(dict.fromkeys([*carried.requirements, *(k for k in kept if k and not k.startswith("#"))]))
        req_text = ("# What the task's original Dockerfile installed, carried by `lmrbench image dockerfile`.\n"
                    + "\n".join(lines) + "\n")
        requirements = "requirements.txt"
    if requirements is None:
        for cand in ("requirements.txt", f"{repo_folder_name}/requirements.txt"):
            if (task_dir / cand).is_file():
                requirements = cand
                break
    elif req_text is None and not (task_dir / requirements).is_file():
        raise LmrError("requirements file does not exist", task_dir / requirements)
    text = render_dockerfile(base_image=base_image, requirements=requirements)
    extra = carried_instructions(carried)
    if extra:
        text = text.replace(_OWN_LINE, _OWN_LINE + "# Carried from the task's original Dockerfile:\n" + extra, 1)
    if req_text is not None:
        atomic_write_text(task_dir / "requirements.txt", req_text)
    atomic_write_text(path, text)
    if carried.torch:
        carried.said.append(torch_note(carried.torch, task_dir / (requirements or "requirements.txt"),
                                       req_text is not None))
    return path, carried.said


_OWN_LINE = "# An instruction of your own (an apt package, say) goes here, where it still runs as root.\n"


def is_generated(text: str) -> bool:
    """True for a Dockerfile written by ``write_dockerfile`` (not for an exported one, which builds from its folder)."""
    return text.startswith(GENERATED_MARK + ":")


_COPY_RE = re.compile(r"^\s*(COPY|ADD)\s+(?:--\S+\s+)*(.+)$", re.IGNORECASE | re.MULTILINE)


def copies_task_folder(text: str) -> bool:
    """True when the Dockerfile copies the whole build context (``COPY . .``, ``ADD . /x``)."""
    for m in _COPY_RE.finditer(text):
        parts = m.group(2).split()
        if parts and parts[0].startswith("["):
            continue
        if any(src in (".", "./", "*") for src in parts[:-1]):
            return True
    return False


def context_copies(text: str) -> list[str]:
    """The sources of the COPY and ADD instructions that read the build context (not ``--from`` a stage)."""
    out = []
    for m in _COPY_RE.finditer(text):
        if re.search(r"--from[= ]", m.group(0), re.IGNORECASE):
            continue
        parts = m.group(2).split()
        if parts and parts[0].startswith("["):  # the JSON form: ["src", "dest"]
            parts = [p.strip().strip('[]"') for p in m.group(2).split('",')]
        out += [p for p in parts[:-1] if p]
    return out


def dockerfile_findings(text: str, task: str) -> list[Finding]:
    """D402 (copies the task folder) and D403 (no ARG BASE_IMAGE, a note) for a Dockerfile lmrbench did not write."""
    from lmrbench.authoring.check.findings import Finding

    if is_generated(text):
        return []
    out = []
    if copies_task_folder(text):
        out.append(Finding("D402", task, DOCKERFILE, "copies the whole task folder into the image (COPY . .): "
                           "golden files and tests are readable by the code under test"))
    if not re.search(r"^\s*ARG\s+BASE_IMAGE\b", text, re.MULTILINE):
        out.append(Finding("D403", task, DOCKERFILE, "has no ARG BASE_IMAGE: it builds only where its FROM image "
                           "can be pulled or exists"))
    return out


def dockerfile_warnings(text: str, path: Path | str = DOCKERFILE) -> list[str]:
    """One-line warnings about a task's Dockerfile (empty for a generated one)."""
    if is_generated(text):
        return []
    out = []
    if copies_task_folder(text):
        out.append(
            f"{path}: copies the whole task folder into the image (COPY . .): golden files and tests are "
            "baked into it, readable by the code under test; `lmrbench` can write a Dockerfile that "
            "does not"
        )
    if not re.search(r"^\s*ARG\s+BASE_IMAGE\b", text, re.MULTILINE):
        out.append(
            f"{path}: has no ARG BASE_IMAGE: it builds only where its FROM image can be pulled or exists"
        )
    return out
