"""Fixtures of the app's tests: a task set holding one task made by the real task creation."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from helpers.tasks import create_task
from lmrbench.core.taskset import Task

UNIT_TEST = '''import numpy as np
from losses import preference_loss


def test_preference_loss():
    out = preference_loss(np.array([1.0]), np.array([0.0]), beta=1.0)
    assert np.allclose(out, np.log1p(np.exp(-1.0)))
'''


def make_task(repo: Path, bench: Path, *, with_test: bool = True) -> Task:
    """A task for ``preference_loss`` of the shared fixture repository, with its unit test when asked."""
    # force: several tasks of one function on purpose, the set has rows to sort
    task = create_task(repo, bench, ["losses.py::preference_loss"], instruction="Implement the DPO loss.",
                       paper_name="Toy DPO", year=2023, force=True)
    if with_test:
        (task.repo_dir / "unit_test" / "unit_test_1.py").write_text(UNIT_TEST)
    return task


@pytest.fixture
def new_task(fixture_repo: Path, bench: Path) -> Callable[..., Task]:
    """Make another task of the fixture repository in ``bench`` (``with_test=False``: no unit test file)."""
    return partial(make_task, fixture_repo, bench)
