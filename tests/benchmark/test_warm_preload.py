"""What a warm boot of the local runner preloads for a task's trusted runs besides pytest: the installed modules
the task's code imports (``harness.import_closure``), dotted names included; a module that fails to import is
dropped and the run gets the real error; a candidate's run preloads nothing of it.

The task's venv holds ``lmrprobe``, a package written here into its site-packages: ``lmrprobe.sub.leaf`` keeps
the pid of the process that imported it (a run that sees another pid than its own inherited it from the boot),
``lmrprobe.bad`` prints, imports ``lmrprobe.heavy`` and fails."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from helpers.run_cache import run_cache
from helpers.tasks import as_candidate
from helpers.vec_task import write_small_task
from lmrbench.benchmark.sandbox.running.local import LocalRunner
from lmrbench.core.taskset import Task
from lmrbench.harness.request import SandboxRequest
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.spec import Golden
from lmrbench.harness.variant import evaluate_variant
from lmrbench.schemas.testrun import TestStatus

PACKAGE = {
    "lmrprobe/__init__.py": "",
    "lmrprobe/heavy.py": "X = 1\n",
    "lmrprobe/bad.py": "print('noise from a failing preload')\nimport lmrprobe.heavy\n"
                       "raise RuntimeError('bad on purpose')\n",
    "lmrprobe/sub/__init__.py": "",
    "lmrprobe/sub/leaf.py": "import os\n\nPID = os.getpid()\n",
}

PROBE = """
import os, sys
import lmrprobe
leaf = sys.modules.get("lmrprobe.sub.leaf")
print("inherited", leaf is not None and leaf.PID != os.getpid())
print("heavy", "lmrprobe.heavy" in sys.modules or hasattr(lmrprobe, "heavy"))
try:
    import lmrprobe.bad
except RuntimeError as exc:
    print("error", str(exc).replace(" ", "_"))
"""


@pytest.fixture
def runner(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("LMRBENCH_CACHE", str(run_cache(tmp_path_factory)))
    runner = Sandbox(LocalRunner())
    yield runner
    runner.close()


def _with_probe(runner: LocalRunner, task: Task) -> Task:
    """``task``, its venv holding the probe package."""
    venv = Path(runner.prepare(task))
    site = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    for rel, text in PACKAGE.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    return task


def test_a_dotted_module_is_preloaded_and_a_failing_one_left_to_the_run(runner, small_task):
    task = _with_probe(runner, small_task)
    preload = ("lmrprobe", "lmrprobe.bad", "lmrprobe.nosuch", "lmrprobe.sub.leaf")
    for _ in range(2):  # the warm boot's first run and a later one
        res = runner.run(SandboxRequest(task, task.repo_dir, ["python", "-c", PROBE], 60, preload=preload,
                                        variant=Golden()))
        assert res.exit_code == 0, res.output
        got = dict(line.split(" ", 1) for line in res.output.splitlines() if line.count(" ") == 1)
        assert got["inherited"] == "True"
        assert got["heavy"] == "False"  # what the failing module imported went with it, off its package too
        assert got["error"] == "bad_on_purpose"


GOAL = "import lmrprobe\n\n\ndef dot(a, b):\n    return sum(x * y for x, y in zip(a, b))\n"
TESTS = """import os

import lmrprobe.sub.leaf as leaf
from vec import dot


def test_dot():
    assert dot([1, 2], [3, 4]) == 11


def test_the_probe_was_imported_by_the_boot():
    assert leaf.PID != os.getpid()
"""


def test_trusted_runs_preload_the_tasks_imports_and_candidates_do_not(runner, tmp_path):
    task = _with_probe(runner, write_small_task(tmp_path / "bench", goal=GOAL, tests=TESTS))
    impl = task.info.implementation(1)
    trusted = evaluate_variant(runner, task, impl, Golden(), timeout=60)
    assert trusted.status is TestStatus.PASSED, trusted.detail + trusted.log_tail
    candidate = evaluate_variant(runner, task, impl, as_candidate(task, 1), timeout=60)
    assert candidate.status is TestStatus.FAILED
    assert [c.test_id.split("::")[-1] for c in candidate.cases if c.outcome == "failed"] == [
        "test_the_probe_was_imported_by_the_boot"]
