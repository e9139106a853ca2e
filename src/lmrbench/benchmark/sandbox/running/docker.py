"""DockerRunner: one image per task (tagged by a hash of what it is built from), a fresh container per run.

A run's container has a read-only root filesystem, no network, memory (no swap), CPU and pid limits, and no
log driver. Everything it may write is a size-bounded tmpfs: ``/work`` and ``/tmp``, so a candidate that fills
the disk fills only those. The harness's payload is streamed on the container's stdin to the
runtime's boot script, PID 1: the only process that keeps a few capabilities (``CAPABILITIES``), which it uses
to give the trusted tree and the candidate's tree to two unprivileged users and to start the trusted command
and the candidate's worker as those users. It writes the closing frame on stdout (the children's output goes
to stderr) and exits with the trusted command's status. The container is removed in ``finally``, also on
timeout and Ctrl-C; one left by a killed lmrbench is removed by ``remove_stale_containers`` at the next start.

A long-lived container of the task (``warm_docker``: a warm boot of the harness as its PID 1) is created as a run's
is: same image, limits and isolation.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from lmrbench.authoring.check.dockerfile import DOCKERFILE, dockerfile_warnings, render_dockerfile
from lmrbench.benchmark.sandbox.environments.containers import OWNER_LABEL, RUN_LABEL, owner, sweep_once
from lmrbench.benchmark.sandbox.environments.images import docker_client, image_id
from lmrbench.benchmark.sandbox.environments.layers import (
    FRAMEWORK_PROJECTS,
    TorchSource,
)
from lmrbench.benchmark.sandbox.environments.requirements_source import read_task_requirements
from lmrbench.benchmark.sandbox.environments.wheelhouse import WheelTarget
from lmrbench.benchmark.sandbox.running.container_run import run_in_container
from lmrbench.benchmark.sandbox.running.run_limits import RunLimits, container_resources
from lmrbench.benchmark.sandbox.running.warm_docker import ContainerChannel
from lmrbench.core.sandbox import Environment, Output, RunResult, SandboxKind
from lmrbench.core.taskset import Task
from lmrbench.progress import NullProgress, Progress, stop_on_cancel

if TYPE_CHECKING:
    import docker

    from lmrbench.benchmark.sandbox.environments.base_image import BaseChoice

WORK = "/work"
CAPABILITIES = ["SETUID", "SETGID", "CHOWN", "KILL", "DAC_READ_SEARCH"]
"""What the boot script (root, PID 1) keeps: to hand each side its files, drop to its user, read the out
folder back and kill what the worker left. Its children run as other users with no capability at all."""

_targets: dict[str, WheelTarget] = {}


class DockerRunner:
    """The Docker transport (``core.sandbox.Transport``). Limits are per container; ``base_image`` overrides the
    automatic choice."""

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
        self._facts: dict[str, tuple[str, str]] = {}
        self._lock = threading.Lock()
        self._limits_said = False
        self._prepared: dict[str, tuple[str, str, str]] = {}
        """Task folder -> (Dockerfile, requirements, image tag) of its last ``prepare``."""

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
        return self.base_image or self.base_choice().tag

    def base_choice(self, progress: Progress | None = None) -> BaseChoice:
        """The base image this engine builds on: one present, pulled or bootstrapped, and how it was had
        (``NoBaseImage`` when none can be)."""
        from lmrbench.benchmark.sandbox.environments.base_image import obtain_base_image

        return obtain_base_image(self.client, progress=progress)

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
        from lmrbench.benchmark.sandbox.environments.task_image import prepare_tag

        return prepare_tag(self, task, text, req_text, lines, rebuild, progress, cancel)

    def environment(self, task: Task) -> Environment:
        """The task's image (built when missing), its resources (memory, CPUs, GPUs, a cache mount and the
        variables it needs) and the two users of a split run."""
        tag = self._run_tag(task)
        resources = container_resources(task, self.limits)  # memory, CPUs, GPUs, HF cache mount
        cache_env = resources.pop("environment", {})  # HF_HOME and offline flags with a cache mount
        key = (tag, repr(sorted(resources.items())), tuple(sorted(cache_env.items())))
        ids = {"trusted": [self.uid, self.gid], "worker": [self.uid + 1, self.gid + 1]}
        image_id, framework = self._image_facts(tag)
        return Environment(id=tag, key=key, ids=ids, env=cache_env, options={"resources": resources},
                           image_id=image_id, framework=framework)

    def _image_facts(self, tag: str) -> tuple[str, str]:
        """The image's id and its framework layer with the torch source (``torch==2.4.1 (PyPI (the CUDA
        build))``), once per tag; ('', '') when the engine cannot say (its hiccup must not fail a run)."""
        if tag in self._facts:
            return self._facts[tag]
        from lmrbench.benchmark.sandbox.environments.layers import FRAMEWORK_LABEL, PARENT_LABEL, TORCH_SOURCE_LABEL

        try:
            image = self.client.images.get(tag)
            labels = image.labels or {}
            pins = labels.get(FRAMEWORK_LABEL, "")
            parent = self.client.images.get(labels[PARENT_LABEL]) if pins else None
            source = (parent.labels or {}).get(TORCH_SOURCE_LABEL, "") if parent is not None else ""
            facts = (image.id or "", f"{pins} ({source})" if source else pins)
        except Exception:
            return "", ""
        self._facts[tag] = facts
        return facts

    @contextlib.contextmanager
    def root(self, environment: Environment, warm_run: int | None) -> Iterator[str]:
        """``/work`` of a fresh container; ``/work/r<n>`` for the n-th run of a warm one."""
        yield WORK if warm_run is None else f"{WORK}/r{warm_run}"

    def spawn(self, task: Task, environment: Environment, root: str, command: list[str], stdin: bytes, *,
              timeout: float, t0: float, network: bool = False,
              cancel: threading.Event | None = None) -> tuple[RunResult, bytes]:
        """A fresh container of the task's image runs ``command`` (``container_run``); ``cancel`` kills it by
        name (also one still being created) and raises ``Cancelled``; an image removed since the task's last
        ``prepare`` is built again."""
        import docker
        import requests

        name = f"lmrbench-run-{uuid.uuid4().hex[:12]}"
        resources = environment.options["resources"]

        def kill() -> None:
            with contextlib.suppress(docker.errors.DockerException, requests.exceptions.RequestException):
                self.client.api.kill(name)

        def rebuilt() -> str:
            with self._lock:
                self._prepared.pop(str(task.path), None)
            return self.prepare(task)

        create = functools.partial(self.client.containers.create, command=command, name=name,
                                   **self._create_args(task, resources, network))
        with stop_on_cancel(cancel, kill):
            return run_in_container(self.client, create, environment.id, rebuilt, name, stdin, timeout, t0,
                                    resources.get("mem_limit"))

    def open(self, task: Task, environment: Environment, command: list[str], on_output: Output,
             on_end: Callable[[], None]) -> ContainerChannel | None:
        """A long-lived container of the task's image (a warm boot as its PID 1), created as a run's is."""
        import docker
        import requests

        create = functools.partial(self.client.containers.create, environment.id,
                                   **self._create_args(task, environment.options["resources"], False))
        try:
            return ContainerChannel(self.client, create, command, f"lmrbench-warm-{uuid.uuid4().hex[:12]}",
                                    on_output, on_end)
        except (docker.errors.DockerException, requests.exceptions.RequestException):
            return None

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

    def close(self) -> None:
        """Nothing is kept between runs (the harness keeps the warm containers)."""
