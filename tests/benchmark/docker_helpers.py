"""Which run containers belong to a process: tests look only at their own, since other test processes (xdist
workers, other checkouts) share the engine and use the same task names."""

from __future__ import annotations

import os
import socket


def owned_containers(engine, pid: int | None = None, task: str | None = None) -> list:
    """Run containers (running or not) started by process ``pid`` (default: this one), of ``task`` if given."""
    from lmrbench.benchmark.sandbox.containers import OWNER_LABEL, RUN_LABEL

    owner = f"{socket.gethostname()}:{pid or os.getpid()}"
    found = engine.containers.list(
        all=True, filters={"label": f"{RUN_LABEL}={task}" if task else RUN_LABEL}, sparse=True
    )  # sparse: no inspect per container, which fails for one another process removes meanwhile
    return [c for c in found if (c.attrs.get("Labels") or {}).get(OWNER_LABEL) == owner]
