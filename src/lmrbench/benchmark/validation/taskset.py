"""Prove a task set valid: every implementation's golden code passes every run, the masked stub fails, and
mutants of the golden die.

Results go to one JSON file per (task, implementation) in a run folder (``<task>/impl-<k>.json``), written
atomically when the implementation is done, plus ``summary.json``. A re-run skips every implementation whose
result matches the task's current files and settings, unless forced. The runs themselves go to an executor:
threads of this machine by default, or the nodes of a Ray cluster.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from lmrbench.benchmark.execution.choose import MakeExecutor, executor_factory
from lmrbench.benchmark.execution.schedule import Executor, run_units
from lmrbench.benchmark.execution.unit import RunUnit, UnitResult
from lmrbench.benchmark.validation.implementation import ImplCheck
from lmrbench.benchmark.validation.keep import keep_check
from lmrbench.benchmark.validation.plan import ValidateOptions
from lmrbench.benchmark.validation.store import (
    SUMMARY_FILE,
    golden_pass_rate,
    golden_ran,
    is_reusable,
    load_result,
    result_path,
    save_result,
    started_dir,
    summary_row,
    task_fingerprint,
)
from lmrbench.benchmark.validation.weakness import is_weak
from lmrbench.core.sandbox import SandboxKind
from lmrbench.core.taskset import Task, load_taskset, task_dirs
from lmrbench.defaults import default_run_dir
from lmrbench.errors import LmrError, UsageError
from lmrbench.fsutil import atomic_write_json, is_within
from lmrbench.harness.sandbox import Sandbox
from lmrbench.progress import NullProgress, Progress
from lmrbench.schemas.validation import ImplValidation, SummaryRow, ValidationSummary


def validate_taskset(
    bench: Path,
    *,
    only: list[str] | None = None,
    sandbox: SandboxKind | Sandbox | None = None,
    options: ValidateOptions | None = None,
    run_dir: Path | None = None,
    executor: MakeExecutor | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> ValidationSummary:
    """Validate every implementation of a task set; returns the summary (also written as summary.json).

    Runs go to ``executor`` (default: ``options.jobs`` threads of this machine on ``sandbox``: a sandbox, or
    its kind; None picks Docker when it answers). Stored results are reused when made by the same kind of
    sandbox (any kind when None). On KeyboardInterrupt or ``cancel`` the running tests are killed, every
    implementation already done is on disk, nothing half-written is left, and the interrupt is raised again.
    """
    opts = options or ValidateOptions()
    if opts.repeat < 1:
        raise UsageError(f"--repeat must be at least 1 (got {opts.repeat})")
    if opts.jobs < 1:
        raise UsageError(f"--jobs must be at least 1 (got {opts.jobs})")
    progress = progress or NullProgress()
    cancel = cancel or threading.Event()
    started = time.monotonic()
    bench = Path(bench)
    tasks, load_problems = load_taskset(bench, only)
    run_dir = Path(run_dir) if run_dir else default_run_dir(bench)
    for d in task_dirs(bench):
        if is_within(d, run_dir.resolve()):
            raise LmrError("the run folder must not be inside a task folder", run_dir)
    problems: list[str] = []
    unloaded: list[SummaryRow] = []
    for p in load_problems:
        rows_of = _missing_repository_rows(p)
        unloaded += rows_of
        if not rows_of:
            problems.append(str(p))

    rows: dict[tuple[str, int], SummaryRow] = {}
    todo: list[tuple[Task, str, int]] = []
    wanted_runner = sandbox if isinstance(sandbox, str | None) else sandbox.name
    for task in tasks:
        fp = task_fingerprint(task)
        for impl in task.info.implementations:
            old = None if opts.force else load_result(result_path(run_dir, task.name, impl.index))
            if old is not None and is_reusable(old, fp, opts, wanted_runner):
                old.min_kill_rate, old.weak = opts.min_kill_rate, is_weak(old, opts.min_kill_rate)
                rows[(task.name, impl.index)] = summary_row(old, skipped=True)
            else:
                todo.append((task, fp, impl.index))

    runner_name: str = wanted_runner or "auto"
    if todo:
        make = executor or executor_factory(None, sandbox=sandbox, jobs=opts.jobs, progress=progress,
                                            cancel=cancel)
        pool = make({str(t.path): t for t, _, _ in todo})
        runner_name = pool.sandbox_name
        try:
            for res in _run_checks(pool, todo, opts, runner_name, run_dir, progress, cancel, problems):
                rows[(res.task, res.impl)] = summary_row(res, skipped=False)
        finally:
            pool.close()
    rows.update({(r.task, r.impl): r for r in unloaded})
    order = {d.name: i for i, d in enumerate(task_dirs(bench))}
    ordered = [rows[k] for k in sorted(rows, key=lambda k: (order.get(k[0], 1 << 30), k[1]))]
    summary = ValidationSummary(
        bench=str(bench), sandbox=runner_name, rows=ordered, golden_ran=len(golden_ran(ordered)),
        problems=problems, golden_pass_rate=golden_pass_rate(ordered), seconds=round(time.monotonic() - started, 3),
        finished_at=datetime.now(UTC),
    )
    atomic_write_json(run_dir / SUMMARY_FILE, summary.model_dump(mode="json"))
    return summary


def _missing_repository_rows(err: LmrError) -> list[SummaryRow]:
    """Not-run rows for each implementation of a task whose info.json loads but whose repository folder is
    missing (a git submodule never checked out); none for any other load problem."""
    from lmrbench.benchmark.validation.not_run import missing_repository
    from lmrbench.schemas.task_info import INFO_JSON, load_task_info

    if not err.path or "is not a folder" not in err.problem:
        return []
    task_dir = Path(err.path).parent
    try:
        info = load_task_info(task_dir / INFO_JSON)
    except LmrError:
        return []
    why = missing_repository(info, task_dir)
    return [SummaryRow(task=task_dir.name, impl=impl.index, valid=False, golden_passes=0, repeat=0,
                       masked_failed=False, mutants_killed=0, mutants_total=0, flaky=0, seconds=0.0, skipped=False,
                       not_run=why, verdict="not run") for impl in info.implementations]


def _run_checks(
    pool: Executor,
    todo: list[tuple[Task, str, int]],
    opts: ValidateOptions,
    runner: str,
    run_dir: Path,
    progress: Progress,
    cancel: threading.Event,
    problems: list[str],
) -> list[ImplValidation]:
    """Plan every pending implementation, run their units on ``pool``, save each result as it is final."""
    checks: dict[str, ImplCheck] = {}
    first: list[RunUnit] = []
    done: list[ImplValidation] = []

    runs: dict[str, list[tuple[RunUnit, UnitResult]]] = {}

    def save(check: ImplCheck) -> None:
        keep_check(run_dir, check, runs.pop(check.label, []))  # first: a result always has its evidence
        save_result(run_dir, check.result)
        done.append(check.result)

    planned = []
    for task, fp, index in todo:
        try:
            check = ImplCheck(task, task.info.implementation(index), opts, runner, fp, progress=progress)
        except LmrError as exc:
            mutants_off = ValidateOptions(**{**opts.__dict__, "max_mutants": 0})
            progress.log(f"{task.name}#{index}: no mutants: {exc}")
            check = ImplCheck(task, task.info.implementation(index), mutants_off, runner, fp, progress=progress)
        check.journal = started_dir(run_dir, task.name, index)
        planned.append(check)
    progress.start("validate", sum(c.runs for c in planned))
    for check in planned:
        units = check.first_units()
        if check.done:
            save(check)
        for unit in units:
            checks[unit.key] = check
        first += units

    def on_done(unit: RunUnit, result: UnitResult) -> list[RunUnit]:
        check = checks.pop(unit.key)
        runs.setdefault(check.label, []).append((unit, result))
        try:
            follow = check.on_result(unit, result)
        except Exception as exc:  # one implementation's failure never stops the others
            problems.append(f"{check.label}: {type(exc).__name__}: {exc}")
            return []
        for u in follow:
            checks[u.key] = check
        if check.done:
            save(check)
        return follow

    run_units(pool, first, on_done, cancel=cancel)
    return done
