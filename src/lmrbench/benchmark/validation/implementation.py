"""Validating one implementation as a sequence of test runs: golden (``repeat`` times), then masked and mutants.

``ImplCheck`` plans the runs and decides from their reports; it never runs anything itself. Its first units
are the golden runs; when they are all in, it returns the masked run and the mutants (which need the golden
run's test ids and durations), and when those are in, the result is final. Any executor can run the units.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from lmrbench.authoring.check.check import find_leaks
from lmrbench.authoring.task.metadata import mark_trusted
from lmrbench.benchmark.execution.unit import Purpose, RunUnit, TaskRef, UnitResult
from lmrbench.benchmark.validation.not_run import (
    environment_not_run,
    golden_not_run,
    static_not_run,
    with_missing_data,
)
from lmrbench.benchmark.validation.plan import (
    PlannedMutant,
    RecordedFacts,
    ValidateOptions,
    mutant_files,
    pick_mutants,
    plan_mutants,
    recorded_facts,
    static_problems,
)
from lmrbench.benchmark.validation.store import log_file, task_fingerprint, unit_folder
from lmrbench.benchmark.validation.tolerance import PROBE_RUN_ENV, precision_sensitive, probe_wanted, read_margins
from lmrbench.benchmark.validation.weakness import blind_tests, is_weak, mutant_diff, mutant_name, weak_reasons
from lmrbench.core.taskset import Task, load_task
from lmrbench.core.trust import impl_test_files
from lmrbench.errors import LmrError
from lmrbench.harness.spec import Golden, Masked, Mutant, TaggedVariant
from lmrbench.progress import NullProgress, Progress
from lmrbench.schemas.task_info import Implementation
from lmrbench.schemas.testrun import TestReport, TestStatus
from lmrbench.schemas.validation import ImplValidation, MutantResult, NotRun

_KILLING = (TestStatus.FAILED, TestStatus.ERROR, TestStatus.TIMEOUT)


def flaky_tests(reports: list[TestReport]) -> list[str]:
    """Tests whose outcome differs between runs of the same code (or the runs' statuses, if no case tells)."""
    outcomes: dict[str, set[str]] = {}
    for r in reports:
        for c in r.cases:
            outcomes.setdefault(c.test_id, set()).add(c.outcome)
        for m in r.missing_ids:
            outcomes.setdefault(m, set()).add("missing")
    flaky = sorted(t for t, seen in outcomes.items() if len(seen) > 1)
    statuses = sorted({str(r.status) for r in reports})
    if not flaky and len(statuses) > 1:
        flaky = [f"(whole run: {', '.join(statuses)})"]
    return flaky


_MARKING = threading.Lock()


@dataclass
class ImplCheck:
    """The runs of one implementation's validation and the decision drawn from them."""

    task: Task
    impl: Implementation
    opts: ValidateOptions
    runner: str
    fingerprint: str = ""
    mutants: list[PlannedMutant] | None = None
    """Every mutant of the golden code (planned when None); ``opts.max_mutants`` of them run."""
    progress: Progress = field(default_factory=NullProgress)
    env_id: str = ""
    journal: Path | None = None
    """Where its units' commands write their specs as they start (``store.started_dir``); None: nowhere."""
    result: ImplValidation = field(init=False)
    done: bool = False
    _golden: dict[int, TestReport] = field(default_factory=dict)
    _mutants: dict[int, TestReport] = field(default_factory=dict)
    _chosen: list[PlannedMutant] = field(default_factory=list)
    _reasons: list[str] = field(default_factory=list)
    _waiting: int = 0
    _environment_error: str = ""
    _environment_cause: str = ""
    _not_run: NotRun | None = None
    _start: float = field(default_factory=time.monotonic)
    _facts: RecordedFacts = field(default_factory=RecordedFacts)

    def __post_init__(self) -> None:
        self.result = ImplValidation(
            task=self.task.name, impl=self.impl.index, sandbox=self.runner,
            fingerprint=self.fingerprint, repeat=self.opts.repeat, test_files=impl_test_files(self.task, self.impl),
            valid=False, finished_at=datetime.now(UTC),
        )
        self._facts = recorded_facts(self.task, self.impl)
        self._not_run = static_not_run(self.task, self.impl)
        if self.mutants is None and self.opts.max_mutants > 0 and not self._stopped:
            self.mutants = plan_mutants(self.task, self.impl, self._facts)
        self._chosen = pick_mutants(self.mutants or [], self.opts.max_mutants, self._facts.equivalent,
                                    self._facts.live)

    @property
    def label(self) -> str:
        """``task#impl``, as progress lines and problems name it."""
        return f"{self.task.name}#{self.impl.index}"

    @property
    def _stopped(self) -> bool:
        """Something stops the implementation before anything runs (a static problem, or it cannot run)."""
        return self._not_run is not None or bool(static_problems(self.task, self.impl))

    @property
    def runs(self) -> int:
        """Test runs this check makes when nothing stops it early (for the progress bar)."""
        if self._stopped:
            return 0
        return self.opts.repeat + 1 + len(self._chosen) + self._probing

    @property
    def _probing(self) -> int:
        """1 when a float64 re-run of the golden code checks the tolerances, else 0."""
        return int(self.opts.check_tolerances and probe_wanted(self.impl))

    def _unit(self, purpose: Purpose, ordinal: int, of: int, variant: TaggedVariant,
              timeout: float, expected: list[str] | None = None, env: dict[str, str] | None = None) -> RunUnit:
        ref = TaskRef(self.task.name, str(self.task.path))
        what = f"{purpose} {ordinal}/{of}" if ordinal else purpose
        return RunUnit(key=f"{self.label} {what}", task=ref, impl=self.impl.index, variant=variant, purpose=purpose,
                       ordinal=ordinal, timeout=timeout, expected_ids=expected, rebuild=self.opts.rebuild,
                       env=env or {}, journal=str(self.journal / unit_folder(purpose, ordinal)) if self.journal else "")

    def first_units(self) -> list[RunUnit]:
        """The golden runs; none (and the result final) when a static problem stops the implementation, or it
        cannot run."""
        if self._not_run is not None:
            self.result.not_run = self._not_run
            self._finish([])
            return []
        problems = static_problems(self.task, self.impl)
        if problems:
            self._finish(problems)
            return []
        n = self.opts.repeat
        self._waiting = n
        return [self._unit("golden", k, n, Golden(), self.opts.timeout) for k in range(1, n + 1)]

    def on_result(self, unit: RunUnit, result: UnitResult) -> list[RunUnit]:
        """Take one run's report; return the runs it makes possible (masked and mutants after the golden)."""
        report, what = result.report, unit.key.removeprefix(f"{self.label} ")
        self.env_id = self.env_id or result.env_id
        outcome = str(report.status)
        if unit.purpose == "mutant" and report.status is not TestStatus.INFRA_ERROR:
            outcome = "killed" if report.status in _KILLING else "survived"  # a failing mutant is good news
        elif unit.purpose == "tolerance" and report.status is not TestStatus.INFRA_ERROR:
            outcome = "measured"  # every test ends with its margin: not a verdict
        self.progress.advance(1, f"{self.label} {what}: {outcome}")
        if report.status is TestStatus.INFRA_ERROR:
            self.progress.log(f"{self.label} {what}: infrastructure error: {report.detail}")
        self._waiting -= 1
        if unit.purpose == "golden":
            self._golden[unit.ordinal] = report
            if result.environment_error and not self._environment_error:
                self._environment_error, self._environment_cause = result.environment_error, result.environment_cause
            return self._after_golden() if self._waiting == 0 else []
        if unit.purpose == "masked":
            self.result.masked = report
        elif unit.purpose == "tolerance":
            self.result.tolerance_margin, self.result.tolerance_note = read_margins(report)
        else:
            self._mutants[unit.ordinal] = report
        if self._waiting == 0:
            self._finish(self._reasons)
        return []

    def _trust_reads(self, runs: list[TestReport]) -> None:
        """Mark trusted (info.json ``trusted_files``) the files the golden runs' tests read that nothing
        trusted yet, wherever they lie: from now on no candidate's tree and no agent export holds them."""
        reads = sorted({f for r in runs if r.passed for f in r.read_files})
        if not reads:
            return
        try:
            with _MARKING:  # implementations of one task check at once; each adds to the same info.json
                added = mark_trusted(self.task, self.impl.index, reads)
        except (LmrError, OSError) as exc:
            self.progress.log(f"{self.label}: warning: cannot mark the data the tests read as trusted: {exc}")
            return
        if added:
            self.progress.log(f"{self.label}: the tests read {', '.join(added)}: marked trusted in info.json "
                              "(kept from candidates and agent exports)")
            self.task = load_task(self.task.path)
            if self.fingerprint:
                self.result.fingerprint = self.fingerprint = task_fingerprint(self.task)

    def _after_golden(self) -> list[RunUnit]:
        res = self.result
        res.golden_runs = [self._golden[k] for k in sorted(self._golden)]
        res.evidence, res.isolation = res.golden_runs[0].evidence, res.golden_runs[0].isolation
        res.golden_passes = sum(r.passed for r in res.golden_runs)
        res.flaky_tests = flaky_tests(res.golden_runs)
        self._trust_reads(res.golden_runs)
        if self._environment_error:
            self.progress.advance(1 + len(self._chosen) + self._probing)
            self.result.environment_error = self._environment_error
            self.result.not_run = with_missing_data(
                self.task, self.impl, environment_not_run(self._environment_error, self._environment_cause))
            self._finish([f"not run: its environment could not be prepared: {self._environment_error}"])
            return []
        stopped = golden_not_run(self.task, self.impl, res.golden_runs)
        if stopped is not None:  # the golden code never ran: nothing after it can tell anything
            self.progress.advance(1 + len(self._chosen) + self._probing)
            self.result.not_run = stopped
            self._finish([])
            return []
        reasons = []
        for k, r in enumerate(res.golden_runs, start=1):
            if not r.passed:
                why = r.detail or f"see {log_file(self.impl.index, f'golden-{k}')}"
                reasons.append(precision_sensitive(r) or f"golden run {k} {r.status}: {why}"[:300])
                break
        if res.flaky_tests:
            reasons.append(f"flaky tests: {', '.join(res.flaky_tests)}"[:300])
        self._reasons = reasons
        passing = next((r for r in res.golden_runs if r.passed), None)
        expected = [c.test_id for c in passing.cases if c.outcome == "passed"] if passing else None
        units = [self._unit("masked", 0, 1, Masked(), self.opts.timeout, expected)]
        if reasons:
            self.progress.advance(len(self._chosen) + self._probing)
        else:
            if self._probing:
                units.append(self._unit("tolerance", 0, 1, Golden(), self.opts.timeout, None, PROBE_RUN_ENV))
            slowest = max(r.duration for r in res.golden_runs)
            timeout = min(self.opts.timeout, max(30.0, 5 * slowest))
            n = len(self._chosen)
            units += [
                self._unit("mutant", k, n, Mutant(mutant_files(self.task, self.impl, goal, mutant)), timeout, expected)
                for k, (goal, _qual, mutant) in enumerate(self._chosen, start=1)
            ]
        self._waiting = len(units)
        return units

    def _finish(self, reasons: list[str]) -> None:
        res, reasons = self.result, list(reasons)
        masked = res.masked
        if masked is not None and masked.passed:
            reasons.append("the masked code passes the tests")
        elif masked is not None and masked.status is TestStatus.INFRA_ERROR:
            reasons.append(f"masked run: infrastructure error: {masked.detail}"[:300])
        if not reasons:
            self._record_mutants()
        leaks = find_leaks(self.task, self.impl)
        if leaks and res.not_run is None:
            reasons.append(f"the golden body is still in the repository: {', '.join(leaks[:5])}")
        elif leaks and res.not_run is not None:  # what no environment fixes is said before anyone builds one
            res.not_run = res.not_run.model_copy(update={
                "detail": f"{res.not_run.detail}; and, whatever runs, invalid: the golden body is still in the "
                          f"repository ({', '.join(leaks[:5])})"})
        res.reasons = reasons
        res.valid = not reasons and res.not_run is None
        res.min_kill_rate = self.opts.min_kill_rate
        res.weak = is_weak(res, self.opts.min_kill_rate)
        res.seconds = round(time.monotonic() - self._start, 3)
        res.finished_at = datetime.now(UTC)
        self.done = True

    def _record_mutants(self) -> None:
        res = self.result
        for k, (goal, qual, mutant) in enumerate(self._chosen, start=1):
            report = self._mutants.get(k)
            if report is None:
                continue
            failing = [c.test_id for c in report.cases if c.outcome in ("failed", "error")]
            golden = self.task.golden_path(self.impl, self.impl.goal_files.index(goal)).read_text(encoding="utf-8")
            killed = report.status in _KILLING
            res.mutants.append(MutantResult(
                qualname=qual, kind=mutant.kind, description=mutant.description, pinned=mutant.pinned,
                status=report.status, killed=killed, detail=(", ".join(failing) or report.detail)[:200],
                name=mutant_name(k, mutant.kind), diff=mutant_diff(golden, mutant.source, goal),
                equivalent=not killed and report.status is not TestStatus.INFRA_ERROR
                and mutant.digest in self._facts.equivalent,
            ))
        blind = blind_tests(self._chosen, self._mutants, self.task.repo_dir)
        counted = [m for m in res.mutants if m.status is not TestStatus.INFRA_ERROR and not m.equivalent]
        res.mutants_total = len(counted)
        res.mutants_killed = sum(m.killed for m in counted)
        res.weak_reasons = weak_reasons(res.mutants, self._facts.unvaried, self._facts.weak, self._facts.catches) \
            + blind
