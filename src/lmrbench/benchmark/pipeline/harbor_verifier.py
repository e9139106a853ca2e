"""The verifier of an exported Harbor task: lmrbench's run of one implementation, decided at export.

Everything ``lmrbench evaluate`` decides before a run starts is decided here, once (``harness.spec.plan_variant``
for a candidate): split or shared, the trusted tree (the pristine masked repository with the tests and recorded
data), the candidate's view (without them), the worker, the test files, the ids they declare, the run's key. The
payload is written without the goal files; in Harbor's verifier ``runtime/lmrbench_harbor.py`` adds the agent's goal
files to it, runs the boot (``runtime/lmrbench_boot.py``, as root: the two sides as two users) and decides from the
sealed junit report as ``harness.pytest_run.decide`` does. The key and the recorded data are in ``tests/``, which
Harbor copies into the verifier only, and which the grader makes root's alone before the run starts.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import marshal
import secrets
import tempfile
from pathlib import Path, PurePosixPath

from lmrbench.core.source.tree import goal_plan, read_untrusted_goal_file
from lmrbench.core.taskset import Task
from lmrbench.core.treeview import Tree, TreeView, read_tree_file
from lmrbench.errors import LmrError
from lmrbench.harness import payload
from lmrbench.harness.pytest_run import harness_files, pytest_argv
from lmrbench.harness.spec import Candidate, Rejected, RunOptions, plan_variant
from lmrbench.runtime import harbor_files
from lmrbench.runtime.lmrbench_protocol import END
from lmrbench.schemas.task_info import Implementation

VERIFY_ROOT = "/tmp/lmrbench-verify"
"""Where the grader unpacks the run in the verifier container (made afresh, mode 0711)."""
WORKSPACE = "/workspace"
"""Where the agent's view of the task lies in the task's image."""
IDS = {"trusted": [1000, 1000], "worker": [1001, 1001]}
"""The two users of a split run (the task image's user, and one more for the candidate's worker)."""


def goal_targets(task: Task, impl: Implementation) -> list[str]:
    """The implementation's goal files, repository-relative POSIX paths."""
    return [PurePosixPath(goal).as_posix() for goal, _ in goal_plan(task, impl)]


def workspace_path(task: Task, rel: str) -> str:
    """Where a repository file lies in the agent's container (and the verifier's)."""
    return f"{WORKSPACE}/{task.info.repo_folder_name}/{rel}"


def _without(tree: Tree, paths: list[str]) -> TreeView:
    """``tree`` less ``paths``."""
    if isinstance(tree, TreeView):
        kept = {k: v for k, v in tree.files.items() if k not in paths}
        return dataclasses.replace(tree, drop=tree.drop | frozenset(paths), files=kept)
    return TreeView(Path(tree), drop=frozenset(paths))


def _conftests(tree: Tree) -> dict[str, str]:
    """sha256 of every conftest.py of ``tree``: the only ones the tests may load."""
    view = tree if isinstance(tree, TreeView) else TreeView(Path(tree))
    names = [rel for rel, _ in view.listing() if PurePosixPath(rel).name == "conftest.py"]
    names += [rel for rel in view.files if PurePosixPath(rel).name == "conftest.py"]
    out = {}
    for rel in names:
        data = read_tree_file(tree, rel)
        if data is not None:
            out[rel] = hashlib.sha256(data).hexdigest()
    return out


def verifier_files(task: Task, impl: Implementation, *, timeout: float) -> tuple[dict[str, bytes], str]:
    """The files of the task's ``tests/`` besides test.sh (``run.json``, ``payload.bin``, the runtime's grader,
    protocol and boot), and the run's isolation (split or shared). LmrError for an implementation whose tests are
    the official scripts (their driver is not exported) or whose own code cannot be planned."""
    goals = goal_targets(task, impl)
    masked = {goal: read_untrusted_goal_file(task.repo_dir, goal) for goal in goals}
    with tempfile.TemporaryDirectory(prefix="lmrbench-harbor-") as scratch:
        plan = plan_variant(task, impl, Candidate(files=masked), RunOptions(timeout=timeout), Path(scratch))
        if isinstance(plan, Rejected):
            raise LmrError(f"implementation {impl.index}: its masked goal file cannot be planned: {plan.reason}",
                           task.path / "info.json")
        if [r for r in plan.requests if r.kind != "pytest"] or len(plan.requests) != 1:
            raise LmrError(f"implementation {impl.index}: tests run by the official scripts' driver are not "
                           "exported for Harbor (pytest tests only)", task.path / "info.json")
        request = plan.requests[0]
        command = request.command
        key = secrets.token_bytes(32)
        split = command.worker is not None
        side = "cand" if split else "trusted"
        if command.worker is not None:
            tree, worker = command.tree, dataclasses.replace(command.worker, tree=_without(command.worker.tree, goals))
        else:
            tree, worker = _without(command.tree, goals), None
        data = payload.payload(tree, harness_files(key, split=split), worker)
        conftests = _conftests(command.tree)
    if not data.endswith(END):
        raise LmrError("the payload does not end as the boot expects")  # the format changed: a bug here
    spec = payload.run_spec(VERIFY_ROOT, pytest_argv(request.test_files, split=split), worker, timeout=timeout,
                            env=command.env, ids=IDS)
    spec["below"] = True  # the boot runs beside test.sh, not as its container's first process
    plan_json = {
        "task": task.name,
        "implementation": impl.index,
        "isolation": plan.isolation,
        "timeout": timeout,
        "spec": spec,
        "spec_hex": marshal.dumps(spec, 4).hex(),
        "key": key.hex(),
        "expected_ids": request.expected_ids or [],
        "conftests": conftests,
        "goals": {f"{side}/repo/{goal}": workspace_path(task, goal) for goal in goals},
    }
    files = {**harbor_files(), "run.json": (json.dumps(plan_json, indent=1) + "\n").encode(),
             "payload.bin": data[: -len(END)]}
    return files, plan.isolation


TEST_SH = """\
#!/bin/sh
# lmrbench's verifier of {task} implementation {index} ({isolation} run): the recorded tests on the agent's goal
# file(s), in Harbor's separate verifier container, as root. Only the goal file(s) come from the agent's container
# (task.toml's artifacts); the tests, recorded data and the run's key are in this folder, made root's alone first.
# Writes /logs/verifier/reward.txt: 1 when every declared test passed, else 0 (none on an infrastructure error),
# and /logs/verifier/verdict.json with the status, the detail and each case's outcome.
set -u
here=$(cd "$(dirname "$0")" && pwd)
chmod -R go-rwx "$here"
exec python3 -I "$here/lmrbench_harbor.py" "$here" /logs/verifier
"""
