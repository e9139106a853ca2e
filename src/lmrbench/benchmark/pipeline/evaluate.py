"""Unit-test evaluation of a run's candidates, one result file per candidate, resumable.

Each candidate with code runs the task's tests in a sandbox (``variant.evaluate_variant``: pristine masked
repository, only the goal functions spliced in, trusted files overlaid). A candidate without usable code
fails without running anything; an endpoint error during generation is an infrastructure error. A result is
kept when its candidate is unchanged and it is not an infrastructure error, so an interrupted or repeated
evaluation redoes only what is missing, changed, or failed for reasons that are not the candidate's.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from lmrbench.benchmark.execution.choose import MakeExecutor, executor_factory
from lmrbench.benchmark.execution.schedule import run_units
from lmrbench.benchmark.execution.unit import RunUnit, TaskRef, UnitResult, goal_files_of
from lmrbench.benchmark.pipeline.manifest import finish_manifest
from lmrbench.benchmark.pipeline.rundir import RunDir, candidate_repo, save_model, unless_broken
from lmrbench.benchmark.pipeline.stage import StageSummary
from lmrbench.core.taskset import Task
from lmrbench.core.trust import impl_test_files
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_text
from lmrbench.harness.evidence import end_journal, remove_units, unit_record, write_unit
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.spec import Candidate as CandidateVariant
from lmrbench.harness.variant import rejected_report
from lmrbench.progress import NullProgress, Progress, check_cancel
from lmrbench.schemas.run import Candidate, CandidateStatus, EvalResult, ResultStatus
from lmrbench.schemas.task_info import Implementation
from lmrbench.schemas.testrun import TestReport, TestStatus

DEFAULT_TIMEOUT = 600.0

_FROM_REPORT = {
    TestStatus.PASSED: ResultStatus.PASSED,
    TestStatus.FAILED: ResultStatus.FAILED,
    TestStatus.ERROR: ResultStatus.FAILED,
    TestStatus.TIMEOUT: ResultStatus.TIMEOUT,
    TestStatus.INFRA_ERROR: ResultStatus.INFRA_ERROR,
}


def category_of(impl: Implementation) -> str | None:
    """The implementation's category as one of the paper's nine names, or None."""
    cat = impl.category_normalized
    return cat.value if cat is not None else None


def verdict_fields(report: TestReport, dropped_used: Sequence[str] = ()) -> dict[str, object]:
    """The fields of a result that its test report decides (``regrade`` derives them again); a failure's reason
    names the statements of the candidate's file that its goal functions use and the splice left out."""
    status = _FROM_REPORT[report.status]
    return {
        "status": status,
        "reason": "" if status is ResultStatus.PASSED else _with_drops(report.detail or report.status.value,
                                                                       dropped_used),
        "test_status": report.status.value,
        "passed_tests": sum(1 for c in report.cases if c.outcome == "passed"),
        "total_tests": max(len(report.cases), len(report.expected_ids)),
        "failures": {c.test_id: c.message[:2000] for c in report.cases if c.outcome in ("failed", "error")},
    }


def result_from_report(cand: Candidate, impl: Implementation, report: TestReport, env_id: str) -> EvalResult:
    """The result of one test run."""
    return EvalResult(
        task=cand.task,
        impl=cand.impl,
        category=category_of(impl),
        candidate_digest=cand.digest,
        duration=report.duration,
        **verdict_fields(report, cand.dropped_used),  # type: ignore[arg-type]
        env_id=env_id,
        log_tail=report.log_tail[-4000:],
        isolation=report.isolation,
        weaker_evidence=report.weaker,
        sandbox=report.sandbox,
    )


def _with_drops(reason: str, dropped_used: Sequence[str]) -> str:
    """A failure's reason, saying which dropped statements of the candidate's file its goal functions use."""
    if not dropped_used:
        return reason
    return f"{reason} (the splice left out what the goal functions use: {'; '.join(dropped_used)})"


def result_without_run(cand: Candidate, impl: Implementation) -> EvalResult:
    """A candidate without code: a failure, or an infrastructure error when the endpoint failed."""
    infra = cand.status is CandidateStatus.LLM_ERROR
    return EvalResult(
        task=cand.task,
        impl=cand.impl,
        category=category_of(impl),
        status=ResultStatus.INFRA_ERROR if infra else ResultStatus.FAILED,
        reason=f"{cand.status.value}: {cand.reason}",
        candidate_digest=cand.digest,
    )


def is_current(result: EvalResult | None, cand: Candidate) -> bool:
    """True when ``result`` is final for this exact candidate (re-runs retry infrastructure errors)."""
    return (
        result is not None
        and result.candidate_digest == cand.digest
        and result.status is not ResultStatus.INFRA_ERROR
    )


def evaluate(
    tasks: list[Task],
    run_path: Path,
    sandbox: Sandbox | None = None,
    *,
    jobs: int = 1,
    timeout: float = DEFAULT_TIMEOUT,
    rebuild: bool = False,
    executor: MakeExecutor | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> StageSummary:
    """Evaluate every candidate of the run that has no current result; returns counts by result status.

    Test runs go to ``executor`` (default: ``jobs`` threads with ``sandbox``); this process alone writes the
    run folder, one result file as each run comes back.
    """
    run = RunDir(Path(run_path))
    run.require_manifest()
    summary = StageSummary()
    progress = progress or NullProgress()
    todo: list[tuple[Task, Implementation, Candidate]] = []
    for task in tasks:
        for impl in task.info.implementations:
            cand = run.candidate(task.name, impl.index, graded=(task.info.repo_folder_name, impl.goal_files))
            if cand is None:
                continue
            if is_current(unless_broken(run.result, task.name, impl.index), cand):
                summary.skipped += 1
            else:
                todo.append((task, impl, cand))
    progress.start("evaluate", len(todo))
    envs: dict[str, tuple[str, str, str]] = {}
    by_key: dict[str, tuple[Task, Implementation, Candidate]] = {}
    units: list[RunUnit] = []
    sandbox_name = sandbox.name if sandbox else "docker"

    def save(cand: Candidate, result: EvalResult, log: str = "", res: UnitResult | None = None) -> None:
        path = run.result_path(cand.task, cand.impl)
        keep_evidence(run, cand, res)
        if log:
            atomic_write_text(path.with_suffix(".log"), log)
            result.log_file = path.with_suffix(".log").name
        else:
            path.with_suffix(".log").unlink(missing_ok=True)  # an earlier run's
        save_model(path, result)
        if result.status is ResultStatus.INFRA_ERROR:
            summary.problems.append(f"{cand.task}#{cand.impl}: {result.reason}")
        summary.statuses[result.status.value] += 1
        summary.weaker += result.weaker_evidence
        progress.advance(1, f"{cand.task}#{cand.impl}: {result.status.value}")

    for task, impl, cand in todo:
        if cand.status is not CandidateStatus.OK:
            save(cand, result_without_run(cand, impl))
            continue
        try:
            folder = run.candidate_dir(task.name, impl.index)
            candidate_repo(folder, impl.goal_files, task.info.repo_folder_name)
            files = goal_files_of(task, impl.index, folder)
        except LmrError as exc:  # a stray file, a link, a missing or oversized goal file: the candidate's failure
            report = rejected_report(str(exc), sandbox_name, impl_test_files(task, impl))
            save(cand, result_from_report(cand, impl, report, ""), res=UnitResult(report))
            continue
        key = f"{task.name}#{impl.index}"
        by_key[key] = (task, impl, cand)
        units.append(RunUnit(key=key, task=TaskRef(task.name, str(task.path)), impl=impl.index,
                             variant=CandidateVariant(files), purpose="candidate", timeout=timeout, rebuild=rebuild,
                             journal=str(run.started_dir(task.name, impl.index))))

    def on_done(unit: RunUnit, res: UnitResult) -> list[RunUnit]:
        task, impl, cand = by_key[unit.key]
        if res.env_id:
            envs[task.name] = (res.env_id, res.image_id, res.framework)
        save(cand, result_from_report(cand, impl, res.report, res.env_id), res.report.log, res)
        return []

    if not units:
        finish_manifest(run)
        check_cancel(cancel)
        return summary
    make = executor or executor_factory(None, sandbox=sandbox, jobs=jobs, progress=progress, cancel=cancel,
                                        untrusted=True)  # candidates: never a silent fallback to the local runner
    pool = make({str(t.path): t for t, _, _ in by_key.values()})
    try:
        run_units(pool, units, on_done, cancel=cancel)
    finally:
        pool.close()
        _record_environments(run, pool.sandbox_name, envs)
        finish_manifest(run)
    return summary


def keep_evidence(run: RunDir, cand: Candidate, res: UnitResult | None) -> None:
    """Write what a candidate's result is decided from beside it, atomically (an older result's goes when the
    candidate has no code to test)."""
    folder = run.evidence_dir(cand.task, cand.impl)
    if res is None:
        remove_units(folder)
    else:
        record, runs = unit_record("candidate", 0, f"{cand.task}#{cand.impl}", res.report, res.evidence,
                                   environment_error=res.environment_error, env_id=res.env_id)
        write_unit(folder, record, runs)
    end_journal(run.started_dir(cand.task, cand.impl))


def _record_environments(run: RunDir, sandbox: str, envs: dict[str, tuple[str, str, str]]) -> None:
    """Note the sandbox and each task's environment (and image id under Docker) in run.json."""
    current = run.require_manifest()
    tasks = []
    for entry in current.tasks:
        env = envs.get(entry.name)
        if env:
            entry = entry.model_copy(update={"env_id": env[0], "image_digest": env[1], "framework": env[2]})
        tasks.append(entry)
    run.save_manifest(current.model_copy(update={"sandbox": sandbox, "tasks": tasks}))
