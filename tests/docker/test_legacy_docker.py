"""The legacy-mode tests of tests/benchmark/test_legacy.py that take a sandbox, run in the Docker sandbox."""

from __future__ import annotations

import pytest

from benchmark.test_legacy import (  # noqa: F401  (the tests and fixture are collected here with this sandbox)
    legacy_task,
    test_a_script_that_writes_no_log_fails,
    test_golden_passes_and_masked_fails,
    test_hostile_legacy_candidates_never_pass,
    test_stale_logs_in_the_task_never_count,
)


@pytest.fixture(params=[pytest.param("docker", marks=pytest.mark.docker)])
def sandbox(request):
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner
    from lmrbench.harness.sandbox import Sandbox

    return Sandbox(DockerRunner(base_image=request.getfixturevalue("base_image")))
