"""Recording in the Docker sandbox gives tests that pass there."""

from __future__ import annotations

import subprocess

import pytest

from authoring.test_record import TRAIN, _outcomes
from helpers.record_fixture import make_task
from lmrbench.authoring.record.record import record_tests
from lmrbench.harness.sandbox import Sandbox
from lmrbench.schemas.testrun import TestStatus


def _docker_info_answers() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.mark.docker
def test_recording_in_docker_gives_tests_that_pass_there(tmp_path):
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner

    if not _docker_info_answers():
        pytest.skip("no Docker engine on this machine (`docker info` does not answer)")
    task = make_task(tmp_path)
    runner = Sandbox(DockerRunner())
    result = record_tests(task, 1, TRAIN, sandbox=runner)
    # two calls per value of `reduce`, margin varied together with it, the scan's two inputs where the clamp at 0
    # binds, and the input the search found that kills the dropped clamp
    assert len(result.cases) == 8
    assert _outcomes(runner, task, "golden")[0] == TestStatus.PASSED
    assert _outcomes(runner, task, "masked")[0] == TestStatus.FAILED
