"""Every score is earned: a candidate that no longer splices is a wrong answer (never an infrastructure error
that leaves the denominator), the digest covers what the grader reads, and a library caller of ``evaluate`` gets
the refusal the CLI gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.run_task import GOAL, REPO, summing_agent_run
from lmrbench.benchmark.execution.sandboxes import get_sandbox
from lmrbench.benchmark.pipeline.evaluate import evaluate
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.core.taskset import load_taskset
from lmrbench.errors import LmrError
from lmrbench.harness.spec import Candidate, Mutant
from lmrbench.harness.variant import evaluate_variant
from lmrbench.schemas.testrun import TestStatus

BROKEN = {
    "function gone": lambda text: text.replace("async def total(", "async def not_total("),
    "syntax error": lambda text: text.replace("return sum(xs)", "return sum(xs"),
}


@pytest.fixture(scope="module")
def sandbox():
    return get_sandbox("local", untrusted=True)


def summing_run(tmp_path: Path) -> RunDir:
    """Task 2-Async, whose agent wrote a right ``total``, imported as a run."""
    return RunDir(summing_agent_run(tmp_path))


@pytest.mark.parametrize("how", sorted(BROKEN))
def test_a_candidate_made_unsplicable_after_a_pass_fails_and_is_not_run_again(tmp_path, sandbox, how) -> None:
    run = summing_run(tmp_path)
    tasks, _ = load_taskset(tmp_path / "bench", only=["2"])
    assert evaluate(tasks, run.path, sandbox, timeout=120).statuses == {"passed": 1}
    spec = json.loads((run.evidence_dir("2-Async", 1) / "run-1" / "spec.json").read_text())
    assert spec["variant"] == "candidate" and spec["ended"] and spec["argv"][:3] == ["python", "-m", "pytest"]
    assert not run.started_dir("2-Async", 1).exists()  # what it started is kept as evidence now
    graded = run.candidate_dir("2-Async", 1) / REPO / GOAL
    graded.write_text(BROKEN[how](graded.read_text()))
    again = evaluate(tasks, run.path, sandbox, timeout=120)
    assert again.statuses == {"failed": 1} and not again.problems
    result = run.result("2-Async", 1)
    assert result is not None and result.reason.startswith("variant rejected")
    third = evaluate(tasks, run.path, sandbox, timeout=120)
    assert third.skipped == 1 and not third.statuses


@pytest.mark.parametrize("how", sorted(BROKEN))
def test_folder_and_file_map_candidates_that_do_not_splice_are_both_wrong_answers(tmp_path, sandbox, how) -> None:
    run = summing_run(tmp_path)
    task = load_taskset(tmp_path / "bench", only=["2"])[0][0]
    impl = task.info.implementation(1)
    folder = run.candidate_dir("2-Async", 1)
    graded = folder / REPO / GOAL
    graded.write_text(BROKEN[how](graded.read_text()))
    as_folder = evaluate_variant(sandbox, task, impl, Candidate(folder=folder), timeout=60)
    as_map = evaluate_variant(sandbox, task, impl, Candidate({GOAL: graded.read_text()}), timeout=60)
    for report in (as_folder, as_map):
        assert report.status is TestStatus.ERROR and report.detail.startswith("variant rejected")
    with pytest.raises(LmrError):  # the task's own code that does not splice is a broken task, not an answer
        evaluate_variant(sandbox, task, impl, Mutant({GOAL: graded.read_text()}), timeout=60)


def _edit_candidate_json(run: RunDir, **changes: object) -> None:
    path = run.candidate_dir("2-Async", 1) / "candidate.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, **changes}))


def _wrong_answer(run: RunDir) -> None:
    graded = run.candidate_dir("2-Async", 1) / REPO / GOAL
    graded.write_text(graded.read_text().replace("return sum(xs)", "return 0"))


ATTACKS = {
    "goal_files emptied": lambda run: _edit_candidate_json(run, goal_files=[]),
    "goal_files named elsewhere": lambda run: _edit_candidate_json(run, goal_files=["toy/other.py"]),
    "status made no_function": lambda run: _edit_candidate_json(run, status="no_function"),
    "repository folder renamed": lambda run: (run.candidate_dir("2-Async", 1) / REPO).rename(
        run.candidate_dir("2-Async", 1) / "renamed_repo"),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_pass_is_not_kept_for_a_candidate_whose_record_or_folder_was_edited(tmp_path, sandbox, attack) -> None:
    run = summing_run(tmp_path)
    tasks, _ = load_taskset(tmp_path / "bench", only=["2"])
    assert evaluate(tasks, run.path, sandbox, timeout=120).statuses == {"passed": 1}
    _wrong_answer(run)
    ATTACKS[attack](run)
    again = evaluate(tasks, run.path, sandbox, timeout=120)
    assert again.skipped == 0 and again.statuses == {"failed": 1}, again


def test_evaluate_called_as_a_library_refuses_the_silent_local_fallback(tmp_path, monkeypatch) -> None:
    run = summing_run(tmp_path)
    tasks, _ = load_taskset(tmp_path / "bench", only=["2"])
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")  # no Docker engine answers here
    with pytest.raises(LmrError, match="pass --sandbox local"):
        evaluate(tasks, run.path, timeout=120)
    assert run.result("2-Async", 1) is None
