"""Run one implementation's tests on one variant and decide: split by default, shared where it must be.

A split run (the default) gives the candidate a process of its own: the trusted tree is the task's pristine
masked repository with its tests and recorded data, where the tests run with the goal functions replaced by
proxies (``runtime/lmrbench_proxy.py``); the candidate's tree holds the variant's goal functions and no test or
data, and its worker (``runtime/lmrbench_worker.py``) serves the calls. A shared run (``"isolation": "shared"``
in info.json, or a goal function kept inside a test file) runs the tests in the candidate's tree, in one
process with it: weaker evidence, and every report says so.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from pathlib import Path

from lmrbench.core.sandbox import Worker
from lmrbench.core.source.tree import Variant, build_tree, candidate_view, trusted_view
from lmrbench.core.taskset import Task
from lmrbench.core.treeview import Tree
from lmrbench.core.trust import impl_test_files, isolation_of
from lmrbench.errors import LmrError
from lmrbench.harness.evidence import Evidence
from lmrbench.harness.import_closure import closure_modules
from lmrbench.harness.legacy import is_legacy_test, run_legacy
from lmrbench.harness.pytest_run import WATCH_READS, run_pytest
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.split import declared_ids, framework_modules, goal_modules, goals_env, make_worker
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
    variant: Variant,
    *,
    timeout: float,
    expected_ids: list[str] | None = None,
    env: dict[str, str] | None = None,
    cancel: threading.Event | None = None,
    trusted: bool = False,
    evidence: Evidence | None = None,
) -> TestReport:
    """Run ``impl``'s unit tests on ``variant`` in ``sandbox`` and return the report (``cancel`` ends a run
    under way and raises ``Cancelled``; ``trusted``: the variant is the task's own code, see ``Sandbox.run``;
    ``evidence``: where each command's spec, reports and whole output are recorded, see ``harness.evidence``).

    Every test the test files declare must be in the report and pass, and so must ``expected_ids`` (e.g. the
    golden run's case ids). Official script-style tests run in legacy mode (evidence "legacy"). A candidate
    that cannot be spliced is an ERROR report, not an exception.
    """
    files = impl_test_files(task, impl)
    if not files:
        raise LmrError(f"implementation {impl.index} has no unit tests", task.path / "info.json")
    mode, why = isolation_of(task, impl)
    if evidence is not None:
        evidence.isolation, evidence.shared_why = mode, why if mode == "shared" else ""
    folder = task.info.repo_folder_name
    with contextlib.ExitStack() as stack:
        worker: Worker | None = None
        tree: Tree
        try:
            if mode == "split":  # both sides read the task's repository in place: nothing is copied
                worker = make_worker(candidate_view(task, [impl.index], variant), goal_modules(impl),
                                     framework_modules(task, impl), watch_reads=variant == "golden")
                tree = trusted_view(task)
            else:
                tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="lmrbench-tree-"))
                tree = build_tree(task, [impl.index], variant, Path(tmp) / "shared" / folder)
        except LmrError as exc:
            if trusted or variant in ("golden", "masked"):  # the task's own code: a broken task, not an answer
                raise
            return rejected_report(str(exc), sandbox.name, files)
        run_env = {**(env or {}), **(goals_env(task, impl) if worker else {})}
        if worker and variant == "golden":  # the files the trusted tests read are trusted (see validation)
            run_env[WATCH_READS] = "1"
        # the task's own code: a warm sandbox may import the installed modules it needs once, for every run
        preload = closure_modules(task, impl) if trusted else ()
        legacy = [f for f in files if is_legacy_test(task.repo_dir / f)]  # test files are the task's own
        modern = [f for f in files if f not in legacy]
        reports = []
        if modern:
            wanted = declared_ids(task, modern)
            wanted += [i for i in expected_ids or [] if not _is_legacy_id(i, legacy) and i not in wanted]
            reports.append(
                run_pytest(
                    sandbox, task, tree, modern, timeout=timeout, expected_ids=wanted or None, env=run_env,
                    worker=worker, cancel=cancel, trusted=trusted, evidence=evidence, preload=preload,
                )
            )
        if legacy:
            reports.append(run_legacy(sandbox, task, tree, legacy, timeout=timeout, env=run_env, worker=worker,
                                      cancel=cancel, trusted=trusted, evidence=evidence, preload=preload))
    return combine_reports(reports, mode, why)


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


def _is_legacy_id(test_id: str, legacy_files: list[str]) -> bool:
    """Legacy reports use the script's path as the test id."""
    return test_id in legacy_files


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
