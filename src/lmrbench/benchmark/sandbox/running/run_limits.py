"""The resources a task's container gets: memory, CPUs, GPUs and a read-only Hugging Face cache.

Order: an option given on the command line, else the task's ``resources`` in info.json, else the default
(2 GB, 1 CPU, no GPU, no cache). Only the Docker runner enforces them; the local runner says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError, UsageError

DEFAULT_MEMORY = "2g"
DEFAULT_CPUS = 1.0
HF_MOUNT = "/hf-cache"
"""Where the Hugging Face cache is mounted in a container (read-only); HF_HOME points there."""


@dataclass(frozen=True)
class RunLimits:
    """Resource options from the command line; None leaves the choice to the task (then the default)."""

    memory: str | None = None
    cpus: float | None = None
    gpus: str | None = None
    hf_cache: Path | None = None
    """A host folder holding the Hugging Face cache (default for tasks that ask: $HF_HOME, ~/.cache/huggingface)."""

    def is_set(self) -> bool:
        """True when any option was given."""
        return any(v is not None for v in (self.memory, self.cpus, self.gpus, self.hf_cache))


def device_requests(gpus: str | int | None) -> list[Any]:
    """Docker device requests for ``gpus``: "all", a count, or ids ("0,1", "device=0,1"); [] for none."""
    if gpus is None or str(gpus).strip() in ("", "0", "none"):
        return []
    import docker

    text = str(gpus).strip().removeprefix("device=")
    if text == "all":
        return [docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])]
    if isinstance(gpus, int) or text.isdigit() and "," not in str(gpus) and not str(gpus).startswith("device="):
        return [docker.types.DeviceRequest(count=int(text), capabilities=[["gpu"]])]
    ids = [p.strip() for p in text.split(",") if p.strip()]
    if not ids or not all(i.isdigit() or i.startswith("GPU-") for i in ids):
        raise UsageError(f"--gpus {gpus!r}: use all, a count, or device ids such as 0,1")
    return [docker.types.DeviceRequest(device_ids=ids, capabilities=[["gpu"]])]


def default_hf_cache() -> Path | None:
    """The host's Hugging Face cache when there is one."""
    for cand in (os.environ.get("HF_HOME"), str(Path.home() / ".cache" / "huggingface")):
        if cand and Path(cand).is_dir():
            return Path(cand)
    return None


def container_resources(task: Task, limits: RunLimits) -> dict[str, Any]:
    """Keyword arguments of ``containers.create`` for the task: memory, CPUs, device requests, the cache mount
    and the environment it needs (``environment`` to merge into the container's)."""
    declared = task.info.resources
    memory = limits.memory or (declared.memory if declared else None) or DEFAULT_MEMORY
    cpus = limits.cpus or (declared.cpus if declared else None) or DEFAULT_CPUS
    gpus = limits.gpus if limits.gpus is not None else (declared.gpus if declared else None)
    out: dict[str, Any] = {"mem_limit": memory, "memswap_limit": memory, "nano_cpus": int(float(cpus) * 1e9)}
    requests = device_requests(gpus)
    if requests:
        out["device_requests"] = requests
    cache = limits.hf_cache or (default_hf_cache() if declared and declared.hf_cache else None)
    if declared and declared.hf_cache and cache is None:
        raise LmrError("the task needs the Hugging Face cache (resources.hf_cache) but none was found; "
                       "pass --hf-cache PATH", task.path / "info.json")
    if cache is not None:
        if not Path(cache).is_dir():
            raise LmrError("--hf-cache is not a folder", cache)
        out["volumes"] = {str(Path(cache).resolve()): {"bind": HF_MOUNT, "mode": "ro"}}
        out["environment"] = {"HF_HOME": HF_MOUNT, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return out
