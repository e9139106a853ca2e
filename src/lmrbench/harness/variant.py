"""Run one implementation's tests on one variant and decide: split by default, shared where it must be.

A split run (the default) gives the candidate a process of its own: the trusted tree is the task's pristine
masked repository with its tests and recorded data, where the tests run with the goal functions replaced by
proxies (``runtime/lmrbench_proxy.py``); the candidate's tree holds the variant's goal functions and no test or
data, and its worker (``runtime/lmrbench_worker.py``) serves the calls. A shared run (``"isolation": "shared"``
in info.json, or a goal function kept inside a test file) runs the tests in the candidate's tree, in one
process with it: weaker evidence, and every report says so.
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

from lmrbench.core.taskset import Task
from lmrbench.harness.evidence import Evidence
from lmrbench.harness.legacy import run_legacy
from lmrbench.harness.pytest_run import run_pytest
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.spec import Rejected, RunOptions, TaggedVariant, plan_variant
from lmrbench.schemas.task_info import Implementation
from lmrbench.schemas.testrun import TestReport, TestStatus


def rejected_report(problem: str, runner: str, expected: list[str]) -> TestReport:
    """The report of a variant that could not even be built (a candidate that does not splice): a failure."""
    return TestReport(
        status=TestStatus.ERROR,
        cases=[],
        expected_ids=expected,
        missing_ids=expected,
        exit_code=None,
        duration=0.0,
        log_tail="",
        sandbox=runner,  # type: ignore[arg-type]
        evidence="pytest",
        isolation="split",
        detail=f"variant rejected: {problem}",
    )


def evaluate_variant(
    sandbox: Sandbox,
    task: Task,
    impl: Implementation,
    variant: TaggedVariant,
    *,
    timeout: float,
    expected_ids: list[str] | None = None,
    env: dict[str, str] | None = None,
    cancel: threading.Event | None = None,
    evidence: Evidence | None = None,
) -> TestReport:
    """Run ``impl``'s unit tests on ``variant`` in ``sandbox`` and return the report (``cancel`` ends a run
    under way and raises ``Cancelled``; ``evidence``: where each command's spec, reports and whole output are
    recorded, see ``harness.evidence``). The variant's type says how far it is trusted (``spec``).

    Every test the test files declare must be in the report and pass, and so must ``expected_ids`` (e.g. the
    golden run's case ids). Official script-style tests run in legacy mode (evidence "legacy"). A candidate
    that cannot be built is an ERROR report (a wrong answer), not an exception.
    """
    with tempfile.TemporaryDirectory(prefix="lmrbench-tree-") as scratch:
        plan = plan_variant(task, impl, variant, RunOptions(timeout, expected_ids, dict(env or {})), Path(scratch))
        if isinstance(plan, Rejected):
            return rejected_report(plan.reason, sandbox.name, plan.expected)
        if evidence is not None:
            evidence.isolation, evidence.shared_why = plan.isolation, plan.why if plan.isolation == "shared" else ""
        reports = [run_pytest(sandbox, r, cancel, evidence) if r.kind == "pytest" else
                   run_legacy(sandbox, r, cancel, evidence) for r in plan.requests]
    return combine_reports(reports, plan.isolation, plan.why)


def combine_reports(reports: list[TestReport], mode: str, why: str) -> TestReport:
    """The report of a variant from its commands' reports (pytest, then legacy) and how it ran (``mode``, and
    ``why`` for a shared run)."""
    report = reports[0] if len(reports) == 1 else merge_reports(reports)
    if len(reports) > 1:
        report = report.model_copy(update={"read_files": sorted({f for r in reports for f in r.read_files})})
    if mode == "shared":
        note = f"tests shared the candidate's process ({why}): weaker evidence"
        report = report.model_copy(update={"detail": "; ".join(d for d in (report.detail, note) if d)})
    return report.model_copy(update={"isolation": mode})


_WORST = [TestStatus.PASSED, TestStatus.FAILED, TestStatus.ERROR, TestStatus.TIMEOUT, TestStatus.INFRA_ERROR]


def merge_reports(reports: list[TestReport]) -> TestReport:
    """One report from several runs of the same variant (the worst status wins; legacy evidence is weaker)."""
    status = max((r.status for r in reports), key=_WORST.index)
    return TestReport(
        status=status,
        cases=[c for r in reports for c in r.cases],
        expected_ids=[i for r in reports for i in r.expected_ids],
        missing_ids=[i for r in reports for i in r.missing_ids],
        exit_code=next((r.exit_code for r in reports if r.exit_code), reports[-1].exit_code),
        duration=sum(r.duration for r in reports),
        log_tail="\n".join(r.log_tail for r in reports)[-4000:],
        log="\n".join(r.log for r in reports),
        sandbox=reports[0].sandbox,
        evidence="legacy" if any(r.evidence == "legacy" for r in reports) else "pytest",
        isolation="shared" if any(r.isolation == "shared" for r in reports) else "split",
        detail="; ".join(r.detail for r in reports if r.detail),
    )
