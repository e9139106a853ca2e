"""Checks of the goal code itself, read statically from the golden file (F117, T313, T314).

- F117: the goal function is defined inside a test file (the official 03, 06 and 20), or changes module or class
  state a split run cannot carry (``core.split_limits``), so its tests can only run in the candidate's own process
  (``core.trust.isolation_of`` says shared): weaker evidence;
- T313: the golden body draws random numbers and neither it nor any test seeds a generator, so the golden code
  itself gives another answer on every run and the recorded expectation is one draw among many;
- T314: the golden body needs a GPU (``.cuda()``, device ``"cuda"``) with no CPU path.
"""

from __future__ import annotations

import ast

from lmrbench import pyparse
from lmrbench.authoring.check.findings import Finding
from lmrbench.authoring.check.testsmells import gpu_need, seeds, unseeded_random
from lmrbench.core.split_limits import split_obstacle
from lmrbench.core.taskset import Task
from lmrbench.core.testfiles import read_unit_tests
from lmrbench.core.trust import goal_files_in_tests
from lmrbench.schemas.task_info import Implementation, as_list


def golden_defs(task: Task, impl: Implementation) -> list[tuple[str, str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(golden file relative to the task, qualname, its definition) of each goal function found in a golden
    file that parses."""
    out = []
    seen: set[str] = set()
    for k, rel in enumerate(as_list(impl.golden_file)):
        try:
            tree = pyparse.parse(task.golden_path(impl, k).read_bytes().decode("utf-8", "replace"))
        except (OSError, SyntaxError, ValueError, IndexError):
            continue
        for q in impl.qualnames:
            node = pyparse.find_def(tree, q)
            if q not in seen and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                seen.add(q)
                out.append((rel, q, node))
    return out


def _def_line(task: Task, impl: Implementation, rel: str) -> int:
    """The line of the first goal function defined in the repository file ``rel`` (0 when it cannot be read)."""
    try:
        tree = pyparse.parse((task.repo_dir / rel).read_bytes().decode("utf-8", "replace"))
    except (OSError, SyntaxError, ValueError):
        return 0
    nodes = [pyparse.find_def(tree, q) for q in impl.qualnames]
    return min((n.lineno for n in nodes if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)), default=0)


def goal_code_findings(task: Task, impl: Implementation) -> list[Finding]:
    """F117, T313 and T314 of one implementation."""
    out: list[Finding] = []
    tag = f"implementation {impl.index}"
    for test in goal_files_in_tests(task, impl):
        out.append(Finding("F117", task.name, f"{task.info.repo_folder_name}/{test}", f"{tag}: the goal function "
                           f"is defined in the test file {test}: its tests run in the candidate's own process "
                           "(weaker evidence, and the candidate sees the tests); move the function to a module of "
                           "its own", _def_line(task, impl, test)))
    obstacle = split_obstacle(task, impl)
    if obstacle:
        rel = as_list(impl.golden_file)[0]
        out.append(Finding("F117", task.name, rel, f"{tag}: {obstacle}: its tests run in the candidate's own process "
                           "(weaker evidence); keep that state in the function's arguments or instance"))
    tests_seed = None
    for rel, q, node in golden_defs(task, impl):
        line = unseeded_random(node)
        if line:
            if tests_seed is None:
                tests_seed = any(seeds(tf.tree) for tf in read_unit_tests(task, impl))
            if not tests_seed:
                out.append(Finding("T313", task.name, rel, f"{tag}: the golden {q} draws random numbers that "
                                   "nothing seeds: it gives another answer on every run, and the tests compare "
                                   "with one of them", line))
        line = gpu_need(node)
        if line:
            out.append(Finding("T314", task.name, rel, f"{tag}: the golden {q} needs a GPU (no CPU path): it "
                               "fails on a machine without one", line))
    return out
