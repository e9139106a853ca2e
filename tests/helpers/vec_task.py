"""The vector task the environment tests write themselves (`from vec_task import write_small_task`)."""

from __future__ import annotations

import textwrap
import uuid
from pathlib import Path

from helpers.tasks import Impl, write_task
from lmrbench.core.taskset import Task, load_task

GOAL = '''"""Vector helpers."""


def dot(a, b):
    """Dot product."""
    return sum(x * y for x, y in zip(a, b))
'''

TESTS = """from vec import dot


def test_dot():
    assert dot([1, 2], [3, 4]) == 11


def test_dot_empty():
    assert dot([], []) == 0
"""


def write_small_task(
    root: Path,
    *,
    goal: str = GOAL,
    tests: str = TESTS,
    requirements: str = "",
    name: str = "7-Vec",
    dockerfile: bool = True,
    repo: str = "vecrepo",
) -> Task:
    """A task ``root/name``: repo ``repo`` with ``vec.py`` (as given) and ``unit_test/test_vec.py``."""
    files = {"unit_test/test_vec.py": tests, **({"requirements.txt": requirements} if requirements else {})}
    task = write_task(
        root, name, repo=repo, goal_file="vec.py", goal=goal, golden=GOAL,
        impls=[Impl("dot", "unit_test/test_vec.py", "Dot.")], files=files, info={"paper_name": "Vec"},
        dockerfile=dockerfile,
    )
    return load_task(task)


def dedent(text: str) -> str:
    """Source text written inline in a test."""
    return textwrap.dedent(text).lstrip("\n")


def unique_requirement(line: str) -> str:
    """``line`` with an environment marker that always holds and that no other requirement line has: the same
    install, the inputs of an image of its own (an image no other test, nor an earlier run, has)."""
    return f'{line} ; sys_platform != "never-{uuid.uuid4().hex[:12]}"\n'
