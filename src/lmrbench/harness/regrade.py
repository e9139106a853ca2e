"""Deciding a run's report again from its kept evidence (``harness.evidence``), with nothing run.

The same functions decide as when the run was made (``pytest_run.decide``, ``legacy.decide_legacy``,
``variant.combine_reports``), so a change to them shows in a re-grade of every stored run.
"""

from __future__ import annotations

from lmrbench.errors import LmrError
from lmrbench.harness.evidence import REPORT_FILES, RunEvidence
from lmrbench.harness.legacy import RESULT_FILE, decide_legacy
from lmrbench.harness.pytest_run import JUNIT_NAME, SEAL_NAME, decide, with_reads
from lmrbench.harness.variant import combine_reports
from lmrbench.runtime.lmrbench_protocol import READS_NAME
from lmrbench.schemas.evidence import UnitRecord
from lmrbench.schemas.testrun import TestReport


def decide_run(run: RunEvidence) -> TestReport:
    """One command's report, decided from its spec, how it ended and the raw reports it left."""
    spec = run.spec
    cut = [name for name in spec.truncated if name in REPORT_FILES]
    if cut:
        raise LmrError(f"{cut[0]} was kept cut to the size cap: its verdict cannot be derived again")
    res = run.run_result()
    if spec.kind == "legacy":
        return decide_legacy(res, run.files.get(RESULT_FILE), run.key, spec.test_files, sandbox=spec.sandbox,
                             timeout=spec.timeout)
    report = decide(res, run.files.get(JUNIT_NAME), run.files.get(SEAL_NAME), run.key, spec.expected_ids,
                    sandbox=spec.sandbox, held=spec.conftests)
    return with_reads(report, run.files.get(READS_NAME))


def decide_unit(record: UnitRecord, runs: list[RunEvidence]) -> TestReport:
    """A run unit's report decided again; the stored report where no command ran (an environment that could
    not be prepared, a candidate that could not be spliced: nothing to decide from)."""
    if not runs or record.isolation is None:
        return record.report
    return combine_reports([decide_run(r) for r in runs], record.isolation, record.shared_why)
