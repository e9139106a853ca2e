"""The Ray executor: each unit is a Ray task that runs on a node with its own Docker engine.

The driver (the lmrbench command) ships each task folder once, as a deterministic archive in Ray's object
store; a node unpacks it once under its cache root and builds the task's image there, once per content hash,
from the same offline base image and wheelhouse a single machine uses. Results come back to the driver, which
alone writes the run folder. A unit whose worker process or node dies is retried by Ray (``RETRIES`` times);
when that is exhausted it comes back as an infrastructure error, never as a failed test.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import socket
import threading
from typing import TYPE_CHECKING, Any

from lmrbench.benchmark.execution.unit import (
    Prepared,
    RunUnit,
    TaskRef,
    UnitResult,
    execute,
    infra_report,
    pack_task,
    unpack_task,
)
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError, UsageError

if TYPE_CHECKING:
    from lmrbench.benchmark.sandbox.running.run_limits import RunLimits
    from lmrbench.core.sandbox import SandboxKind
from lmrbench.harness.sandbox import Sandbox

RETRIES = 3
"""Ray re-runs a unit whose worker process or node died this many times before it is an infrastructure error."""
INSTALL_HINT = "--executor ray needs Ray on this machine: pip install 'lmrbench[ray]'"


def import_ray() -> Any:
    """The ray module, or a one-line LmrError saying what to install."""
    try:
        import ray
    except ImportError:
        raise LmrError(INSTALL_HINT) from None
    return ray


class RayExecutor:
    """Units as Ray tasks on a cluster (one CPU each), results gathered by this process."""

    name = "ray"

    def __init__(
        self,
        tasks: dict[str, Task],
        *,
        address: str | None = None,
        jobs: int | None = None,
        sandbox: SandboxKind = "docker",
        limits: RunLimits | None = None,
    ) -> None:
        ray = import_ray()
        self._ray = ray
        self.sandbox_name = sandbox
        self._limits = limits
        self._tasks = tasks
        self._archives: dict[str, tuple[TaskRef, Any]] = {}
        self._refs: dict[Any, RunUnit] = {}
        if address and address != "auto" and not address.startswith("ray://"):
            _check_answers(address)
        try:
            self._owns_connection = not ray.is_initialized()
            if self._owns_connection:
                ray.init(address=address or "auto", logging_level=logging.ERROR, log_to_driver=False,
                         configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = address or "auto (RAY_ADDRESS or a cluster started on this machine)"
            raise LmrError(f"no Ray cluster answers at {where}: {str(exc).splitlines()[0]}") from None
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if cpus < 1:
            raise LmrError(f"the Ray cluster at {address or 'auto'} has no CPU to run units on")
        self.slots = max(1, jobs or cpus)
        self._remote = ray.remote(num_cpus=1, max_retries=RETRIES, retry_exceptions=False)(run_on_node)

    def _shipped(self, unit: RunUnit) -> tuple[TaskRef, Any]:
        """The task's archive in the object store, put once per command."""
        if unit.task.path not in self._archives:
            data = pack_task(self._tasks[unit.task.path])
            ref = TaskRef(unit.task.name, unit.task.path, hashlib.sha256(data).hexdigest()[:24])
            self._archives[unit.task.path] = (ref, self._ray.put(data))
        return self._archives[unit.task.path]

    def submit(self, unit: RunUnit) -> None:
        """Start ``unit`` as a Ray task."""
        task_ref, archive = self._shipped(unit)
        shipped = RunUnit(**{**unit.__dict__, "task": task_ref, "journal": ""})  # a folder of this machine
        ref = self._remote.remote(shipped, archive, self.sandbox_name, self._limits)
        self._refs[ref] = unit

    def wait(self, timeout: float) -> list[tuple[RunUnit, UnitResult]]:
        """The units that ended; a lost one (retries exhausted, cancelled) as an infrastructure error."""
        if not self._refs:
            return []
        ready, _ = self._ray.wait(list(self._refs), num_returns=1, timeout=timeout)
        if ready:
            ready, _ = self._ray.wait(list(self._refs), num_returns=len(self._refs), timeout=0)
        out = []
        for ref in ready:
            unit = self._refs.pop(ref)
            try:
                result = self._ray.get(ref)
            except self._ray.exceptions.RayError as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                detail = f"lost on the cluster after {RETRIES} retries: {type(exc).__name__}: {first}"[:500]
                result = UnitResult(infra_report(detail, self.sandbox_name))
            out.append((unit, result))
        return out

    def stop(self) -> None:
        """Cancel every unit in flight (their worker processes are killed; a node sweeps their containers)."""
        for ref in list(self._refs):
            with contextlib.suppress(Exception):  # already finished, or its node is gone
                self._ray.cancel(ref, force=True)
        self._refs.clear()

    def close(self) -> None:
        """Disconnect from the cluster (the cluster keeps running)."""
        if self._owns_connection and self._ray.is_initialized():
            self._ray.shutdown()


def _check_answers(address: str, timeout: float = 5.0) -> None:
    """A one-line LmrError unless something listens at ``host:port`` (Ray itself would retry for minutes)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--address {address!r}: give host:port of the cluster's head, auto, or ray://host:port")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise LmrError(f"no Ray cluster answers at {address}: {exc.strerror or exc}") from None


_node_lock = threading.Lock()
_node_sandboxes: dict[tuple[str, Any], Sandbox] = {}
_node_prepared = Prepared()


def run_on_node(unit: RunUnit, archive: bytes, kind: SandboxKind, limits: RunLimits | None) -> UnitResult:
    """What a Ray worker process runs for one unit: unpack the task (once per node), get this process's sandbox
    (the base image made or found once), prepare the task's environment (once per node) and run the tests."""
    from dataclasses import replace

    sandbox = _node_sandbox(kind, limits)
    _sweep(sandbox)
    try:
        task = unpack_task(unit.task, archive)
    except (LmrError, OSError) as exc:
        return UnitResult(infra_report(f"cannot unpack the task on {socket.gethostname()}: {exc}", kind))
    result = execute(unit, task, sandbox, _node_prepared)
    return replace(result, node=f"{socket.gethostname()}:{os.getpid()}")


def _sweep(sandbox: Sandbox) -> None:
    """Remove the containers of this node's dead worker processes (a unit killed mid-run leaves one)."""
    client = getattr(sandbox.transport, "client", None)
    if client is None:
        return
    from lmrbench.benchmark.sandbox.environments.containers import remove_stale_containers

    with contextlib.suppress(Exception):  # an engine that cannot list still runs; the next unit tries again
        remove_stale_containers(client)


def _node_sandbox(kind: SandboxKind, limits: RunLimits | None) -> Sandbox:
    """This worker process's sandbox of ``kind`` (Docker: with a base image found, pulled or bootstrapped)."""
    from lmrbench.benchmark.execution.sandboxes import get_sandbox
    from lmrbench.benchmark.sandbox.environments.base_image import ensure_base_image
    from lmrbench.progress import NullProgress

    key = (kind, limits)
    with _node_lock:
        if key not in _node_sandboxes:
            # no warm containers: a Ray worker process outlives the command, and one left idle would outlive it
            sandbox = get_sandbox(kind, limits=limits, warm=False)
            ensure_base_image(sandbox.transport, progress=NullProgress())
            _node_sandboxes[key] = sandbox
        return _node_sandboxes[key]
