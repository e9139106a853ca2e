"""Unit-test evaluation of a run's candidates, one result file per candidate, resumable.

Each candidate with code runs the task's tests in a sandbox (``variant.evaluate_variant``: pristine masked
repository, only the goal functions spliced in, trusted files overlaid). A candidate without usable code
fails without running anything; an endpoint error during generation is an infrastructure error. A result is
kept when its candidate is unchanged and it is not an infrastructure error, so an interrupted or repeated
evaluation redoes only what is missing, changed, or failed for reasons that are not the candidate's.
"""

from __future__ import annotations

import threading
from pathlib import Path

from lmrbench.benchmark.pipeline.rundir import RunDir, save_model, unless_broken
from lmrbench.benchmark.pipeline.stage import StageSummary, run_jobs
from lmrbench.core.sandbox import Sandbox
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError
from lmrbench.progress import Cancelled, Progress, check_cancel
from lmrbench.schemas.run import Candidate, CandidateStatus, EvalResult, ResultStatus, Usage
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


def result_from_report(cand: Candidate, impl: Implementation, report: TestReport, env_id: str) -> EvalResult:
    """The result of one test run."""
    passed = sum(1 for c in report.cases if c.outcome == "passed")
    total = max(len(report.cases), len(report.expected_ids))
    status = _FROM_REPORT[report.status]
    return EvalResult(
        task=cand.task,
        impl=cand.impl,
        category=category_of(impl),
        status=status,
        reason="" if status is ResultStatus.PASSED else report.detail or report.status.value,
        candidate_digest=cand.digest,
        test_status=report.status.value,
        passed_tests=passed,
        total_tests=total,
        duration=report.duration,
        env_id=env_id,
        log_tail=report.log_tail[-4000:],
        isolation=report.isolation,
        weaker_evidence=report.weaker,
        failures={c.test_id: c.message[:2000] for c in report.cases if c.outcome in ("failed", "error")},
    )


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
    sandbox: Sandbox,
    *,
    jobs: int = 1,
    timeout: float = DEFAULT_TIMEOUT,
    rebuild: bool = False,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> StageSummary:
    """Evaluate every candidate of the run that has no current result; returns counts by result status."""
    from lmrbench.benchmark.testrun.variant import evaluate_variant

    run = RunDir(Path(run_path))
    run.require_manifest()
    summary = StageSummary()
    todo: list[tuple[Task, Implementation, Candidate]] = []
    for task in tasks:
        for impl in task.info.implementations:
            cand = run.candidate(task.name, impl.index)
            if cand is None:
                continue
            if is_current(unless_broken(run.result, task.name, impl.index), cand):
                summary.skipped += 1
            else:
                todo.append((task, impl, cand))

    env_ids: dict[str, str] = {}
    env_errors: dict[str, str] = {}
    for task in sorted({t.name: t for t, _, c in todo if c.status is CandidateStatus.OK}.values(), key=_key):
        check_cancel(cancel)
        try:
            env_ids[task.name] = sandbox.prepare(task, rebuild=rebuild, progress=progress, cancel=cancel)
        except Cancelled:
            raise
        except LmrError as exc:
            env_errors[task.name] = str(exc)

    def work(job: tuple[Task, Implementation, Candidate]) -> tuple[str, Usage]:
        task, impl, cand = job
        if cand.status is not CandidateStatus.OK:
            result = result_without_run(cand, impl)
        elif task.name in env_errors:
            result = result_without_run(cand, impl).model_copy(
                update={"status": ResultStatus.INFRA_ERROR, "reason": f"environment: {env_errors[task.name]}"}
            )
        else:
            folder = run.candidate_dir(task.name, impl.index)
            try:
                report = evaluate_variant(sandbox, task, impl, folder, timeout=timeout)
            except LmrError as exc:
                report = TestReport(status=TestStatus.INFRA_ERROR, runner=sandbox.name, detail=str(exc))
            result = result_from_report(cand, impl, report, env_ids.get(task.name, ""))
        save_model(run.result_path(task.name, impl.index), result)
        if result.status is ResultStatus.INFRA_ERROR:
            summary.problems.append(f"{task.name}#{impl.index}: {result.reason}")
        return result.status.value, Usage()

    try:
        return run_jobs(
            todo,
            work,
            label="evaluate",
            workers=jobs,
            summary=summary,
            progress=progress,
            cancel=cancel,
            describe=lambda j: f"{j[0].name}#{j[1].index}",
        )
    finally:
        _record_environments(run, sandbox.name, env_ids)


def _key(task: Task) -> tuple[int, str]:
    head = task.name.split("-", 1)[0]
    return (int(head), task.name) if head.isdigit() else (1 << 30, task.name)


def _record_environments(run: RunDir, sandbox: str, env_ids: dict[str, str]) -> None:
    """Note the runner and each task's environment (and image id under Docker) in run.json."""
    current = run.require_manifest()
    tasks = []
    for entry in current.tasks:
        env = env_ids.get(entry.name)
        if env:
            image = _image_id(env) if sandbox == "docker" else ""
            entry = entry.model_copy(update={"env_id": env, "image_digest": image})
        tasks.append(entry)
    run.save_manifest(current.model_copy(update={"sandbox": sandbox, "tasks": tasks}))


def _image_id(tag: str) -> str:
    """The Docker image id of a tag ('' when the engine cannot say)."""
    try:
        import docker

        client = docker.from_env(timeout=10)
        try:
            return str(client.images.get(tag).id)
        finally:
            client.close()
    except Exception:
        return ""
