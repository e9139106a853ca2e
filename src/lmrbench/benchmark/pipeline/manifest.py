"""run.json as the stages keep it: made once with what shapes the run, checked by every later stage, refused
when the settings differ (unless ``--force``, which moves the old run aside and starts a new one), stamped with
its start and end, lmrbench's version and revision, and the task set's digest."""

from __future__ import annotations

import functools
import hashlib
import subprocess
from pathlib import Path

from lmrbench.benchmark.pipeline.context import CONTEXT_KEY
from lmrbench.benchmark.pipeline.exports import utc_now
from lmrbench.benchmark.pipeline.rundir import RunDir, task_entry
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError
from lmrbench.schemas.run import RunManifest, TaskEntry


@functools.cache
def git_revision() -> str:
    """The git revision of the checkout lmrbench runs from ('' when it is not one, e.g. an installed wheel)."""
    here = Path(__file__).resolve().parent
    try:
        done = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def taskset_digest(entries: list[TaskEntry]) -> str:
    """sha256 over the tasks' names and digests, in name order."""
    h = hashlib.sha256()
    for entry in sorted(entries, key=lambda e: e.name):
        h.update(f"{entry.name}\0{entry.digest}\n".encode())
    return h.hexdigest()


def _shape(manifest: RunManifest) -> tuple[object, ...]:
    """What must be the same for a stage to add to a run: how candidates are made, and with what settings."""
    return (
        manifest.source,
        manifest.generation and manifest.generation.model_dump(exclude={"base_url"}),
        manifest.prompt_version,
        {CONTEXT_KEY: "full", **manifest.settings},  # runs made before the setting existed were full
    )


def _differences(old: RunManifest, new: RunManifest) -> str:
    """The first setting that differs between two manifests, as ``name: old -> new``."""
    names = ("source", "model", "prompt version", "settings")
    for name, x, y in zip(names, _shape(old), _shape(new), strict=True):
        if x == y:
            continue
        if isinstance(x, dict) and isinstance(y, dict):
            key = next(k for k in sorted(set(x) | set(y)) if x.get(k) != y.get(k))
            return f"{key}: {x.get(key, '(none)')} -> {y.get(key, '(none)')}"
        return f"{name}: {x or '(none)'} -> {y or '(none)'}"
    return "none"


def _move_aside(run: RunDir) -> Path:
    """Rename the run folder to ``<name>.replaced-<UTC time>`` (nothing of it is lost); returns the new path."""
    stamp = utc_now().replace(":", "").replace("+0000", "Z")
    dest = run.path.with_name(f"{run.path.name}.replaced-{stamp}")
    n = 1
    while dest.exists():
        n += 1
        dest = run.path.with_name(f"{run.path.name}.replaced-{stamp}-{n}")
    run.path.rename(dest)
    return dest


def start_manifest(run: RunDir, tasks: list[Task], manifest: RunManifest, *, force: bool = False) -> RunManifest:
    """Create run.json, or check that an existing run was made the same way (LmrError naming the setting that
    differs; with ``force`` the old run is moved aside and a new one starts); record the tasks' digests."""
    old = run.manifest()
    if old is not None and _shape(old) != _shape(manifest):
        if not force:
            raise LmrError(f"this run was made by {old.label or old.source} with other settings "
                           f"({_differences(old, manifest)}); use another --out, or --force to start a new run "
                           "here (the old one is moved aside)", run.path / "run.json")
        _move_aside(run)
        old = None
    manifest = old if old is not None else manifest.model_copy(update={"started_at": utc_now()})
    entries = {e.name: e for e in manifest.tasks}
    for task in tasks:
        entry = task_entry(task)
        prior = entries.get(task.name)
        entries[task.name] = entry if prior is None or prior.digest != entry.digest else prior
    ordered = sorted(entries.values(), key=lambda e: _num(e.name))
    manifest = manifest.model_copy(update={"tasks": ordered, "taskset_digest": taskset_digest(ordered),
                                           "git_revision": git_revision()})
    run.save_manifest(manifest)
    return manifest


def finish_manifest(run: RunDir) -> None:
    """Stamp run.json with the end of the stage that just finished."""
    manifest = run.require_manifest()
    run.save_manifest(manifest.model_copy(update={"ended_at": utc_now(), "git_revision": git_revision()}))


def _num(name: str) -> tuple[int, str]:
    head = name.split("-", 1)[0]
    return (int(head), name) if head.isdigit() else (1 << 30, name)
