"""``regrade`` of a validated task set: every verdict derived again from the kept evidence, nothing run.

Each implementation's check is planned again with the settings it ran with (``check.json``) and fed, run by run,
the reports decided again from each run's evidence (``harness.regrade``); the result is compared with the one
stored. Nothing of the task is started: no container, no process, no environment.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from lmrbench.benchmark.execution.unit import RunUnit, UnitResult
from lmrbench.benchmark.validation.implementation import ImplCheck
from lmrbench.benchmark.validation.keep import CHECK_FILE
from lmrbench.benchmark.validation.plan import ValidateOptions
from lmrbench.benchmark.validation.store import (
    evidence_dir,
    golden_pass_rate,
    latest_results,
    summary_row,
    task_fingerprint,
    unit_folder,
)
from lmrbench.core.taskset import Task, load_taskset
from lmrbench.defaults import default_run_dir
from lmrbench.errors import LmrError
from lmrbench.fsutil import read_capped
from lmrbench.harness.evidence import read_unit, unsealed
from lmrbench.harness.regrade import decide_unit
from lmrbench.schemas.evidence import CheckRecord
from lmrbench.schemas.testrun import TestReport
from lmrbench.schemas.validation import ImplValidation


@dataclass
class BenchRegrade:
    """The stored and the re-derived results of a task set, and what differs between them."""

    stored: list[ImplValidation] = field(default_factory=list)
    regraded: list[ImplValidation] = field(default_factory=list)
    """One per stored result: the re-derived one, or the stored one where it could not be derived again."""
    changed: list[str] = field(default_factory=list)
    """One line per verdict that now differs: ``task#impl what: before -> after``."""
    not_regraded: list[str] = field(default_factory=list)
    """One line per result that could not be derived again, and why."""
    not_run: int = 0
    """Results whose golden code never ran (stopped by the checkout or the environment before any run): nothing
    decided them from a run, so they stand as stored."""

    @property
    def stored_rate(self) -> float | None:
        """The golden pass rate of the stored results (as ``validate`` printed it)."""
        return golden_pass_rate([summary_row(r, False) for r in self.stored])

    @property
    def regraded_rate(self) -> float | None:
        """The golden pass rate derived again."""
        return golden_pass_rate([summary_row(r, False) for r in self.regraded])


def regrade_bench(bench: Path, run_dir: Path | None = None) -> BenchRegrade:
    """Derive every stored validation result of ``bench`` again from its evidence and compare."""
    bench = Path(bench)
    run_dir = Path(run_dir) if run_dir else default_run_dir(bench)
    stored = latest_results(bench, run_dir)
    if not stored:
        raise LmrError("no validation result is stored here: run lmrbench validate first", run_dir)
    tasks, _problems = load_taskset(bench, sorted({name for name, _ in stored}))
    by_name = {t.name: t for t in tasks}
    out = BenchRegrade()
    for (name, index), old in sorted(stored.items()):
        out.stored.append(old)
        task = by_name.get(name)
        folder = evidence_dir(run_dir, name, index)
        if old.not_run is not None and not (folder / CHECK_FILE).exists():
            out.not_run += 1
            out.regraded.append(old)
            continue
        try:
            if task is None:
                raise LmrError("the task no longer loads", bench / name)
            new = regrade_impl(task, old, folder)
        except LmrError as exc:
            out.not_regraded.append(f"{name}#{index}: {exc}")
            out.regraded.append(old)
            continue
        out.regraded.append(new)
        out.changed += [f"{name}#{index} {line}" for line in differences(old, new)]
    return out


def regrade_impl(task: Task, stored: ImplValidation, folder: Path) -> ImplValidation:
    """``stored`` derived again: its check planned with the settings it ran with and fed each run's report,
    decided again from the run's evidence in ``folder``. LmrError when the evidence is missing or the task's
    files changed since (then the runs would not be the same runs)."""
    if task_fingerprint(task) != stored.fingerprint:
        raise LmrError("the task's files changed since it was validated: validate it again")
    try:
        settings = CheckRecord.model_validate_json(read_capped(folder / CHECK_FILE, 1 << 20))
    except LmrError as exc:
        raise LmrError(f"no evidence kept ({exc.problem}): validate again to keep it", exc.path) from None
    except ValueError as exc:
        raise LmrError(f"not an evidence file: {str(exc).splitlines()[0]}", folder / CHECK_FILE) from None
    opts = ValidateOptions(repeat=settings.repeat, timeout=settings.timeout, max_mutants=settings.max_mutants,
                           min_kill_rate=settings.min_kill_rate, check_tolerances=settings.check_tolerances)
    impl = task.info.implementation(stored.impl)
    try:
        check = ImplCheck(task, impl, opts, stored.sandbox, stored.fingerprint)
    except LmrError:  # planned as validate does when the mutants cannot be made
        check = ImplCheck(task, impl, replace(opts, max_mutants=0), stored.sandbox, stored.fingerprint)
    kept = {f"golden-{k}": r for k, r in enumerate(stored.golden_runs, start=1)}
    kept.update({"masked": stored.masked} if stored.masked else {})
    units = check.first_units()
    while units:
        follow: list[RunUnit] = []
        for unit in units:
            name = unit_folder(unit.purpose, unit.ordinal)
            follow += check.on_result(unit, _rederived(folder / name, kept.get(name)))
        units = follow
    if not check.done:
        raise LmrError("the evidence does not hold every run of the check", folder)
    return check.result


def _rederived(folder: Path, stored: TestReport | None) -> UnitResult:
    """One unit's result decided again from its evidence (the files its tests read were marked trusted when
    it ran: a re-grade never writes the task). ``stored``: the result's report of that run, which the evidence
    must be of (not of a later validation that was interrupted)."""
    bad = unsealed(folder)
    if bad:
        raise LmrError(f"no longer sealed: {', '.join(bad)} (edited, re-sealed or added since it was kept)", folder)
    record, runs = read_unit(folder)
    then = record.report
    if stored is not None and (then.status, then.duration, then.exit_code) != (stored.status, stored.duration,
                                                                               stored.exit_code):
        raise LmrError("this evidence is of another validation than the stored result (one interrupted "
                       "since?): validate again", folder)
    report = decide_unit(record, runs).model_copy(update={"read_files": []})
    return UnitResult(report, environment_error=record.environment_error, env_id=record.env_id)


def differences(old: ImplValidation, new: ImplValidation) -> list[str]:
    """Each verdict of ``old`` that ``new`` decides otherwise, as ``what: before -> after``."""
    lines = []

    def compare(what: str, before: object, after: object) -> None:
        if before != after:
            lines.append(f"{what}: {before} -> {after}")

    compare("valid", old.valid, new.valid)
    compare("weak", old.weak, new.weak)
    compare("golden passes", f"{old.golden_passes}/{old.repeat}", f"{new.golden_passes}/{new.repeat}")
    for k, (a, b) in enumerate(zip(old.golden_runs, new.golden_runs, strict=False), start=1):
        compare(f"golden run {k}", a.status.value, b.status.value)
    compare("masked run", old.masked.status.value if old.masked else None,
            new.masked.status.value if new.masked else None)
    compare("mutants killed", f"{old.mutants_killed}/{old.mutants_total}", f"{new.mutants_killed}/{new.mutants_total}")
    after = {m.name or m.description: m for m in new.mutants}
    for m in old.mutants:
        n = after.get(m.name or m.description)
        compare(f"mutant {m.name or m.description}", _mutant_verdict(m.killed, m.status.value),
                _mutant_verdict(n.killed, n.status.value) if n else "not run")
    compare("reasons", old.reasons, new.reasons)
    return lines


def _mutant_verdict(killed: bool, status: str) -> str:
    return f"{'killed' if killed else 'survived'} ({status})"
