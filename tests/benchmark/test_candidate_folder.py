"""A run's candidate folder: its digest covers exactly the files the grader reads, and a folder holding anything
else is refused in one line, so no result, verdict or label outlives the code it was made for."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers.run_task import GOAL, REPO, write_taskset
from lmrbench.benchmark.execution.sandboxes import get_sandbox
from lmrbench.benchmark.pipeline.agent import export_agent, import_agent
from lmrbench.benchmark.pipeline.evaluate import evaluate
from lmrbench.benchmark.pipeline.rundir import RunDir, candidate_repo
from lmrbench.core.taskset import load_taskset
from lmrbench.errors import LmrError


def _summing_run(tmp_path: Path) -> RunDir:
    """Task 2-Async, whose agent wrote a right ``total``, imported as a run."""
    bench = write_taskset(tmp_path / "bench")
    tasks, _ = load_taskset(bench, only=["2"])
    out = export_agent(tasks, tmp_path / "agent")
    goal = out / "2-Async" / REPO / GOAL
    goal.write_text(goal.read_text().replace("raise NotImplementedError", "return sum(xs)"))
    import_agent(tasks, out, tmp_path / "run")
    return RunDir(tmp_path / "run")


def test_a_decoy_folder_keeps_no_pass_for_a_graded_file_that_now_fails(tmp_path: Path) -> None:
    run = _summing_run(tmp_path)
    tasks, _ = load_taskset(tmp_path / "bench", only=["2"])
    sandbox = get_sandbox("local", untrusted=True)
    assert evaluate(tasks, run.path, sandbox, timeout=120).statuses == {"passed": 1}
    folder = run.candidate_dir("2-Async", 1)
    shutil.copytree(folder / REPO, folder / "a_decoy")  # sorts first; holds the passing file
    graded = folder / REPO / GOAL
    graded.write_text(graded.read_text().replace("return sum(xs)", "return 0"))
    again = evaluate(tasks, run.path, sandbox, timeout=120)
    assert again.statuses == {"failed": 1} and again.skipped == 0
    result = run.result("2-Async", 1)
    assert result is not None and result.reason == (
        f"variant rejected: {folder}: holds a_decoy/, which is not part of the candidate (a candidate folder holds "
        f"candidate.json, reply.txt and {REPO}/<goal files> only)")
    shutil.rmtree(folder / "a_decoy")  # the folder as lmrbench wrote it: the graded file decides
    last = evaluate(tasks, run.path, sandbox, timeout=120)
    assert last.statuses == {"failed": 1} and last.skipped == 0
    result = run.result("2-Async", 1)
    assert result is not None and "variant rejected" not in result.reason


@pytest.mark.parametrize("stray", ["toy_repo/conftest.py", "toy_repo/toy/utils.py", "notes.txt", "link"])
def test_anything_beside_the_goal_files_is_refused_and_changes_the_digest(tmp_path: Path, stray: str) -> None:
    run = _summing_run(tmp_path)
    folder = run.candidate_dir("2-Async", 1)
    before = run.candidate("2-Async", 1)
    assert before is not None and candidate_repo(folder, before.goal_files, REPO) == folder / REPO
    if stray == "link":
        (folder / REPO / "toy" / "extra.py").symlink_to(folder / REPO / GOAL)
    else:
        (folder / stray).write_text("raise SystemExit(0)\n")
    with pytest.raises(LmrError, match=r"holds .*, which is not part of the candidate") as err:
        candidate_repo(folder, before.goal_files, REPO)
    assert "\n" not in str(err.value)
    after = run.candidate("2-Async", 1)
    assert after is not None and after.digest != before.digest


def test_a_repository_folder_under_another_name_is_refused(tmp_path: Path) -> None:
    run = _summing_run(tmp_path)
    folder = run.candidate_dir("2-Async", 1)
    (folder / REPO).rename(folder / "other_repo")
    with pytest.raises(LmrError, match="holds other_repo/"):
        candidate_repo(folder, [GOAL], REPO)
