"""Fixtures of the environment tests: a real Docker engine (never mocked), its base image, a small task.

A test marked ``docker`` needs the engine. Where ``docker info`` answers, a test that then cannot reach the
engine through the SDK fails: it never skips. Where no engine exists at all, docker tests are skipped.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from lmrbench.authoring.taskset import Task, load_task


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
    from lmrbench.benchmark.images import bootstrap_base_image

    return bootstrap_base_image().tag


GOAL = '''"""Vector helpers."""


def dot(a, b):
    """Dot product."""
    return sum(x * y for x, y in zip(a, b))
'''

TESTS = """from vec import dot


def test_dot():
    assert dot([1, 2], [3, 4]) == 11


def test_dot_empty():
    assert dot([], []) == 0
"""


def write_small_task(
    root: Path,
    *,
    goal: str = GOAL,
    tests: str = TESTS,
    requirements: str = "",
    name: str = "7-Vec",
    dockerfile: bool = True,
) -> Task:
    """A task ``root/name``: repo ``vecrepo`` with ``vec.py`` (as given) and ``unit_test/test_vec.py``."""
    task = root / name
    repo = task / "vecrepo"
    (repo / "unit_test").mkdir(parents=True)
    (repo / "vec.py").write_text(goal)
    (repo / "unit_test" / "test_vec.py").write_text(tests)
    (task / "golden_files").mkdir()
    (task / "golden_files" / "vec_golden.py").write_text(GOAL)
    if requirements:
        (repo / "requirements.txt").write_text(requirements)
    info = {
        "instance_id": int(name.split("-")[0]),
        "paper_name": "Vec",
        "folder_name": name,
        "repo_folder_name": "vecrepo",
        "implementations": [
            {
                "instruction": "Dot.",
                "index": 1,
                "category": "Other",
                "goal_file": "vec.py",
                "goal_function": "dot",
                "golden_file": "golden_files/vec_golden.py",
                "unit_test_file": "unit_test/test_vec.py",
            }
        ],
    }
    (task / "info.json").write_text(json.dumps(info, indent=4))
    if dockerfile:
        from lmrbench.authoring.dockerfile import write_dockerfile

        write_dockerfile(task, "vecrepo")
    return load_task(task)


def dedent(text: str) -> str:
    """Source text written inline in a test."""
    return textwrap.dedent(text).lstrip("\n")


@pytest.fixture
def small_task(tmp_path: Path) -> Task:
    """A fresh small task (pure Python, no requirements) written by the test."""
    return write_small_task(tmp_path / "bench")
