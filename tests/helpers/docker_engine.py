"""Fixtures of the tests that need a real Docker engine (never mocked), its base image, and the containers a test
process owns.

A test marked ``docker`` needs the engine. Where ``docker info`` answers, a test that then cannot reach the
engine through the SDK fails: it never skips. Where no engine exists at all, docker tests are skipped.
Loaded for every test by ``pytest_plugins`` in ``tests/conftest.py``.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest


def _docker_info_answers() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture(scope="session")
def docker_engine() -> Iterator[Any]:
    """A connected docker client; fails (never skips) when `docker info` answers but the SDK cannot."""
    import docker

    answers = _docker_info_answers()
    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except Exception as exc:
        if answers:
            pytest.fail(f"`docker info` answers but the docker SDK cannot reach the engine: {exc}")
        pytest.skip("no Docker engine on this machine (`docker info` does not answer)")
    yield client
    client.close()


@pytest.fixture(autouse=True)
def _needs_docker(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("docker"):
        request.getfixturevalue("docker_engine")


@pytest.fixture(scope="session")
def base_image(docker_engine: Any) -> str:
    """The bootstrapped base image, made by the product's own command (reused when present)."""
    from lmrbench.benchmark.sandbox.environments.images import bootstrap_base_image

    return bootstrap_base_image().tag


def owned_containers(engine: Any, pid: int | None = None, task: str | None = None) -> list[Any]:
    """Run containers (running or not) started by process ``pid`` (default: this one), of ``task`` if given.

    Tests look only at their own, since other test processes (xdist workers, other checkouts) share the engine and
    use the same task names.
    """
    from lmrbench.benchmark.sandbox.environments.containers import OWNER_LABEL, RUN_LABEL

    owner = f"{socket.gethostname()}:{pid or os.getpid()}"
    found = engine.containers.list(
        all=True, filters={"label": f"{RUN_LABEL}={task}" if task else RUN_LABEL}, sparse=True
    )  # sparse: no inspect per container, which fails for one another process removes meanwhile
    return [c for c in found if (c.attrs.get("Labels") or {}).get(OWNER_LABEL) == owner]


def build_containers(engine: Any, pid: int | None = None) -> list[Any]:
    """Image build containers (named, not labelled) of process ``pid`` (default: this one)."""
    from lmrbench.benchmark.sandbox.environments.containers import BUILD_PREFIX

    return [c for c in engine.containers.list(all=True, filters={"name": BUILD_PREFIX}, sparse=True)
            if str(c.attrs["Names"][0]).rsplit("-", 2)[1] == str(pid or os.getpid())]
