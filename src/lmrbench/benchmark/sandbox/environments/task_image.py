"""How the Docker runner gets a task's image: a generated Dockerfile builds in layers (the framework layer its
requirements resolve to, shared and built once, then the task layer with the rest); a Dockerfile lmrbench did not
write builds as it is, after its FROM images are checked (one line when one cannot be had)."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from lmrbench.authoring.check.dockerfile import DOCKERFILE, edited, is_generated, render_dockerfile
from lmrbench.benchmark.sandbox.environments.commit_build import commit_build
from lmrbench.benchmark.sandbox.environments.from_images import check_from_images
from lmrbench.benchmark.sandbox.environments.image_build import build_context, docker_build
from lmrbench.benchmark.sandbox.environments.images import image_id
from lmrbench.benchmark.sandbox.environments.layers import (
    FRAMEWORK_LABEL,
    LAYER_LABEL,
    PARENT_LABEL,
    TASK_LABEL,
    TASK_PATH_LABEL,
    TASK_REPO_PREFIX,
    TORCH_SOURCE_LABEL,
    LayerPlan,
    plan_layers,
    task_slug,
)
from lmrbench.benchmark.sandbox.environments.machine_lock import MachineLock
from lmrbench.benchmark.sandbox.environments.wheelhouse import pip_options
from lmrbench.core.taskset import Task
from lmrbench.progress import Progress, check_cancel

if TYPE_CHECKING:
    import docker

    from lmrbench.benchmark.sandbox.environments.layers import TorchSource
    from lmrbench.benchmark.sandbox.environments.wheelhouse import WheelTarget


class ImageHost(Protocol):
    """What building a task's image needs of the Docker runner."""

    uid: int
    gid: int
    torch: TorchSource
    framework_projects: frozenset[str]

    @property
    def client(self) -> docker.DockerClient: ...  # noqa: D102

    def resolve_base(self) -> str: ...  # noqa: D102

    def wheel_target(self, image: str) -> WheelTarget: ...  # noqa: D102


def image_tag(task_name: str, digest: str) -> str:
    """``lmrbench-task-<name>:<digest>`` with the name made a valid repository name."""
    return f"{TASK_REPO_PREFIX}{task_slug(task_name)}:{digest}"


def _folder_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file() and ".git" not in p.relative_to(folder).parts:
            h.update(p.relative_to(folder).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def prepare_tag(
    runner: ImageHost,
    task: Task,
    text: str,
    req_text: str,
    lines: list[str],
    rebuild: bool,
    progress: Progress,
    cancel: threading.Event | None,
) -> str:
    """The image tag of these inputs, built when missing (or ``rebuild``). A generated Dockerfile builds in
    layers: the framework layer its requirements resolve to (shared, built once), then the task layer."""
    uses_base = re.search(r"^\s*ARG\s+BASE_IMAGE\b", text, re.MULTILINE) is not None
    base = runner.resolve_base() if uses_base else ""
    generated = is_generated(text)
    if not generated:
        check_from_images(runner.client, text, task.path / DOCKERFILE, base)
        h = hashlib.sha256("\0".join([text, req_text, image_id(runner.client, base) or "" if base else "",
                                      f"{runner.uid}:{runner.gid}", _folder_digest(task.path)]).encode())
        tag = image_tag(task.name, h.hexdigest()[:16])
        _have(runner, tag, rebuild, progress, cancel, task.path,
              lambda: _build_official(runner, task, tag, base, rebuild, progress, cancel))
        return tag
    target = runner.wheel_target(base)
    options = [*pip_options(req_text), *runner.torch.pip_options()]
    plan = plan_layers(lines, target, options=options, projects=runner.framework_projects, progress=progress,
                       cancel=cancel)
    parent = _framework_layer(runner, plan, base, progress, cancel) if plan.framework else base
    own = edited(text)  # the author's additions (an apt package, an ENV) go into the task's layer
    template = text if own else render_dockerfile()
    # the repository's folder name (build arg DIR) counts only where the author's edit may use it: a generated
    # Dockerfile's image serves every task with the same requirements
    folder = [task.info.repo_folder_name] if own else []
    h = hashlib.sha256("\0".join([template, *lines, *plan.added, image_id(runner.client, parent) or "", target.key,
                                  f"{runner.uid}:{runner.gid}", *folder,
                                  *sorted(p.name for p in plan.task)]).encode())
    tag = image_tag(task.name, h.hexdigest()[:16])

    def build() -> None:
        source = " from the task's edited Dockerfile" if own else ""
        progress.log(f"building {tag} on {parent}{source}: {len(plan.task)} wheel(s)")
        labels = {LAYER_LABEL: "task", PARENT_LABEL: parent, FRAMEWORK_LABEL: " ".join(plan.pins),
                  TASK_LABEL: task.name, TASK_PATH_LABEL: str(task.path.resolve())}
        _build_layer(runner, template if own else "", [*lines, *plan.added], plan.task, tag, parent, labels,
                     task.name, rebuild, progress, cancel, task.info.repo_folder_name)

    _have(runner, tag, rebuild, progress, cancel, task.path, build)
    return tag


def _have(runner: ImageHost, tag: str, rebuild: bool, progress: Progress, cancel: threading.Event | None,
          folder: Path, build: Callable[[], None]) -> None:
    """Make sure the task image ``tag`` exists: kept when present, else another task's image of the same inputs
    (the same digest: the same Dockerfile, requirements, wheels and parent) is tagged for it, else ``build``
    runs; ``rebuild`` always builds. Under a machine-wide lock per digest, so that two jobs of one process, two
    lmrbench processes, or two tasks of one environment build it once."""
    digest = tag.rpartition(":")[2]
    with MachineLock(f"task-image-{digest}", cancel):  # a file lock excludes the threads of one process too
        if not rebuild:
            if image_id(runner.client, tag):
                return
            twins = runner.client.images.list(filters={"reference": f"{TASK_REPO_PREFIX}*:{digest}"})
            if twins:
                repo = tag.rpartition(":")[0]
                twins[0].tag(repo, digest)
                progress.log(f"{tag}: the image of {twins[0].tags[0] if twins[0].tags else digest}, "
                             "whose environment is the same")
                _superseded(runner, tag, folder, progress)
                return
        check_cancel(cancel)
        build()
    _superseded(runner, tag, folder, progress)


def _superseded(runner: ImageHost, tag: str, folder: Path, progress: Progress) -> None:
    """Remove the images of the task folder that ``tag`` replaces (a try / re-record loop left one per change)."""
    from lmrbench.benchmark.sandbox.environments.inventory import remove_superseded

    removed = remove_superseded(runner.client, tag, folder)
    if removed:
        progress.log(f"{tag} replaces {', '.join(removed)}: removed")


def _image_lock(tag: str, cancel: threading.Event | None) -> MachineLock:
    """The lock under which the framework layer ``tag`` is looked for and built, once on this machine."""
    return MachineLock("image-" + re.sub(r"[^A-Za-z0-9._-]+", "_", tag), cancel)


def _framework_layer(runner: ImageHost, plan: LayerPlan, base: str, progress: Progress,
                     cancel: threading.Event | None) -> str:
    """The framework layer's tag, built when missing (once for every task that resolves to the same wheels; a
    task's ``--rebuild`` rebuilds its own layer, not the shared one, whose tag already names its wheels)."""
    template = render_dockerfile(user=False)
    tag = plan.framework_tag(image_id(runner.client, base) or base, template)
    with _image_lock(tag, cancel):
        if image_id(runner.client, tag):
            return tag
        check_cancel(cancel)
        size = sum(p.stat().st_size for p in plan.framework) / 1e6
        progress.log(f"building the framework layer {tag} ({', '.join(plan.pins)}, {len(plan.framework)} "
                     f"wheels, {size:,.0f} MB; {runner.torch.describe()}): once for every task that pins it")
        labels = {LAYER_LABEL: "framework", PARENT_LABEL: base, FRAMEWORK_LABEL: " ".join(plan.pins),
                  TORCH_SOURCE_LABEL: runner.torch.describe()}
        _build_layer(runner, "", plan.pins, plan.framework, tag, base, labels, tag, False, progress, cancel)
    return tag


def _build_layer(runner: ImageHost, edited_text: str, lines: list[str], wheels: list[Path], tag: str, parent: str,
                 labels: dict[str, str], what: str, rebuild: bool, progress: Progress,
                 cancel: threading.Event | None, dir_name: str = "") -> None:
    """A task layer (``dir_name`` given) or a framework layer on ``parent``: in one commit as the generated
    Dockerfile builds it, or from ``edited_text``, the author's edit of it, by the classic builder."""
    if not edited_text:
        user = (runner.uid, runner.gid) if dir_name else None
        commit_build(runner.client, parent, tag, requirements=lines, wheels=wheels, user=user, labels=labels,
                     what=what, progress=progress, cancel=cancel)
        return
    label_line = "LABEL " + " ".join(f"{k}={json.dumps(v)}" for k, v in labels.items())
    files = {"Dockerfile": f"{edited_text.rstrip()}\n{label_line}\n".encode(),
             "requirements.txt": "\n".join(lines).encode() + b"\n"}
    # DIR as the official tooling passes it: the repository's folder name (its Dockerfiles use /workspace/$DIR)
    args = {"UID": str(runner.uid), "GID": str(runner.gid), "BASE_IMAGE": parent}
    if dir_name:
        args["DIR"] = dir_name
    docker_build(runner.client, build_context(files, {}, wheels), tag, what=what, buildargs=args, nocache=rebuild,
                 progress=progress, cancel=cancel)


def _build_official(runner: ImageHost, task: Task, tag: str, base: str, rebuild: bool, progress: Progress,
                    cancel: threading.Event | None) -> None:
    """A Dockerfile lmrbench did not write: built as it is, with the task folder as its context."""
    check_cancel(cancel)
    progress.log(f"building {tag} from {base or 'its own FROM'}")
    args = {"UID": str(runner.uid), "GID": str(runner.gid), "DIR": task.info.repo_folder_name}
    if base:
        args["BASE_IMAGE"] = base
    docker_build(runner.client, build_context({}, {".": task.path}), tag, what=task.name, buildargs=args,
                 labels={LAYER_LABEL: "task", TASK_LABEL: task.name, TASK_PATH_LABEL: str(task.path.resolve())},
                 nocache=rebuild, progress=progress,
                 cancel=cancel)

