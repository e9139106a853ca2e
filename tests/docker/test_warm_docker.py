"""Warm containers: a task's trusted runs (golden, masked, mutants) share one container, each run still in fresh
processes on fresh copies, with nothing of a run reaching the next; candidates never share one."""

from __future__ import annotations

import pytest

from helpers.docker_engine import owned_containers
from lmrbench.benchmark.sandbox.running.docker import DockerRunner
from lmrbench.harness.request import SandboxRequest
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.spec import Golden

# the container's name (its hostname), whether the zygote's preload is here, what the last run left behind
PROBE = """
import os, socket, sys
print("host", socket.gethostname())
print("preloaded", "pytest" in sys.modules)
print("left", sorted(os.listdir("/tmp")), sorted(os.listdir("/dev/shm")))
print("others", sorted(p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid(), os.getppid())))
"""
# what a run may leave behind: files in /tmp and /dev/shm, a detached process
LITTER = """
import os, subprocess
open("/tmp/litter", "w").write("x")
open("/dev/shm/litter", "w").write("x")
subprocess.Popen(["sleep", "300"], start_new_session=True)
print("littered")
"""


@pytest.fixture
def runner(base_image):
    runner = Sandbox(DockerRunner(base_image=base_image))
    yield runner
    runner.close()


def _run(runner, task, code: str, *, trusted: bool, timeout: float = 120):
    return runner.run(SandboxRequest(task, task.repo_dir, ["python", "-c", code], timeout,
                                     variant=Golden() if trusted else None))


def _fields(output: str) -> dict[str, str]:
    return {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in output.splitlines() if " " in line}


def test_trusted_runs_share_a_container_and_nothing_of_one_reaches_the_next(runner, small_task, docker_engine):
    first = _run(runner, small_task, PROBE, trusted=True)
    litter = _run(runner, small_task, LITTER, trusted=True)
    after = _run(runner, small_task, PROBE, trusted=True)
    assert (first.exit_code, litter.exit_code, after.exit_code) == (0, 0, 0), (first, litter, after)
    assert "littered" in litter.output and "littered" not in after.output  # each run's output is its own
    one, two = _fields(first.output), _fields(after.output)
    assert one["host"] == two["host"] and one["preloaded"] == "True"
    assert two["left"] == "[] []" and two["others"] == "[]", after.output
    assert len(owned_containers(docker_engine, task=small_task.name)) == 1  # the warm one, idle
    runner.close()
    assert owned_containers(docker_engine, task=small_task.name) == []


def test_candidates_never_share_a_container(runner, small_task, docker_engine):
    hosts = {_fields(_run(runner, small_task, PROBE, trusted=False).output)["host"] for _ in range(2)}
    assert len(hosts) == 2
    assert owned_containers(docker_engine, task=small_task.name) == []


def _processes(engine, task) -> list[dict[str, str]]:
    out = []
    for c in owned_containers(engine, task=task.name):
        try:
            top = engine.api.top(c.id)
        except Exception:  # noqa: BLE001 - going away
            continue
        out += [dict(zip(top["Titles"], row, strict=False)) for row in top.get("Processes") or []]
    return out
