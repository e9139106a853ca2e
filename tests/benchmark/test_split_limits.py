"""What a split run cannot carry is said before any run and graded shared (module or class state a goal function
changes), and a test that a body doing nothing passes (a tolerance wider than the step it measures) is named
by validate."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.run_cache import run_cache
from helpers.tasks import Impl, write_task
from lmrbench.authoring.task.mask import mask_source
from lmrbench.benchmark.sandbox.running.local import LocalRunner
from lmrbench.benchmark.validation.plan import ValidateOptions
from lmrbench.benchmark.validation.taskset import validate_taskset
from lmrbench.core.taskset import load_task
from lmrbench.core.trust import isolation_of
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.spec import Golden
from lmrbench.harness.variant import evaluate_variant
from lmrbench.schemas.testrun import TestStatus

COUNTER_PY = '''"""Counts the steps taken, module-wide."""

import numpy as np

STEPS = 0


def step(params, grads, lr):
    """Move each parameter against its gradient, in place, and count the step."""
    global STEPS
    for p, g in zip(params, grads):
        p -= lr * g
    STEPS += 1


class Registry:
    seen = []

    @classmethod
    def register(cls, name):
        cls.seen = [*cls.seen, name]
        return len(cls.seen)

    def bump(self):
        type(self).total = getattr(type(self), "total", 0) + 1


def scale_(x, k):
    x *= k
'''

TEST_COUNTER = '''import numpy as np

import counter.step as mod
from counter.step import step


def test_the_module_counts_steps():
    p = [np.ones(2)]
    step(p, [np.ones(2)], 0.5)
    step(p, [np.ones(2)], 0.5)
    assert mod.STEPS == 2
    np.testing.assert_array_equal(p[0], [0.0, 0.0])
'''

TEST_SCALE = '''import numpy as np

from counter.step import scale_


def test_scaled():
    x = np.ones(2)
    scale_(x, 3.0)
    np.testing.assert_array_equal(x, [3.0, 3.0])
'''

# An optimiser step whose first test moves a parameter by 5e-4 and checks it with atol 1e-3 (so a step that does
# nothing passes it), as the official Lion task's groups 1 and 2 do; the second test's step is ten times larger.
TEST_WEAK_TOLERANCE = '''import numpy as np

from counter.step import step


def run(lr):
    p = [np.array([0.5, -0.25])]
    for _ in range(5):
        step(p, [np.array([1.0, -1.0])], lr)
    return p[0]


def test_small_steps():
    np.testing.assert_allclose(run(1e-4), [0.4995, -0.2495], atol=1e-3)


def test_large_steps():
    np.testing.assert_allclose(run(1e-3), [0.495, -0.245], atol=1e-3)
'''

# The same as an official script (unittest, "Test Passed" / "Test Failed" in its log, as the Lion task's).
LEGACY_WEAK_TOLERANCE = '''import logging
import unittest
from pathlib import Path

import numpy as np

from counter.step import step

log_dir = Path(__file__).resolve().parent / "logs"
log_dir.mkdir(parents=True, exist_ok=True)
logging.basicConfig(filename=log_dir / "unit_test_1.log", filemode="w", level=logging.INFO)


def run(lr):
    p = [np.array([0.5, -0.25])]
    for _ in range(5):
        step(p, [np.array([1.0, -1.0])], lr)
    return p[0]


class TestSteps(unittest.TestCase):
    def check(self, lr, want):
        try:
            np.testing.assert_allclose(run(lr), want, atol=1e-3)
            logging.info(f"Test Passed: {self._testMethodName}")
        except AssertionError:
            logging.error(f"Test Failed: {self._testMethodName}")
            raise

    def test_small_steps(self):
        self.check(1e-4, [0.4995, -0.2495])

    def test_large_steps(self):
        self.check(1e-3, [0.495, -0.245])


if __name__ == "__main__":
    unittest.main()
'''


def counter_task(bench: Path, tests: dict[str, tuple[str, str]], golden: str = COUNTER_PY) -> Path:
    impls, files, quals = [], {"counter/__init__.py": "", "requirements.txt": "numpy\n"}, []
    for k, (qual, test) in enumerate(tests.values(), start=1):
        files[f"unit_test/unit_test_{k}.py"] = test
        impls.append(Impl(qual, f"unit_test/unit_test_{k}.py", extra={"goal_function": [qual]}))
        quals.append(qual)
    masked = mask_source(golden, sorted(set(quals)), file="counter/step.py")
    return write_task(bench, "1-Counter", repo="counter_repo", goal_file="counter/step.py", goal=masked,
                      golden=golden, impls=impls, files=files)


@pytest.mark.parametrize(("qual", "why"), [
    ("step", "the goal function step rebinds the module global STEPS (`global STEPS`)"),
    ("Registry.register", "the goal function Registry.register sets the class attribute cls.seen"),
    ("Registry.bump", "the goal function Registry.bump sets the class attribute type(self).total"),
])
def test_module_or_class_state_is_refused_split_before_any_run(tmp_path, qual, why):
    task = load_task(counter_task(tmp_path / "bench", {qual: (qual, TEST_SCALE)}))
    mode, reason = isolation_of(task, task.info.implementation(1))
    assert mode == "shared" and reason.startswith(why), reason
    assert reason.endswith("which a split run keeps in the candidate's process")


def test_tasks_check_says_so_before_any_run(tmp_path):
    from lmrbench.authoring.check.check import task_findings
    from lmrbench.authoring.check.findings import Selection

    task = load_task(counter_task(tmp_path / "bench", {"step": ("step", TEST_COUNTER)}))
    found = [f for f in task_findings(task, Selection(["F117"])) if f.code == "F117"]
    assert len(found) == 1 and "rebinds the module global STEPS" in found[0].message, found
    assert found[0].path == "golden_files/step_golden.py"


def test_a_function_that_changes_only_its_arguments_stays_split(tmp_path):
    task = load_task(counter_task(tmp_path / "bench", {"scale_": ("scale_", TEST_SCALE)}))
    assert isolation_of(task, task.info.implementation(1)) == ("split", "")


def test_a_module_global_graded_shared_passes_with_its_reason_in_the_report(tmp_path, tmp_path_factory,
                                                                           monkeypatch):
    monkeypatch.setenv("LMRBENCH_CACHE", str(run_cache(tmp_path_factory)))
    task = load_task(counter_task(tmp_path / "bench", {"step": ("step", TEST_COUNTER)}))
    sandbox = Sandbox(LocalRunner())
    try:
        report = evaluate_variant(sandbox, task, task.info.implementation(1), Golden(), timeout=120)
    finally:
        sandbox.close()
    assert report.status is TestStatus.PASSED, (report.detail, report.log_tail[-2000:])
    assert report.isolation == "shared" and "rebinds the module global STEPS" in report.detail, report.detail


@pytest.mark.parametrize("test", [TEST_WEAK_TOLERANCE, LEGACY_WEAK_TOLERANCE], ids=["pytest", "official-script"])
def test_validate_names_the_test_a_step_that_does_nothing_passes(tmp_path, tmp_path_factory, monkeypatch, test):
    monkeypatch.setenv("LMRBENCH_CACHE", str(run_cache(tmp_path_factory)))
    golden = COUNTER_PY.replace("    global STEPS\n", "").replace("    STEPS += 1\n", "")
    counter_task(tmp_path / "bench", {"step": ("step", test)}, golden=golden)
    summary = validate_taskset(tmp_path / "bench", sandbox="local",
                               options=ValidateOptions(repeat=1, max_mutants=2, timeout=120))
    row = summary.rows[0]
    assert row.valid and row.weak, row
    blind = [r for r in row.weak_reasons if "does nothing passes" in r]
    assert len(blind) == 1 and "test_small_steps" in blind[0] and "test_large_steps" not in blind[0], row
