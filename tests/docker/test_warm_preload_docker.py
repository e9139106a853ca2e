"""A warm container preloads, for a task's trusted runs, the installed modules the task's code imports
(``harness.import_closure``), dotted names included; a module whose import fails is left to the run, which gets
the real error; a candidate's run preloads nothing of it.

The task's image holds ``lmrprobe``, a package written here as a wheel: ``lmrprobe.sub.leaf`` keeps the pid of
the process that imported it (a test that sees another pid than its own inherited it from the warm boot), and
``lmrprobe.bad`` fails as it is imported."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

import pytest

from helpers.tasks import as_candidate
from helpers.vec_task import write_small_task
from lmrbench.core.taskset import load_task
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.spec import Golden
from lmrbench.harness.variant import evaluate_variant
from lmrbench.schemas.testrun import TestStatus

pytestmark = pytest.mark.docker

PACKAGE = {
    "lmrprobe/__init__.py": b"",
    "lmrprobe/bad.py": b"raise RuntimeError('bad on purpose')\n",
    "lmrprobe/sub/__init__.py": b"",
    "lmrprobe/sub/leaf.py": b"import os\n\nPID = os.getpid()\n",
}

GOAL = '''try:
    import lmrprobe.bad
except RuntimeError as exc:
    BAD = str(exc)


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))
'''

TESTS = '''import os

import lmrprobe.sub.leaf as leaf
import vec


def test_dot():
    assert vec.dot([1, 2], [3, 4]) == 11


def test_a_failing_preload_leaves_the_real_error():
    assert vec.BAD == "bad on purpose"


def test_the_probe_was_imported_by_the_warm_boot():
    assert leaf.PID != os.getpid()
'''


def probe_wheel(folder: Path) -> Path:
    """A wheel of the ``lmrprobe`` package, written by hand."""
    folder.mkdir(parents=True, exist_ok=True)
    info = "lmrprobe-1.0.dist-info"
    files = {
        **PACKAGE,
        f"{info}/METADATA": b"Metadata-Version: 2.1\nName: lmrprobe\nVersion: 1.0\n",
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: lmrbench-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = [f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
              f"{len(data)}" for name, data in files.items()]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    path = folder / "lmrprobe-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


@pytest.fixture
def runner(base_image):
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner

    runner = Sandbox(DockerRunner(base_image=base_image))
    yield runner
    runner.close()


def test_trusted_runs_preload_the_tasks_imports_and_candidates_do_not(runner, tmp_path):
    wheels = probe_wheel(tmp_path / "wheels").parent
    task = write_small_task(tmp_path / "bench", goal=GOAL, tests=TESTS)
    (task.path / "requirements.txt").write_text(f"--find-links {wheels}\nlmrprobe==1.0\n")
    task = load_task(task.path)
    impl = task.info.implementation(1)
    for _ in range(2):  # the warm container's first run and a later one
        report = evaluate_variant(runner, task, impl, Golden(), timeout=120)
        assert report.status is TestStatus.PASSED, (report.detail, report.log_tail)
    report = evaluate_variant(runner, task, impl, as_candidate(task, 1), timeout=120)
    assert report.status is TestStatus.FAILED
    assert [c.test_id.split("::")[-1] for c in report.cases if c.outcome == "failed"] == [
        "test_the_probe_was_imported_by_the_warm_boot"]
