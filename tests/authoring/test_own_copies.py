"""State that keeps the caller's array instead of a copy fails where the reference code keeps copies: a frame stack
for an agent pushes each observation, and the environment writes every new observation into one buffer. A stack
that appends the buffer itself gives the same stacked result on the call, and after the next step every frame it
holds is the newest one (local sandbox)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.record_fixture import grade, recorded_task
from lmrbench.schemas.testrun import TestStatus

HEAD = '''\
"""Frame stacking for pixel observations."""
import numpy as np


class FrameStack:
    def __init__(self, k=3):
        self.k = k
        self.frames = []

'''
GOLDEN = '''\
    def push(self, frame):
        """Keep the last ``k`` frames (the first one repeated until there are ``k``) and return them stacked
        along a new first axis."""
        if not self.frames:
            self.frames = [frame.copy() for _ in range(self.k)]
        else:
            self.frames = self.frames[1:] + [frame.copy()]
        return np.stack(self.frames)
'''

PLAY = '''\
"""Five steps of an environment that writes each observation into one buffer: python play.py"""
import numpy as np

from agent.frames import FrameStack


def main():
    rng = np.random.default_rng(0)
    obs = np.zeros((4, 4))
    stack = FrameStack()
    for step in range(5):
        obs[:] = rng.normal(size=(4, 4))
        stacked = stack.push(obs)
        print(step, float(stacked.sum()))


if __name__ == "__main__":
    main()
'''

RIGHT = {
    "np.array of each frame": '''\
    def push(self, frame):
        kept = np.array(frame)
        self.frames = ([kept] * self.k if not self.frames else self.frames[1:] + [kept])
        return np.stack(self.frames)
''',
    "a rolled buffer of its own": '''\
    def push(self, frame):
        if not self.frames:
            self.frames = [np.empty_like(frame) for _ in range(self.k)]
            for held in self.frames:
                held[...] = frame
        else:
            oldest = self.frames.pop(0)
            oldest[...] = frame
            self.frames.append(oldest)
        return np.stack(self.frames)
''',
}

WRONG = {
    "appends the caller's buffer": '''\
    def push(self, frame):
        if not self.frames:
            self.frames = [frame for _ in range(self.k)]
        else:
            self.frames = self.frames[1:] + [frame]
        return np.stack(self.frames)
''',
    "copies only the first frame": '''\
    def push(self, frame):
        if not self.frames:
            self.frames = [frame.copy() for _ in range(self.k)]
        else:
            self.frames = self.frames[1:] + [frame]
        return np.stack(self.frames)
''',
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    files = {"agent/__init__.py": "", "agent/frames.py": HEAD + GOLDEN, "play.py": PLAY}
    return recorded_task(tmp_path_factory.mktemp("frames"), "agent/frames.py::FrameStack.push", files, "python play.py")


def _status(recorded, tmp_path: Path, body: str) -> TestStatus:
    task, sandbox = recorded
    return grade(sandbox, task, tmp_path, "agent/frames.py", HEAD + body)


def test_the_generated_test_checks_that_self_keeps_copies_of_its_own(recorded):
    task, _ = recorded
    assert "case.check_own_copies(frame_stack)" in (task.repo_dir / "unit_test" / "unit_test_1.py").read_text()


@pytest.mark.parametrize("name", sorted(WRONG))
def test_state_that_holds_the_callers_array_fails(recorded, tmp_path, name):
    assert _status(recorded, tmp_path, WRONG[name]) == TestStatus.FAILED


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_state_with_copies_of_its_own_passes(recorded, tmp_path, name):
    assert _status(recorded, tmp_path, RIGHT[name]) == TestStatus.PASSED
