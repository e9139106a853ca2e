"""What lmrbench's images are and hold: the base, the framework layers and the task images on them, with the
bytes each adds and which tasks share a framework layer; and pruning that keeps what a task set uses."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lmrbench.benchmark.sandbox.environments.layers import (
    FRAMEWORK_LABEL,
    FRAMEWORK_REPO,
    LAYER_LABEL,
    PARENT_LABEL,
    TASK_LABEL,
    TASK_PATH_LABEL,
    TASK_REPO_PREFIX,
    task_slug,
)

if TYPE_CHECKING:
    import docker


@dataclass
class ImageRow:
    """One local lmrbench image."""

    tag: str
    short_id: str
    kind: str
    """``base``, ``framework``, ``task`` (or ``other``)."""
    size: int
    """Bytes of the whole image, its parents' included."""
    own: int
    """Bytes this image adds to its parent (its own layers)."""
    created: str = ""
    parent: str = ""
    task: str = ""
    framework: str = ""
    """Framework pins (``torch==2.4.1``) of a framework layer or a task image on one."""
    users: list[str] = field(default_factory=list)
    """Task images built on this framework layer."""


def inventory(client: docker.DockerClient) -> list[ImageRow]:
    """Every local lmrbench image (frameworks first, then tasks, then the rest), with what each adds."""
    rows: list[ImageRow] = []
    # the engine's summaries, not ``images.list()``: that inspects each image afterwards, and one that another
    # process removes in between (a prune, a test's cleanup) failed the whole listing with ImageNotFound
    import docker.errors

    for summary in client.api.images():
        if not any(t.startswith("lmrbench") for t in summary.get("RepoTags") or []):
            continue
        try:
            img = client.api.inspect_image(summary["Id"])
        except docker.errors.ImageNotFound:
            continue
        labels = (img.get("Config") or {}).get("Labels") or {}
        short_id = str(img.get("Id", "")).removeprefix("sha256:")[:12]
        size, created = int(img.get("Size") or 0), str(img.get("Created", ""))
        for tag in img.get("RepoTags") or []:
            if not tag.startswith("lmrbench"):
                continue
            kind = labels.get(LAYER_LABEL) or ("task" if tag.startswith(TASK_REPO_PREFIX) else
                                               "framework" if tag.startswith(FRAMEWORK_REPO) else
                                               "base" if tag.startswith("lmrbench-base") else "other")
            task = labels.get(TASK_LABEL, "")
            if tag.startswith(TASK_REPO_PREFIX):  # an image two tasks share is labelled with the first one's name
                slug = tag.removeprefix(TASK_REPO_PREFIX).rpartition(":")[0]
                task = task if task_slug(task) == slug else slug
            rows.append(ImageRow(tag, short_id, kind, size, size, created, labels.get(PARENT_LABEL, ""), task,
                                 labels.get(FRAMEWORK_LABEL, "")))
    by_tag = {r.tag: r for r in rows}
    for r in rows:
        if r.parent in by_tag:
            r.own = max(0, r.size - by_tag[r.parent].size)
            by_tag[r.parent].users.append(r.task or r.tag)
    order = {"base": 0, "framework": 1, "task": 2}
    return sorted(rows, key=lambda r: (order.get(r.kind, 3), r.tag))


def keep_for(rows: list[ImageRow], tasks: set[str]) -> set[str]:
    """The tags a task set uses: each of its tasks' newest image, and the framework layers under those."""
    slugs = {task_slug(t) for t in tasks}
    newest: dict[str, ImageRow] = {}
    for r in rows:
        slug = task_slug(r.task)
        if r.kind == "task" and slug in slugs and (slug not in newest or r.created > newest[slug].created):
            newest[slug] = r
    keep = {r.tag for r in newest.values()}
    return keep | {r.parent for r in newest.values() if r.parent.startswith(FRAMEWORK_REPO)}


def remove_superseded(client: docker.DockerClient, tag: str, folder: Path) -> list[str]:
    """Untag the images that ``tag`` (a task image built for the task ``folder``) replaces: the task's other
    images (``lmrbench-task-<name>:*`` but ``tag``) built from ``folder`` (their label) or from a folder that no
    longer exists (the task was moved: a draft saved into its set), and the tags of a sibling folder that no
    longer exists (the task was renamed in its set, as the app renames a draft) but those of a task that is still
    there (an image of the same environment tagged for it). The engine deletes an image when no tag is left, so
    one that another task's tag names stays; an image a container still uses is kept, and so is one of another
    existing folder of the same name (another copy of the task set). Returns the tags removed."""
    import docker

    repo = tag.rpartition(":")[0]
    if not repo.startswith(TASK_REPO_PREFIX):
        return []
    folder = Path(folder).resolve()
    siblings = {TASK_REPO_PREFIX + task_slug(p.name) for p in folder.parent.iterdir() if p.is_dir()} \
        if folder.parent.is_dir() else set()
    removed = []
    # the engine's summaries (labels and tags), as ``inventory`` reads them: ``images.list()`` inspects each image
    # afterwards and fails when another process removes one in between
    for summary in client.api.images(filters={"reference": f"{TASK_REPO_PREFIX}*"}):
        made_for = (summary.get("Labels") or {}).get(TASK_PATH_LABEL)
        if not made_for:
            continue
        gone = not _exists(Path(made_for))
        for old in summary.get("RepoTags") or []:
            old_repo = old.rpartition(":")[0]
            if old == tag or not old_repo.startswith(TASK_REPO_PREFIX):
                continue
            mine = old_repo == repo and (made_for == str(folder) or gone)
            renamed = gone and Path(made_for).parent == folder.parent and old_repo not in siblings
            if not (mine or renamed):
                continue
            try:
                client.images.remove(old)
                removed.append(old)
            except docker.errors.APIError:  # a container of it still runs (a warm boot): left for a prune
                continue
    return sorted(removed)


def _exists(path: Path) -> bool:
    """Whether ``path`` exists; True when it cannot be told (a folder this user may not look into)."""
    try:
        path.stat()
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True


def prune_images(client: docker.DockerClient, keep: set[str] | None = None) -> tuple[list[str], list[str]]:
    """Remove task images and framework layers (caches: rebuilt on demand) except the tags in ``keep``; task
    images first, so that the layers under them can go too. Returns (removed, kept because a container uses
    them)."""
    import docker

    removed, busy = [], []
    rows = [r for r in inventory(client) if r.kind in ("task", "framework") and r.tag not in (keep or set())]
    for r in sorted(rows, key=lambda r: r.kind != "task"):
        try:
            client.images.remove(r.tag)
            removed.append(r.tag)
        except docker.errors.APIError:
            busy.append(r.tag)
    return sorted(removed), sorted(busy)
