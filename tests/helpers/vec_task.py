"""The vector task the environment tests write themselves (`from vec_task import write_small_task`)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

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
) -> Task:
    """A task ``root/name``: repo ``vecrepo`` with ``vec.py`` (as given) and ``unit_test/test_vec.py``."""
    task = root / name
    repo = task / "vecrepo"
    (repo / "unit_test").mkdir(parents=True)
    (repo / "vec.py").write_text(goal)
    (repo / "unit_test" / "test_vec.py").write_text(tests)
    (task / "golden_files").mkdir()
    (task / "golden_files" / "vec_golden.py").write_text(GOAL)
    if requirements:
        (repo / "requirements.txt").write_text(requirements)
    info = {
        "instance_id": int(name.split("-")[0]),
        "paper_name": "Vec",
        "folder_name": name,
        "repo_folder_name": "vecrepo",
        "implementations": [
            {
                "instruction": "Dot.",
                "index": 1,
                "category": "Other",
                "goal_file": "vec.py",
                "goal_function": "dot",
                "golden_file": "golden_files/vec_golden.py",
                "unit_test_file": "unit_test/test_vec.py",
            }
        ],
    }
    (task / "info.json").write_text(json.dumps(info, indent=4))
    if dockerfile:
        from lmrbench.authoring.dockerfile import write_dockerfile

        write_dockerfile(task, "vecrepo")
    return load_task(task)


def dedent(text: str) -> str:
    """Source text written inline in a test."""
    return textwrap.dedent(text).lstrip("\n")
