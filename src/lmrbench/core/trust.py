"""Which files of a task are trusted (the tests and every file they read), and how an implementation's tests run.

The one trust policy of the process boundary: trees keep every trusted path out of the candidate's view,
``export-agent`` leaves them out of the bundle, and the harness decides split or shared runs from it.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Literal

from lmrbench.core.split_limits import split_obstacle
from lmrbench.core.taskset import Task
from lmrbench.defaults import UNIT_TEST_DIR, unit_test_file
from lmrbench.schemas.task_info import Implementation, as_list


def impl_test_files(task: Task, impl: Implementation) -> list[str]:
    """The implementation's unit test files that exist (repository-relative, POSIX).

    When none of the declared files exists (official files sometimes name the wrong one), the official default
    ``unit_test/unit_test_<index>.py`` is used if present.
    """
    found = [f for f in impl.unit_test_files if (task.repo_dir / f).is_file()]
    if found:
        return found
    default = unit_test_file(impl.index)
    return [default] if (task.repo_dir / default).is_file() else []


TRUSTED_KEY = "trusted_files"
"""The info.json key, in each implementation, listing more paths its tests read (repository-relative files or
folders) that stay on the trusted side. It lives in the implementations only (``validate`` marks there what the
tests read): the grader, ``export-agent`` and ``task check`` (F116) all read it through :func:`trusted_paths`."""


def trusted_files_of(impl: Implementation) -> list[str]:
    """``impl``'s ``trusted_files``, as repository-relative POSIX paths."""
    return [_norm(p) for p in as_list(impl.trusted_files)]


def _norm(path: str) -> str:
    return PurePosixPath(path.replace("\\", "/")).as_posix()


def trusted_paths(task: Task) -> list[str]:
    """Repository-relative paths copied from the task over every evaluated tree: tests and recorded data."""
    paths = [UNIT_TEST_DIR]
    for impl in task.info.implementations:
        paths.extend(impl.unit_test_files)
        paths.extend(trusted_files_of(impl))
    seen: list[str] = []
    for p in paths:
        norm = _norm(p)
        if norm not in seen and not norm.startswith(("/", "../")) and norm != "..":
            seen.append(norm)
    return seen


def is_trusted(rel: str, trusted: list[str]) -> bool:
    """True when ``rel`` (repository-relative; a folder may end in ``/``) is one of ``trusted`` or lies under
    one of them, as a tree view drops it (``TreeView.dropped``)."""
    parts = PurePosixPath(rel.rstrip("/")).parts
    keep = set(trusted)
    return any("/".join(parts[: k + 1]) in keep for k in range(len(parts)))


Isolation = Literal["split", "shared"]


def goal_files_in_tests(task: Task, impl: Implementation) -> list[str]:
    """``impl``'s goal files that are also its test files (the official 03, 06 and 20 define the goal function
    inside the test file)."""
    tests = {PurePosixPath(f).as_posix() for f in impl_test_files(task, impl)}
    return [g for g in impl.goal_files if PurePosixPath(g).as_posix() in tests]


def isolation_of(task: Task, impl: Implementation) -> tuple[Isolation, str]:
    """How ``impl``'s tests run, and why when not split."""
    inside = goal_files_in_tests(task, impl)
    if inside:
        return "shared", f"the goal function is inside the test file {inside[0]}"
    if impl.isolation == "shared":
        return "shared", 'info.json asks for "isolation": "shared"'
    obstacle = split_obstacle(task, impl)
    if obstacle:
        return "shared", obstacle
    return "split", ""
