"""``regrade`` of an evaluated run: each candidate's unit-test result derived again from its kept evidence.

Nothing of the task is started. A result decided without a run (a candidate without code, one that could not be
spliced) has nothing to derive again and stands as stored. Every kept file is checked against the tags the
machine's seal key (``harness.seal_key``, outside the run folder) put on it: evidence edited, re-sealed or added
since is named, and its result is not derived again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from lmrbench.benchmark.pipeline.evaluate import verdict_fields
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.errors import LmrError
from lmrbench.harness.evidence import UNIT_FILE, read_unit, unsealed
from lmrbench.harness.regrade import decide_unit
from lmrbench.schemas.run import EvalResult, ResultStatus


@dataclass
class RunRegrade:
    """The stored and the re-derived results of a run, and what differs between them."""

    stored: list[EvalResult] = field(default_factory=list)
    regraded: list[EvalResult] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    """One line per result that now differs: ``task#impl: before -> after``."""
    without_run: int = 0
    """Results decided without a test run (they stand as stored)."""
    not_regraded: list[str] = field(default_factory=list)
    """One line per result whose evidence is missing or unreadable, and why."""
    unsealed: list[str] = field(default_factory=list)
    """One line per result whose evidence is no longer as it was sealed, naming the files."""

    @staticmethod
    def counts(results: list[EvalResult]) -> str:
        """``3 passed, 2 failed (7/12 tests passed)``: the statuses as ``run evaluate`` counts them."""
        statuses = Counter(r.status.value for r in results)
        parts = [f"{n} {s}" for s, n in sorted(statuses.items())]
        passed, total = sum(r.passed_tests for r in results), sum(r.total_tests for r in results)
        return f"{', '.join(parts) or 'no result'} ({passed}/{total} tests passed)"


def regrade_run(run_path: Path) -> RunRegrade:
    """Derive every unit-test result of the run folder ``run_path`` again and compare with the stored one."""
    run = RunDir(Path(run_path))
    run.require_manifest()
    out = RunRegrade()
    results = run.results()
    if not results:
        raise LmrError("no unit-test result is stored here: run lmrbench run evaluate first", run.path)
    for old in results:
        out.stored.append(old)
        folder = run.evidence_dir(old.task, old.impl)
        if not (folder / UNIT_FILE).exists():
            if old.test_status or old.status is ResultStatus.PASSED:  # tested (a pass always is): its evidence is gone
                out.not_regraded.append(f"{old.task}#{old.impl}: no evidence kept: evaluate it again to keep it")
            else:
                out.without_run += 1
            out.regraded.append(old)
            continue
        try:
            bad = unsealed(folder)
            if bad:
                out.unsealed.append(f"{old.task}#{old.impl}: {', '.join(bad)}")
                out.regraded.append(old)
                continue
            record, runs = read_unit(folder)
            cand = run.candidate(old.task, old.impl)
            dropped = cand.dropped_used if cand is not None else []
            new = old.model_copy(update=verdict_fields(decide_unit(record, runs), dropped))
        except LmrError as exc:
            out.not_regraded.append(f"{old.task}#{old.impl}: {exc}")
            out.regraded.append(old)
            continue
        out.regraded.append(new)
        before = (old.status.value, old.test_status, old.passed_tests, old.total_tests)
        after = (new.status.value, new.test_status, new.passed_tests, new.total_tests)
        if before != after:
            out.changed.append(f"{old.task}#{old.impl}: {_said(before)} -> {_said(after)}")
    return out


def _said(verdict: tuple[str, str, int, int]) -> str:
    """``failed (error, 0/2 tests)``: a result's status, its test report's own status, and its counts."""
    status, test_status, passed, total = verdict
    return f"{status} ({test_status or 'not run'}, {passed}/{total} tests)"
