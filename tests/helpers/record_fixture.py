"""A small numpy "training" repository written by the tests, made a task by lmrbench's own create_task."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from helpers.tasks import create_task
from lmrbench.core.taskset import Task
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.spec import Candidate
from lmrbench.harness.variant import evaluate_variant
from lmrbench.schemas.testrun import TestStatus

LOSSES = '''\
"""Losses and a feature scaler of a tiny linear model."""

import numpy as np


def hinge_loss(scores, labels, margin=1.0, *, reduce=True):
    """Hinge loss of scores against labels in {-1, +1}."""
    per_example = np.maximum(0.0, margin - labels * scores)
    if reduce:
        return float(per_example.mean())
    return per_example


class Scaler:
    """Standardises features with running statistics."""

    def __init__(self, dim, momentum=0.5):
        self.mean = np.zeros(dim)
        self.var = np.ones(dim)
        self.momentum = momentum

    def update(self, batch):
        """Update the running statistics and return the standardised batch."""
        m = self.momentum
        self.mean = m * self.mean + (1 - m) * batch.mean(axis=0)
        self.var = m * self.var + (1 - m) * batch.var(axis=0)
        return (batch - self.mean) / np.sqrt(self.var + 1e-6)


def dropout(x, p):
    """Inverted dropout with the global numpy generator."""
    keep = np.random.rand(*x.shape) >= p
    return x * keep / (1.0 - p)
'''

TRAIN = """\
import argparse

import numpy as np

from model.losses import Scaler, dropout, hinge_loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    np.random.seed(1)
    w = np.zeros(3)
    scaler = Scaler(3)
    for step in range(args.steps):
        x = scaler.update(rng.normal(size=(8, 3)))
        x = dropout(x, 0.25)
        y = np.where(rng.normal(size=8) > 0, 1.0, -1.0)
        loss = hinge_loss(x @ w, y, margin=1.0)
        per = hinge_loss(x @ w, y, 0.5, reduce=False)
        w += 0.1 * (x * y[:, None] * (per > 0)[:, None]).mean(axis=0)
        print(f"step {step}: loss {loss:.4f}")


if __name__ == "__main__":
    main()
"""


def write_repo(root: Path, extra: dict[str, str] | None = None) -> Path:
    """The source repository: model/losses.py, train.py, requirements.txt, and ``extra`` files."""
    files = {
        "model/__init__.py": "",
        "model/losses.py": LOSSES,
        "train.py": TRAIN,
        "requirements.txt": "numpy\n",
    }
    for rel, text in {**files, **(extra or {})}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root


def make_task(
    tmp: Path,
    *functions: str,
    extra: dict[str, str] | None = None,
    category: str = "Training Objectives & Optimization",
) -> Task:
    """A task folder (``tmp/bench/1-Tiny``) masking ``functions`` (default: hinge_loss) of the repo."""
    source = write_repo(tmp / "src-repo", extra)
    functions = functions or ("model/losses.py::hinge_loss",)
    return create_task(source, tmp / "bench", functions, category=category, name="1-Tiny")


def grade(sandbox: Sandbox, task: Task, folder: Path, goal: str, source: str) -> TestStatus:
    """How implementation 1's tests grade a candidate whose goal file ``goal`` holds ``source``."""
    (folder / goal).parent.mkdir(parents=True, exist_ok=True)
    (folder / goal).write_text(source)
    return evaluate_variant(sandbox, task, task.info.implementation(1), Candidate(folder=folder), timeout=300).status


def recorder(factory: pytest.TempPathFactory,
             tasks: dict[str, tuple[str, dict[str, str], str]]) -> Callable[[str], tuple[Task, Sandbox]]:
    """A getter of the task ``tasks`` names (name -> (function, files, goal file)), recorded from ``python run.py``
    on its first use and kept for the others."""
    made: dict[str, tuple[Task, Sandbox]] = {}

    def get(name: str) -> tuple[Task, Sandbox]:
        if name not in made:
            function, files, _ = tasks[name]
            made[name] = recorded_task(factory.mktemp(name), function, files, "python run.py")
        return made[name]

    return get


Candidates = list[tuple[str, str, str, TestStatus]]
"""(task name, what the candidate is, its goal file, the status implementation 1's tests must give it)."""


def graded_both_ways(tasks: dict[str, tuple[str, dict[str, str], str]], candidates: Candidates) -> tuple[Any, Any]:
    """(a module fixture ``recorded``: ``recorder`` of ``tasks``; a test grading each of ``candidates``) for a
    test module to bind, as ``recorded, test_<what it shows> = graded_both_ways(TASKS, CANDIDATES)``: each wrong
    answer must fail and each correct one pass."""

    @pytest.fixture(scope="module")
    def recorded(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], tuple[Task, Sandbox]]:
        return recorder(tmp_path_factory, tasks)

    # the candidates of one task run on one worker, which records it once (a module fixture is made per worker)
    params = [pytest.param(*c, id=c[1], marks=pytest.mark.xdist_group(f"recorded {tasks[c[0]][0]}"))
              for c in candidates]

    @pytest.mark.parametrize(("task", "what", "source", "status"), params)
    def test(recorded: Callable[[str], tuple[Task, Sandbox]], tmp_path: Path, task: str, what: str, source: str,
             status: TestStatus) -> None:
        made, sandbox = recorded(task)
        assert grade(sandbox, made, tmp_path / "candidate", tasks[task][2], source) is status, what

    return recorded, test


def recorded_task(tmp: Path, function: str, files: dict[str, str], command: str) -> tuple[Task, Sandbox]:
    """A task masking ``function`` of a repository holding ``files``, recorded from ``command`` in a local sandbox;
    and that sandbox, to grade candidates with."""
    from lmrbench.authoring.record.record import record_tests
    from lmrbench.benchmark.sandbox.running.local import LocalRunner

    task = make_task(tmp, function, extra=files)
    sandbox = Sandbox(LocalRunner())
    record_tests(task, 1, command, sandbox=sandbox)
    return task, sandbox
