"""Fixtures of the environment tests: a real Docker engine (never mocked), its base image, a small task.

A test marked ``docker`` needs the engine. Where ``docker info`` answers, a test that then cannot reach the
engine through the SDK fails: it never skips. Where no engine exists at all, docker tests are skipped.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from vec_task import write_small_task

from lmrbench.core.taskset import Task


def _docker_info_answers() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture(scope="session")
def docker_engine():
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
def _needs_docker(request):
    if request.node.get_closest_marker("docker"):
        request.getfixturevalue("docker_engine")


@pytest.fixture(scope="session")
def base_image(docker_engine) -> str:
    """The bootstrapped base image, made by the product's own command (reused when present)."""
    from lmrbench.benchmark.sandbox.images import bootstrap_base_image

    return bootstrap_base_image().tag


@pytest.fixture
def small_task(tmp_path: Path) -> Task:
    """A fresh small task (pure Python, no requirements) written by the test."""
    return write_small_task(tmp_path / "bench")
