"""Layered environments: base (Python) -> framework layer (a torch version and its variant) shared by every task
that pins the same one -> a thin task layer with the rest of the task's requirements.

A task's requirements are resolved once as a whole (so the framework version is the one the task's other
requirements accept); the framework projects it resolved to are then pinned and resolved alone. Their wheels make
the framework layer, tagged by a hash of the parent image and the wheel file names, so two tasks that resolve to
the same torch share one layer; the task layer gets only the wheels the framework layer does not hold. Where a CPU
build of torch can be had (a wheel folder or an index the user names), it is what gets resolved.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from lmrbench.benchmark.sandbox.environments.wheelhouse import WheelTarget, resolve_wheels, wheel_name
from lmrbench.errors import EnvironmentUnavailable
from lmrbench.progress import NullProgress, Progress

FRAMEWORK_PROJECTS = frozenset({"torch", "torchvision", "torchaudio"})
"""Projects that go into the shared framework layer when a task's requirements resolve to them."""
COMPANIONS = {"torch": ["numpy"]}
"""What a task on a framework gets besides its own requirements (in its task layer) when they lack it."""
NUMPY_1_BELOW = {"torch": (2, 3)}
"""Framework versions from which on the wheels were built against NumPy 2: an older one (torch 2.0.1, say) fails to
reach numpy 2 ("Failed to initialize NumPy: _ARRAY_API not found") and gets ``numpy<2`` as its companion, also
where the task names numpy unpinned (its wheels declare no numpy requirement, so nothing else keeps numpy below 2)."""
NUMPY_1 = "numpy<2"
FRAMEWORK_REPO = "lmrbench-framework"
"""Repository name of framework layer images."""
TASK_REPO_PREFIX = "lmrbench-task-"
"""Task images are ``lmrbench-task-<task slug>:<digest of their inputs>``."""
LAYER_LABEL = "org.lmrbench.layer"
"""``framework`` or ``task``: which layer an lmrbench image is."""
PARENT_LABEL = "org.lmrbench.parent"
"""The tag of the image a layer was built on."""
FRAMEWORK_LABEL = "org.lmrbench.framework"
"""The framework pins of a layer (``torch==2.4.1``), on both the framework layer and the task layers above it."""
TASK_LABEL = "org.lmrbench.task"
"""The task (folder name) a task image was built for."""
TASK_PATH_LABEL = "org.lmrbench.task-path"
"""The task folder (absolute) a task image was built from: a newer image of that folder replaces it."""
TORCH_SOURCE_LABEL = "org.lmrbench.torch-source"
"""Where a framework layer's torch came from (``TorchSource.describe``)."""


def task_slug(task_name: str) -> str:
    """A task's name as an image repository name allows it (lower case; a slug is its own slug)."""
    return re.sub(r"[^a-z0-9._-]+", "-", task_name.lower()).strip("-._") or "task"


@dataclass(frozen=True)
class TorchSource:
    """Where a CPU-only (or otherwise chosen) torch comes from: pip options naming a wheel folder or an index."""

    wheels: Path | None = None
    """A folder of torch wheels (``--torch-wheels DIR``)."""
    index: str = ""
    """An extra package index (``--torch-index URL``, e.g. https://download.pytorch.org/whl/cpu)."""

    @classmethod
    def from_env(cls) -> TorchSource:
        """The source named by ``LMRBENCH_TORCH_WHEELS`` / ``LMRBENCH_TORCH_INDEX`` (every command's default)."""
        wheels = os.environ.get("LMRBENCH_TORCH_WHEELS", "")
        return cls(Path(wheels) if wheels else None, os.environ.get("LMRBENCH_TORCH_INDEX", ""))

    def pip_options(self) -> list[str]:
        """The pip options that make pip see this source."""
        out = ["--find-links", str(self.wheels)] if self.wheels else []
        return [*out, "--extra-index-url", self.index] if self.index else out

    def describe(self) -> str:
        """One phrase for the run manifest and the logs."""
        where = [f"wheels from {self.wheels}"] if self.wheels else []
        where += [f"index {self.index}"] if self.index else []
        return ", ".join(where) or "PyPI (the CUDA build)"


@dataclass(frozen=True)
class LayerPlan:
    """The wheels of each layer of one task's environment."""

    framework: list[Path] = field(default_factory=list)
    """Wheel files of the framework layer (empty: the task needs no framework and builds on the base)."""
    task: list[Path] = field(default_factory=list)
    """Wheel files the task layer adds."""
    pins: list[str] = field(default_factory=list)
    """The framework pins (``torch==2.4.1``), sorted."""
    added: list[str] = field(default_factory=list)
    """Requirements the task layer installs besides the task's own (``COMPANIONS`` it lacked)."""

    def framework_tag(self, parent_id: str, template: str) -> str:
        """``lmrbench-framework:torch-2.4.1-<hash>``: the same for every task with the same framework wheels on
        the same parent."""
        names = sorted(p.name for p in self.framework)
        digest = hashlib.sha256("\0".join([parent_id, template, *names]).encode()).hexdigest()[:12]
        slug = "-".join(p.replace("==", "-") for p in self.pins)[:80] or "framework"
        return f"{FRAMEWORK_REPO}:{slug}-{digest}"


def _release(version: str) -> tuple[int, ...]:
    """The leading numbers of a version (``2.0.1+cpu`` -> (2, 0, 1))."""
    m = re.match(r"\d+(?:\.\d+)*", version.strip())
    return tuple(int(x) for x in m.group(0).split(".")) if m else ()


def _below(specifier: str, bound: tuple[int, ...]) -> bool:
    """Whether ``specifier`` (``==2.0.1``, ``<2.3``, ``~=2.1.0``, comma-separated) admits only versions below
    ``bound``."""
    for op, version in re.findall(r"(===|==|~=|<=|<)\s*([0-9][0-9.]*)", specifier):
        release = _release(version)
        if op == "~=" and len(release) >= 2:  # ~=2.1.0 is below 2.2; ~=2.1 below 3
            release = (*release[:-2], release[-2] + 1)
            op = "<"
        while release[-1:] == (0,) and len(release) > 1:  # 2.3.0 is 2.3
            release = release[:-1]
        if release and (release < bound or (op == "<" and release <= bound)):
            return True
    return False


def named_companions(lines: list[str]) -> list[str]:
    """``COMPANIONS`` of the projects ``lines`` name plainly that ``lines`` do not name (for an environment made
    without a resolution of its own, the local runner's venv: torch without numpy cannot cross a split run), and
    ``numpy<2`` for a framework pinned to a version built against NumPy 1 (``NUMPY_1_BELOW``)."""
    pins: dict[str, str] = {}
    for line in lines:
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([^;#]*)", line)
        if m:
            name = re.sub(r"[-_.]+", "-", m.group(1)).lower()
            pins[name] = pins.get(name, "") + "," + m.group(2)
    out = {c for n in pins.keys() & set(COMPANIONS) for c in COMPANIONS[n] if c not in pins}
    old = any(_below(spec, NUMPY_1_BELOW[n]) for n, spec in pins.items() if n in NUMPY_1_BELOW)
    if old and not _below(pins.get("numpy", ""), (2,)):
        out = (out - {"numpy"}) | {NUMPY_1}
    return sorted(out)


def resolved_companions(versions: dict[str, str]) -> list[str]:
    """What a task layer adds to requirements that resolved to ``versions`` (project -> version): the
    ``COMPANIONS`` they lack, and ``numpy<2`` where a framework built against NumPy 1 (``NUMPY_1_BELOW``) met no
    numpy or numpy 2."""
    out = {c for n in versions.keys() & set(COMPANIONS) for c in COMPANIONS[n] if c not in versions}
    old = any(_release(v) < NUMPY_1_BELOW[n] for n, v in versions.items() if n in NUMPY_1_BELOW)
    if old and ("numpy" not in versions or _release(versions["numpy"]) >= (2,)):
        out = (out - {"numpy"}) | {NUMPY_1}
    return sorted(out)


def plan_layers(
    lines: list[str],
    target: WheelTarget,
    *,
    options: list[str] | None = None,
    projects: frozenset[str] = FRAMEWORK_PROJECTS,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> LayerPlan:
    """Resolve ``lines`` for ``target`` and split the wheels into a framework layer (the ``projects`` they
    resolve to, pinned, with their dependencies) and a task layer."""
    progress = progress or NullProgress()
    full = resolve_wheels(lines, target, options=options, progress=progress, cancel=cancel)
    pins = sorted({f"{n}=={v}" for n, v in map(wheel_name, full) if n in projects})
    if not pins:
        return LayerPlan([], full, [])
    added = resolved_companions(dict(map(wheel_name, full)))
    if added:
        # torch converts tensors through numpy and the split run's codec sends them as arrays: a torch task
        # without numpy, or an old torch with numpy 2, fails every split run ("Failed to initialize NumPy")
        try:
            full = resolve_wheels([*lines, *added], target, options=options, progress=progress, cancel=cancel)
        except EnvironmentUnavailable as exc:
            if NUMPY_1 not in added:
                raise
            raise EnvironmentUnavailable(
                f"{', '.join(pins)} was built against NumPy 1 and cannot reach numpy 2, but the requirements do not "
                f"allow {NUMPY_1}: {exc.problem}", exc.path, cause=exc.cause, output=exc.output) from None
    framework = resolve_wheels(pins, target, options=options, progress=progress, cancel=cancel)
    shared = {p.name for p in framework}
    return LayerPlan(framework, [p for p in full if p.name not in shared], pins, added)
