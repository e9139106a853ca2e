"""DockerRunner: one image per task (tagged by a hash of what it is built from), a fresh container per run.

A run's container has a read-only root filesystem, no network, memory (no swap), CPU and pid limits, and no
log driver. Everything it may write is a size-bounded tmpfs: ``/work`` and ``/tmp``, so a candidate that fills
the disk fills only those. The payload (``payload.py``) is streamed on the container's stdin to the
runtime's boot script, PID 1: the only process that keeps a few capabilities (``CAPABILITIES``), which it uses
to give the trusted tree and the candidate's tree to two unprivileged users and to start the trusted command
and the candidate's worker as those users. It writes the closing frame on stdout (the children's output goes
to stderr) and exits with the trusted command's status. The container is removed in ``finally``, also on
timeout and Ctrl-C; one left by a killed lmrbench is removed by ``remove_stale_containers`` at the next start.

Trusted runs (the task's golden, masked and mutant code, never a candidate's) may be served by a warm container
of the task instead (``warm_docker``, ``harness.warm``): same image, limits and isolation, one boot that imported
pytest and the task's frameworks once and forks each run from itself; ``close`` ends them.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
import uuid
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

from lmrbench.authoring.check.dockerfile import DOCKERFILE, dockerfile_warnings, render_dockerfile
from lmrbench.benchmark.sandbox.container_run import run_in_container
from lmrbench.benchmark.sandbox.containers import OWNER_LABEL, RUN_LABEL, owner, sweep_once
from lmrbench.benchmark.sandbox.images import docker_client, image_id
from lmrbench.benchmark.sandbox.layers import (
    FRAMEWORK_PROJECTS,
    TorchSource,
)
from lmrbench.benchmark.sandbox.requirements_source import read_task_requirements
from lmrbench.benchmark.sandbox.run_limits import RunLimits, container_resources
from lmrbench.benchmark.sandbox.warm_docker import WarmContainer
from lmrbench.benchmark.sandbox.wheelhouse import WheelTarget
from lmrbench.core.sandbox import RunResult, SandboxKind, Worker
from lmrbench.core.taskset import Task
from lmrbench.core.treeview import Tree
from lmrbench.core.warm_pool import Pool
from lmrbench.errors import LmrError
from lmrbench.harness import payload
from lmrbench.harness.warm import GRACE_SECONDS, new_nonce, ran, request, warm_command, warm_preload
from lmrbench.progress import NullProgress, Progress, check_cancel, stop_on_cancel

if TYPE_CHECKING:
    import docker

WORK = "/work"
CAPABILITIES = ["SETUID", "SETGID", "CHOWN", "KILL", "DAC_READ_SEARCH"]
"""What the boot script (root, PID 1) keeps: to hand each side its files, drop to its user, read the out
folder back and kill what the worker left. Its children run as other users with no capability at all."""

_targets: dict[str, WheelTarget] = {}


class DockerRunner:
    """The Docker sandbox. Limits are per container; ``base_image`` overrides the automatic choice."""

    name: SandboxKind = "docker"

    def __init__(
        self,
        *,
        base_image: str | None = None,
        memory: str | None = None,
        cpus: float | None = None,
        gpus: str | None = None,
        hf_cache: Path | None = None,
        pids: int = 256,
        work_size: str = "1g",
        tmp_size: str = "512m",
        uid: int = 1000,
        gid: int = 1000,
        client: docker.DockerClient | None = None,
        torch: TorchSource | None = None,
        framework_projects: frozenset[str] = FRAMEWORK_PROJECTS,
        warm: bool = True,
    ) -> None:
        self.framework_projects = framework_projects
        """Projects that make the shared framework layer (torch and its kin)."""
        self.base_image = base_image
        self.torch = torch or TorchSource.from_env()
        """Where torch comes from (``--torch-wheels`` / ``--torch-index``); PyPI's CUDA build by default."""
        self.memory, self.cpus, self.pids = memory, cpus, pids
        # Resources: these options, else the task's info.json "resources", else 2 GB / 1 CPU (run_limits).
        self.limits = RunLimits(memory=memory, cpus=cpus, gpus=gpus, hf_cache=hf_cache)
        self.work_size, self.tmp_size = work_size, tmp_size
        self.uid, self.gid = uid, gid
        self._client = client
        self._lock = threading.Lock()
        self._limits_said = False
        self._prepared: dict[str, tuple[str, str, str]] = {}
        """Task folder -> (Dockerfile, requirements, image tag) of its last ``prepare``."""
        self.warm = warm
        """Trusted runs may be served by warm containers (``harness.warm``); off on a Ray node."""
        self._warm: Pool[WarmContainer] = Pool()
        weakref.finalize(self, self._warm.close)  # a runner dropped without ``close`` leaves none running

    @property
    def client(self) -> docker.DockerClient:
        """The engine client (connected on first use)."""
        with self._lock:
            if self._client is None:
                self._client = docker_client()
                sweep_once(self._client)
            return self._client

    def limits_warnings(self) -> list[str]:
        """What this engine does not enforce of the limits a run asks for (empty when all hold)."""
        info = self.client.info()
        checks = {
            "MemoryLimit": "memory limit",
            "SwapLimit": "swap limit (memory+swap)",
            "PidsLimit": "pid limit",
            "CPUCfsQuota": "CPU quota",
        }
        return [
            f"the Docker engine does not enforce the {what}"
            for key, what in checks.items()
            if info.get(key) is False
        ]

    def resolve_base(self) -> str:
        """BASE_IMAGE for builds: the one given, else one present, pulled or bootstrapped (``base_image``)."""
        if self.base_image:
            return self.base_image
        from lmrbench.benchmark.sandbox.base_image import obtain_base_image

        return obtain_base_image(self.client).tag

    def wheel_target(self, image: str) -> WheelTarget:
        """Python version and glibc of an image (asked once per image id)."""
        iid = image_id(self.client, image) or image
        if iid not in _targets:
            out = self.client.containers.run(
                image,
                [
                    "python3",
                    "-c",
                    "import platform,sys;print('%d.%d.%d' % sys.version_info[:3],"
                    "platform.libc_ver()[1] or '2.17', platform.machine())",
                ],
                remove=True,
                network_disabled=True,
                user=f"{self.uid}:{self.gid}",
            )
            py, glibc, machine = out.decode().split()
            _targets[iid] = WheelTarget(python=py, glibc=glibc, machine=machine)
        return _targets[iid]

    def prepare(
        self,
        task: Task,
        *,
        rebuild: bool = False,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
    ) -> str:
        """The task's image tag, built when no image of the same inputs exists (or ``rebuild``)."""
        progress = progress or NullProgress()
        with self._lock:
            say, self._limits_said = not self._limits_said, True
        if say:
            for warning in self.limits_warnings():
                progress.log(f"warning: {warning}: runs are not bounded by it")
        path = task.path / DOCKERFILE
        text = path.read_text(errors="replace") if path.is_file() else render_dockerfile()
        for warning in dockerfile_warnings(text, path):
            progress.log(f"warning: {warning}")
        reqs = read_task_requirements(task)  # requirements.txt, else environment.yml's pip section
        for warning in reqs.warnings:
            progress.log(f"warning: {warning}")
        req_text, lines = reqs.text, reqs.lines
        tag = self._prepare_tag(task, text, req_text, lines, rebuild, progress, cancel)
        with self._lock:
            self._prepared[str(task.path)] = (text, req_text, tag)
        return tag

    def _run_tag(self, task: Task) -> str:
        """The image a run uses: the one the last ``prepare`` of the task gave while its Dockerfile and
        requirements read the same (each ``prepare`` asks the engine about the base and the task's image
        several times), else ``prepare``'s."""
        path = task.path / DOCKERFILE
        text = path.read_text(errors="replace") if path.is_file() else render_dockerfile()
        with self._lock:
            kept = self._prepared.get(str(task.path))
        if kept is not None and kept[:2] == (text, read_task_requirements(task).text):
            return kept[2]
        return self.prepare(task)

    def _prepare_tag(self, task: Task, text: str, req_text: str, lines: list[str], rebuild: bool,
                     progress: Progress, cancel: threading.Event | None) -> str:
        """The image tag of these inputs, built when missing (or ``rebuild``): ``task_image.prepare_tag``."""
        from lmrbench.benchmark.sandbox.task_image import prepare_tag

        return prepare_tag(self, task, text, req_text, lines, rebuild, progress, cancel)

    def run(
        self,
        task: Task,
        tree: Tree,
        argv: list[str],
        *,
        timeout: float,
        env: dict[str, str] | None = None,
        out_dir: Path | None = None,
        network: bool = False,
        harness_files: dict[str, bytes] | None = None,
        worker: Worker | None = None,
        cancel: threading.Event | None = None,
        trusted: bool = False,
        preload: tuple[str, ...] = (),
    ) -> RunResult:
        """Run ``argv`` in a fresh container holding a copy of ``tree``; see the module docstring. ``cancel``
        kills the container (by name: also one still being created) and raises ``Cancelled``. ``trusted``
        (the task's own code): the run may be served by a warm container of the task (``harness.warm``)."""
        import docker
        import requests

        try:
            tag = self._run_tag(task)
            data = payload.payload(tree, harness_files or {}, worker)
            resources = container_resources(task, self.limits)  # memory, CPUs, GPUs, HF cache mount
        except LmrError as exc:
            return RunResult(None, False, "", 0.0, infra_error=str(exc))
        except OSError as exc:
            return RunResult(None, False, "", 0.0, infra_error=f"cannot read the tree: {exc}")
        t0 = time.monotonic()  # the timeout and the duration count from here, after any image build
        ids = {"trusted": [self.uid, self.gid], "worker": [self.uid + 1, self.gid + 1]}
        cache_env = resources.pop("environment", {})  # HF_HOME and offline flags with a cache mount
        env = {**(env or {}), **cache_env}
        name = f"lmrbench-run-{uuid.uuid4().hex[:12]}"
        in_use: list[WarmContainer] = []

        def kill() -> None:
            for warm in list(in_use):
                warm.kill()
            with contextlib.suppress(docker.errors.DockerException, requests.exceptions.RequestException):
                self.client.api.kill(name)

        with stop_on_cancel(cancel, kill):
            if trusted and self.warm and not network:
                served = self._run_warm(task, tag, resources, cache_env, argv, worker, env, ids, data, timeout,
                                        in_use, preload)
                if served is not None:
                    return payload.closing(*served, out_dir)
                check_cancel(cancel)  # a warm container killed by the cancel is no reason to start a cold one
            command = payload.boot_argv(WORK, argv, worker, timeout=timeout, env=env, ids=ids)
            ran_cold = self._run_container(task, tag, name, command, resources, data, timeout, t0, network)
            return payload.closing(*ran_cold, out_dir)

    def _create_args(self, task: Task, resources: dict, network: bool) -> dict:
        """What every run container (cold or warm) is created with, besides its image, command and name."""
        import docker

        return dict(
            labels={RUN_LABEL: task.name, OWNER_LABEL: owner()},
            user="0:0",
            working_dir=WORK,
            environment={"HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"},
            stdin_open=True,
            read_only=True,
            network_disabled=not network,
            network_mode=None if network else "none",
            tmpfs={
                WORK: f"size={self.work_size},mode=0711,exec",
                "/tmp": f"size={self.tmp_size},mode=1777,exec",
            },
            pids_limit=self.pids,
            cap_drop=["ALL"],
            cap_add=CAPABILITIES,
            security_opt=["no-new-privileges"],
            log_config=docker.types.LogConfig(type="none"),
            **resources,  # mem_limit, memswap_limit, nano_cpus; device_requests and volumes when asked
        )

    def _run_warm(self, task: Task, tag: str, resources: dict, cache_env: dict[str, str], argv: list[str],
                  worker: Worker | None, env: dict[str, str], ids: dict[str, list[int]], data: bytes,
                  timeout: float, in_use: list[WarmContainer],
                  extra: tuple[str, ...] = ()) -> tuple[RunResult, bytes] | None:
        """The run served by a warm container of the task (started when none is idle); None when none could
        serve it (the caller then runs it cold)."""
        import docker
        import requests

        preload = warm_preload(worker.frameworks if worker else (), extra=extra)
        key = (tag, repr(sorted(resources.items())), tuple(preload), tuple(sorted(cache_env.items())))
        warm = self._warm.take(key)
        if warm is None:
            nonce = new_nonce()
            create = functools.partial(self.client.containers.create, tag, **self._create_args(task, resources,
                                                                                                 False))
            try:
                warm = WarmContainer(self.client, key, nonce, create,
                                     warm_command(ids=ids, preload=preload, env=cache_env, nonce=nonce),
                                     f"lmrbench-warm-{uuid.uuid4().hex[:12]}")
            except (docker.errors.DockerException, requests.exceptions.RequestException):
                return None
        in_use.append(warm)
        t0 = time.monotonic()
        try:
            spec = payload.run_spec(f"{WORK}/r{warm.runs + 1}", argv, worker, timeout=timeout,
                                    env=env, ids=ids, preload=preload)
            served = warm.serve(request(spec, data, timeout), timeout + GRACE_SECONDS)
        finally:
            in_use.remove(warm)
            self._warm.give(warm)
        return None if served is None else ran(served, timeout, t0)

    def close(self) -> None:
        """End the warm containers this runner keeps (the end of a command)."""
        self._warm.close()

    def _run_container(self, task: Task, tag: str, name: str, command: list[str], resources: dict,
                       data: bytes, timeout: float, t0: float, network: bool) -> tuple[RunResult, bytes]:
        """A cold run in a fresh container (``container_run``): how it ended and its stdout; an image removed
        since the task's last ``prepare`` is built again."""

        def rebuilt() -> str:
            with self._lock:
                self._prepared.pop(str(task.path), None)
            return self.prepare(task)

        create = functools.partial(self.client.containers.create, command=command, name=name,
                                   **self._create_args(task, resources, network))
        return run_in_container(self.client, create, tag, rebuilt, name, data, timeout, t0,
                                resources.get("mem_limit"))
