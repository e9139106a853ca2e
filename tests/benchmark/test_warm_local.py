"""Warm boot processes of the local runner: a task's trusted runs are forks of one warm boot (which imported
pytest once), each on its own fresh folder; candidates never are."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers.run_cache import run_cache
from helpers.tasks import as_candidate
from helpers.vec_task import write_small_task
from lmrbench.benchmark.sandbox.running.local import LocalRunner
from lmrbench.harness.request import SandboxRequest
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.spec import Golden, Masked
from lmrbench.harness.variant import evaluate_variant
from lmrbench.schemas.testrun import TestStatus

# the run's process, its parent (the boot that started it) and that one's parent; whether pytest is preloaded
PROBE = """
import os, sys
parent = int(open(f"/proc/{os.getppid()}/stat").read().rsplit(")", 1)[1].split()[1])
run = os.path.basename(os.path.dirname(os.path.dirname(os.getcwd())))  # <run folder>/trusted/repo
print("boot", parent, "preloaded", "pytest" in sys.modules, "folder", run)
"""


@pytest.fixture
def cache(tmp_path_factory, monkeypatch) -> Path:
    root = run_cache(tmp_path_factory)
    monkeypatch.setenv("LMRBENCH_CACHE", str(root))
    return root


@pytest.fixture
def runner(cache):
    runner = Sandbox(LocalRunner())
    yield runner
    runner.close()


def _probe(runner: LocalRunner, task, trusted: bool) -> dict[str, str]:
    res = runner.run(SandboxRequest(task, task.repo_dir, ["python", "-c", PROBE], 60,
                                    variant=Golden() if trusted else None))
    assert res.exit_code == 0, res.output
    words = res.output.split()
    return dict(zip(words[::2], words[1::2], strict=False))


def test_trusted_runs_are_forks_of_one_warm_boot_each_in_a_fresh_folder(runner, small_task):
    one, two = _probe(runner, small_task, True), _probe(runner, small_task, True)
    assert one["boot"] == two["boot"] != str(os.getpid())  # the same warm boot, not this process
    assert one["preloaded"] == two["preloaded"] == "True"
    assert one["folder"] != two["folder"]
    warm = int(one["boot"])
    runner.close()
    assert not Path(f"/proc/{warm}").exists() or "Z" in Path(f"/proc/{warm}/stat").read_text().rsplit(")", 1)[1][:3]


def test_candidates_run_cold(runner, small_task):
    one, two = _probe(runner, small_task, False), _probe(runner, small_task, False)
    assert one["boot"] == two["boot"] == str(os.getpid())  # each run's boot was started by this process
    assert one["preloaded"] == "False"


def test_golden_passes_and_masked_fails_warm_as_cold(runner, tmp_path):
    task = write_small_task(tmp_path / "bench", goal="def dot(a, b):\n    raise NotImplementedError\n")
    impl = task.info.implementation(1)
    for trusted in (True, False):
        golden = evaluate_variant(runner, task, impl, Golden() if trusted else as_candidate(task, 1), timeout=60)
        masked = evaluate_variant(runner, task, impl, Masked() if trusted else as_candidate(task, 1, "masked"),
                                  timeout=60)
        assert golden.status is TestStatus.PASSED, golden.detail + golden.log_tail
        assert masked.status is TestStatus.FAILED and "NotImplementedError" in str(masked.cases)
