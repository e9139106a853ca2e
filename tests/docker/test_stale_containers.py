"""A run killed with SIGKILL leaves its container; the next command that talks to the engine removes it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import docker
import pytest

from helpers.docker_engine import build_containers
from helpers.small_task import write_task
from helpers.vec_task import write_small_task

pytestmark = pytest.mark.docker

SLOW_TEST = '''import time
from calc import add


def test_add_slowly():
    time.sleep(60)
    assert add(2, 3) == 5
'''


def _containers_of(engine, pid: int) -> list:
    from helpers.docker_engine import owned_containers

    return owned_containers(engine, pid)


def _killed_once_it_has(argv: list[str], containers: Callable[[int], list], pause: bool = False) -> int:
    """Start ``argv``, SIGKILL it as soon as ``containers(pid)`` finds one of its containers (frozen first with
    ``pause``, so that it is still mid-work), and return its pid."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while not (found := containers(proc.pid)):
            assert proc.poll() is None and time.monotonic() < deadline, f"{argv[1]} never started a container"
            time.sleep(0.1)
        if pause:
            with contextlib.suppress(docker.errors.APIError):  # unless it has not started yet
                found[0].client.containers.get(found[0].id).pause()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.pid


def test_sigkill_leaves_a_container_that_the_next_command_sweeps(docker_engine, base_image, tmp_path: Path):
    bench = tmp_path / "bench"
    write_task(bench, tests={"unit_test/unit_test_1.py": SLOW_TEST, "unit_test/unit_test_2.py": SLOW_TEST})
    exe = str(Path(sys.executable).parent / "lmrbench")
    pid = _killed_once_it_has([exe, "validate", str(bench), "--sandbox", "docker", "--repeat", "1"],
                              lambda pid: _containers_of(docker_engine, pid))
    assert _containers_of(docker_engine, pid), "the killed run left nothing to sweep"
    quick = write_task(tmp_path / "quick")
    out = subprocess.run([exe, "validate", str(quick), "--sandbox", "docker", "--repeat", "1"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert _containers_of(docker_engine, pid) == []


def test_a_build_killed_mid_install_leaves_a_container_that_the_next_command_sweeps(docker_engine, base_image,
                                                                                    tmp_path: Path):
    bench = tmp_path / "bench"
    write_small_task(bench, requirements="numpy\n")
    exe = str(Path(sys.executable).parent / "lmrbench")
    pid = _killed_once_it_has([exe, "image", "build", str(bench), "--rebuild"],
                              lambda pid: build_containers(docker_engine, pid), pause=True)
    assert build_containers(docker_engine, pid), "the killed build left nothing to sweep"
    out = subprocess.run([exe, "image", "build", str(bench)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert build_containers(docker_engine, pid) == []
