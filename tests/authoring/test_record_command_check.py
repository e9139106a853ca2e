"""A recording command's typo is said before the task's environment is built."""

from __future__ import annotations

from pathlib import Path

import pytest

from lmrbench.authoring.record.command_check import command_problem
from lmrbench.authoring.record.record import record_tests
from lmrbench.benchmark.sandbox.running.local import LocalRunner
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError
from lmrbench.harness.sandbox import Sandbox


class CountingRunner(LocalRunner):
    """The local runner, counting the environments it was asked to prepare."""

    prepared = 0

    def prepare(self, *args: object, **kw: object) -> object:
        CountingRunner.prepared += 1
        return super().prepare(*args, **kw)  # type: ignore[arg-type]


def test_a_mistyped_script_is_said_before_anything_is_built(small_task: Task) -> None:
    runner = CountingRunner()
    with pytest.raises(LmrError, match="trian.py is not a file of the repository"):
        record_tests(small_task, 1, "python trian.py", sandbox=Sandbox(runner))
    assert CountingRunner.prepared == 0


@pytest.mark.parametrize(("command", "bad"), [
    ("python trian.py", "trian.py"),
    ("python3 -u trian.py --steps 2", "trian.py"),
    ("./run.sh", "./run.sh"),
    ("python 'unclosed", "cannot be read"),
])
def test_what_the_repository_lacks_is_named(tmp_path: Path, command: str, bad: str) -> None:
    (tmp_path / "train.py").write_text("print(1)\n")
    problem = command_problem(command, tmp_path)
    assert problem is not None and bad in problem


@pytest.mark.parametrize("command", [
    "python train.py", "python -m pytest -q", "cd sub && python x.py", "pytest tests", "python -c 'print(1)'",
])
def test_what_may_be_right_is_left_to_the_run(tmp_path: Path, command: str) -> None:
    (tmp_path / "train.py").write_text("print(1)\n")
    assert command_problem(command, tmp_path) is None
