"""A result that is float64 only because a numpy float64 scalar of ``self`` promoted float32 arrays (an adaptive
KL coefficient after its first update) compares at float32: a correct ``float(self.ctl.value)`` passes the
recorded tests, a wrong answer still fails (local sandbox)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from helpers.tasks import create_task
from lmrbench.authoring.record.record import record_tests
from lmrbench.benchmark.sandbox.running.local import LocalRunner
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.spec import Candidate
from lmrbench.harness.variant import evaluate_variant
from lmrbench.runtime import lmrbench_precision as precision
from lmrbench.runtime.lmrbench_values import load_case
from lmrbench.schemas.testrun import TestStatus

HEAD = '''\
"""Rewards of a policy-gradient step."""

from dataclasses import dataclass

import numpy as np


@dataclass
class Controller:
    value: float

    def update(self, kl):
        self.value = self.value * (1.0 + np.clip(kl - 1.0, -0.2, 0.2) * 0.1)


class Penalised:
    def __init__(self, ctl):
        self.ctl = ctl

    def penalty(self, logprobs, ref_logprobs):
'''
GOLDEN = '''\
        """Minus the controller's coefficient times the per-token log-ratio."""
        return -self.ctl.value * (logprobs - ref_logprobs)
'''
DRIVER = '''\
"""Three steps of a toy policy: python train.py"""

import numpy as np

from rl.rewards import Controller, Penalised


def main():
    rng = np.random.default_rng(0)
    trainer = Penalised(Controller(0.2))
    for step in range(3):
        logprobs = rng.normal(-2.0, 0.5, size=6).astype(np.float32)
        ref = (logprobs + rng.normal(0.0, 0.3, size=6)).astype(np.float32)
        rewards = trainer.penalty(logprobs, ref)
        trainer.ctl.update(float(-rewards.sum()))
        print(step, rewards.dtype, rewards.sum())


if __name__ == "__main__":
    main()
'''


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("promo")
    source = tmp / "src"
    for rel, text in {"rl/__init__.py": "", "rl/rewards.py": HEAD + GOLDEN, "train.py": DRIVER,
                      "requirements.txt": "numpy\n"}.items():
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_text(textwrap.dedent(text))
    task = create_task(source, tmp / "bench", ("rl/rewards.py::Penalised.penalty",), name="1-Promoted")
    box = Sandbox(LocalRunner())
    record_tests(task, 1, "python train.py", sandbox=box)
    return task, box


def grade(recorded, tmp_path: Path, body: str) -> TestStatus:
    task, box = recorded
    (tmp_path / "rl").mkdir()
    (tmp_path / "rl" / "rewards.py").write_text(HEAD + body)
    return evaluate_variant(box, task, task.info.implementation(1), Candidate(folder=tmp_path), timeout=300).status


def test_the_recording_holds_float32_and_promoted_float64_results(recorded):
    task, _ = recorded
    cases = [load_case(p) for p in sorted((task.repo_dir / "unit_test/data/impl_1").glob("case_*.npz"))]
    dtypes = {c.expected.dtype.name for c in cases}
    assert dtypes == {"float32", "float64"}  # the expected dtype changes between cases of one test
    assert {getattr(c.scale, "promoted", None) for c in cases if c.expected.dtype.name == "float64"} == {"float32"}


def test_a_python_float_coefficient_passes(recorded, tmp_path):
    body = "        return -float(self.ctl.value) * (logprobs - ref_logprobs)\n"
    assert grade(recorded, tmp_path, body) is TestStatus.PASSED


@pytest.mark.parametrize("body", [
    "        return -0.2 * (logprobs - ref_logprobs)\n",  # the coefficient pinned to its first value
    "        return float(self.ctl.value) * (logprobs - ref_logprobs)\n",  # the sign lost
    "        return -float(self.ctl.value) * (logprobs - ref_logprobs).astype(np.float16)\n",  # another dtype
])
def test_wrong_answers_still_fail(recorded, tmp_path, body):
    assert grade(recorded, tmp_path, body) is TestStatus.FAILED


def test_only_a_wider_scalar_among_single_dtype_arrays_is_promotion():
    f32 = np.ones(3, dtype=np.float32)
    assert precision.scalar_promotion([f32, {"ctl": {"value": np.float64(0.2)}}]) == "float32"
    assert precision.scalar_promotion([f32, 0.2]) is None  # a Python float does not promote float32
    assert precision.scalar_promotion([f32, np.float32(0.2)]) is None
    assert precision.scalar_promotion([f32, np.ones(2), np.float64(0.2)]) is None  # float64 arrays among inputs
