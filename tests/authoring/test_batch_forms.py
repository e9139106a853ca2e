"""A function whose docstring also takes one item without its batch axis (``[T, B] (or [T] for one
environment)``), which the driver only ever calls batched: the recorded tests also give it one item alone, where
the golden code gives what the batch gave that item, so code written for the batched form only fails and code
written for both passes."""

from __future__ import annotations

import pytest

from helpers.record_fixture import grade, recorder
from lmrbench.schemas.testrun import TestStatus

HEAD = '''import numpy as np


def td_targets(rewards, values, bootstrap_value, gamma=0.99):
    """One-step TD targets r_t + gamma * V(x_{t+1}), time-major: ``rewards`` and ``values`` are [T, B] (or [T] for
    one environment), ``bootstrap_value`` is V(x_T), [B] (a scalar for [T])."""
'''
GOLDEN = HEAD + '''    next_values = np.concatenate([values[1:], np.asarray(bootstrap_value)[None]], axis=0)
    return rewards + gamma * next_values
'''
DRIVER = '''import numpy as np

from rl.td import td_targets

rng = np.random.default_rng(0)
for _ in range(3):
    print(td_targets(rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=3)).sum())
'''
VSTACK = GOLDEN.replace("np.concatenate([values[1:], np.asarray(bootstrap_value)[None]], axis=0)",
                        "np.vstack([values[1:], np.asarray(bootstrap_value)[None]])")
SHIFTED = HEAD + '''    next_values = np.empty_like(values)
    next_values[:-1] = values[1:]
    next_values[-1] = bootstrap_value
    return rewards + gamma * next_values
'''
TASKS = {"td": ("rl/td.py::td_targets", {"rl/__init__.py": "", "rl/td.py": GOLDEN, "run.py": DRIVER}, "rl/td.py")}
CANDIDATES = [
    ("next values stacked with np.vstack (batched form only)", VSTACK, TestStatus.FAILED),
    ("next values written into an empty array", SHIFTED, TestStatus.PASSED),
]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    return recorder(tmp_path_factory, TASKS)


@pytest.mark.parametrize(("what", "source", "status"), CANDIDATES, ids=[c[0] for c in CANDIDATES])
def test_one_item_without_its_batch_axis_tells_right_from_wrong(recorded, tmp_path, what, source, status):
    task, sandbox = recorded("td")
    assert grade(sandbox, task, tmp_path / "candidate", TASKS["td"][2], source) is status, what
