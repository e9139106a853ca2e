"""Prove a task valid: the golden code passes every run, the masked stub fails, mutants of the golden die.

Results go to one JSON file per (task, implementation) in a run folder (``<task>/impl-<k>.json``), written
atomically when the implementation is done, plus ``summary.json``. A re-run skips every implementation whose
result matches the task's current files and settings, unless forced.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from lmrbench.authoring.check import find_leaks
from lmrbench.authoring.testgen import TODO_MARK
from lmrbench.authoring.tree import Variant, impl_test_files
from lmrbench.benchmark.sandbox.choose import get_sandbox
from lmrbench.benchmark.testrun.variant import evaluate_variant
from lmrbench.benchmark.validation.weakness import DEFAULT_MIN_KILL_RATE, is_weak, mutant_diff, mutant_name, survivors
from lmrbench.core.sandbox import RunnerKind, Sandbox
from lmrbench.core.taskset import Task, load_taskset, task_dirs
from lmrbench.defaults import default_run_dir
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_json, is_within, tree_digest
from lmrbench.progress import Cancelled, NullProgress, Progress, check_cancel
from lmrbench.schemas.task_info import Implementation
from lmrbench.schemas.testrun import TestReport, TestStatus
from lmrbench.schemas.validation import ImplValidation, MutantResult, SummaryRow, ValidationSummary

if TYPE_CHECKING:
    from lmrbench.authoring.mutants import Mutant

SUMMARY_FILE = "summary.json"
RUN_TOKEN_ENV = "LMRBENCH_VALIDATE_RUN"
"""Set in every run's environment so that an interrupted validate can find and stop its own runs."""
_KILLING = (TestStatus.FAILED, TestStatus.ERROR, TestStatus.TIMEOUT)
_FINGERPRINT_SKIP = frozenset({".git", "__pycache__", ".pytest_cache", "logs", "paper.pdf", "paper.json"})


@dataclass
class ValidateOptions:
    """How thoroughly to validate."""

    repeat: int = 3
    """Golden runs per implementation; outcomes that disagree mark the test flaky."""
    timeout: float = 600.0
    """Wall-clock limit of one test run, in seconds."""
    max_mutants: int = 12
    """Most mutants run per implementation (picked evenly from the generated ones)."""
    min_kill_rate: float = DEFAULT_MIN_KILL_RATE
    """An implementation whose tests kill fewer mutants than this is valid but weak."""
    jobs: int = 1
    """Tasks validated at once, each run in its own container."""
    force: bool = False
    """Validate again even where a matching result exists."""
    rebuild: bool = False
    """Rebuild each task's environment."""


def result_path(run_dir: Path, task_name: str, impl_index: int) -> Path:
    """The result file of one implementation in a run folder."""
    return Path(run_dir) / task_name / f"impl-{impl_index}.json"


def load_result(path: Path) -> ImplValidation | None:
    """A result file, or None when it is missing or unreadable (then it is validated again)."""
    try:
        return ImplValidation.model_validate_json(Path(path).read_bytes())
    except (OSError, ValidationError, ValueError):
        return None


def latest_results(bench: Path, run_dir: Path | None = None) -> dict[tuple[str, int], ImplValidation]:
    """Every stored result of a task set, keyed by (task folder name, implementation index)."""
    folder = Path(run_dir) if run_dir else default_run_dir(bench)
    out: dict[tuple[str, int], ImplValidation] = {}
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*/impl-*.json")):
        res = load_result(path)
        if res is not None:
            out[(res.task, res.impl)] = res
    return out


HARNESS = "split-1"
"""The way tests are run and decided; a new value validates every task again."""


def task_fingerprint(task: Task) -> str:
    """A hash of everything a task's test results depend on (paper and logs excluded), and of how the harness
    runs tests (``HARNESS``): results from an older way of running are not reused."""
    return tree_digest(task.path, skip=_FINGERPRINT_SKIP, salt=HARNESS.encode())[:24]


def static_problems(task: Task, impl: Implementation) -> list[str]:
    """Reasons an implementation is invalid before anything runs: no tests, unfinished scaffolds."""
    files = impl_test_files(task, impl)
    if not files:
        return ["no unit tests"]
    problems = []
    for f in files:
        text = (task.repo_dir / f).read_text(encoding="utf-8", errors="replace")
        if TODO_MARK in text:
            problems.append(f"{f}: scaffold still holds {TODO_MARK}")
    return problems


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


PlannedMutant = tuple[str, str, "Mutant"]
"""(goal file, qualname, mutant of the whole golden file)."""


def pick_mutants(mutants: list[PlannedMutant], limit: int) -> list[PlannedMutant]:
    """At most ``limit`` mutants, spread evenly over the generated list (deterministic)."""
    if limit <= 0:
        return []
    if len(mutants) <= limit:
        return mutants
    step = len(mutants) / limit
    return [mutants[int(i * step)] for i in range(limit)]


def plan_mutants(task: Task, impl: Implementation) -> list[PlannedMutant]:
    """Every mutant of every goal function of ``impl``, in a deterministic order."""
    from lmrbench.authoring.mutants import generate_mutants  # LibCST: loaded only when mutants are made

    out: list[PlannedMutant] = []
    names = impl.qualnames
    for which, goal in enumerate(impl.goal_files):
        golden = task.golden_path(impl, which)
        try:
            source = golden.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise LmrError(f"cannot read the golden file: {exc}", golden) from None
        for q in names:
            try:
                mutants = generate_mutants(source, q, file=goal)
            except LmrError:
                if len(impl.goal_files) > 1:
                    continue  # the function lives in another goal file
                raise
            out.extend((goal, q, m) for m in mutants)
    return out


def write_mutant_candidate(task: Task, impl: Implementation, dest: Path, goal: str, mutant: Mutant) -> Path:
    """A repo-shaped candidate folder: the mutated goal file, the other goal files golden."""
    for which, other in enumerate(impl.goal_files):
        path = dest / other
        path.parent.mkdir(parents=True, exist_ok=True)
        text = mutant.source if other == goal else task.golden_path(impl, which).read_text(encoding="utf-8")
        path.write_text(text, encoding="utf-8")
    return dest


def validate_implementation(
    sandbox: Sandbox,
    task: Task,
    impl: Implementation,
    *,
    options: ValidateOptions | None = None,
    fingerprint: str = "",
    mutants: list[PlannedMutant] | None = None,
    run_token: str = "",
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> ImplValidation:
    """Validate one implementation (its task's environment prepared already); Cancelled when cancelled."""
    opts = options or ValidateOptions()
    progress = progress or NullProgress()
    start = time.monotonic()
    reasons = static_problems(task, impl)
    result = ImplValidation(
        task=task.name, impl=impl.index, runner=sandbox.name, fingerprint=fingerprint, repeat=opts.repeat,
        test_files=impl_test_files(task, impl), valid=False, finished_at=datetime.now(UTC),
    )
    label = f"{task.name}#{impl.index}"
    run_env = {RUN_TOKEN_ENV: run_token} if run_token else None

    def run(variant: Variant, what: str, timeout: float, expected: list[str] | None = None) -> TestReport:
        check_cancel(cancel)
        report = evaluate_variant(sandbox, task, impl, variant, timeout=timeout, expected_ids=expected,
                                  env=run_env)
        check_cancel(cancel)
        outcome = str(report.status)
        if what.startswith("mutant") and report.status is not TestStatus.INFRA_ERROR:
            outcome = "killed" if report.status in _KILLING else "survived"  # a failing mutant is good news
        progress.advance(1, f"{label} {what}: {outcome}")
        if report.status is TestStatus.INFRA_ERROR:
            progress.log(f"{label} {what}: infrastructure error: {report.detail}")
        return report

    if not reasons:
        try:
            reasons = _run_checks(result, run, task, impl, opts, mutants, label)
        except LmrError as exc:
            if isinstance(exc, Cancelled):
                raise
            reasons = [str(exc)]
    leaks = find_leaks(task, impl)
    if leaks:
        reasons.append(f"the golden body is still in the repository: {', '.join(leaks[:5])}")
    result.reasons = reasons
    result.valid = not reasons
    result.min_kill_rate = opts.min_kill_rate
    result.weak = is_weak(result, opts.min_kill_rate)
    result.seconds = round(time.monotonic() - start, 3)
    result.finished_at = datetime.now(UTC)
    return result


def _run_checks(
    result: ImplValidation,
    run: Callable[[Variant, str, float, list[str] | None], TestReport],
    task: Task,
    impl: Implementation,
    opts: ValidateOptions,
    mutants: list[PlannedMutant] | None,
    label: str,
) -> list[str]:
    """Golden runs, the masked run and the mutants; fills ``result`` and returns the reasons it is invalid."""
    reasons: list[str] = []
    for k in range(opts.repeat):
        result.golden_runs.append(run("golden", f"golden {k + 1}/{opts.repeat}", opts.timeout, None))
    result.evidence = result.golden_runs[0].evidence if result.golden_runs else None
    result.isolation = result.golden_runs[0].isolation if result.golden_runs else None
    result.golden_passes = sum(r.passed for r in result.golden_runs)
    result.flaky_tests = flaky_tests(result.golden_runs)
    for k, r in enumerate(result.golden_runs, start=1):
        if not r.passed:
            reasons.append(f"golden run {k} {r.status}: {r.detail or 'see log'}"[:300])
            break
    if result.flaky_tests:
        reasons.append(f"flaky tests: {', '.join(result.flaky_tests)}"[:300])
    passing = next((r for r in result.golden_runs if r.passed), None)
    expected = [c.test_id for c in passing.cases if c.outcome == "passed"] if passing else None
    result.masked = run("masked", "masked", opts.timeout, expected)
    if result.masked.passed:
        reasons.append("the masked code passes the tests")
    elif result.masked.status is TestStatus.INFRA_ERROR:
        reasons.append(f"masked run: infrastructure error: {result.masked.detail}"[:300])
    if reasons:
        return reasons
    slowest = max(r.duration for r in result.golden_runs)
    mutant_timeout = min(opts.timeout, max(30.0, 5 * slowest))
    if mutants is None and opts.max_mutants > 0:
        mutants = plan_mutants(task, impl)
    chosen = pick_mutants(mutants or [], opts.max_mutants)
    for n, (goal, qual, mutant) in enumerate(chosen, start=1):
        with tempfile.TemporaryDirectory(prefix="lmrbench-mutant-") as tmp:
            cand = write_mutant_candidate(task, impl, Path(tmp), goal, mutant)
            report = run(cand, f"mutant {n}/{len(chosen)}", mutant_timeout, expected)
        failing = [c.test_id for c in report.cases if c.outcome in ("failed", "error")]
        golden = task.golden_path(impl, impl.goal_files.index(goal)).read_text(encoding="utf-8")
        result.mutants.append(MutantResult(
            qualname=qual, kind=mutant.kind, description=mutant.description, status=report.status,
            killed=report.status in _KILLING, detail=(", ".join(failing) or report.detail)[:200],
            name=mutant_name(n, mutant.kind), diff=mutant_diff(golden, mutant.source, goal),
        ))
    counted = [m for m in result.mutants if m.status is not TestStatus.INFRA_ERROR]
    result.mutants_total = len(counted)
    result.mutants_killed = sum(m.killed for m in counted)
    return reasons


def infra_errors(result: ImplValidation) -> int:
    """Runs of a result that ended in an infrastructure error (a result with any is validated again)."""
    runs = [*result.golden_runs, *([result.masked] if result.masked else [])]
    n = sum(r.status is TestStatus.INFRA_ERROR for r in runs)
    n += sum(m.status is TestStatus.INFRA_ERROR for m in result.mutants)
    return n + sum(r.startswith("environment:") for r in result.reasons)


def is_reusable(
    result: ImplValidation | None, fingerprint: str, opts: ValidateOptions, runner: RunnerKind | None = None
) -> bool:
    """True when a stored result is about the same files and settings, was made by ``runner`` (any runner when
    None: the automatic choice) and had no infrastructure errors."""
    return (
        result is not None
        and result.fingerprint == fingerprint
        and result.repeat == opts.repeat
        and (runner is None or result.runner == runner)
        and infra_errors(result) == 0
    )


@dataclass
class _Job:
    task: Task
    fingerprint: str
    impls: list[Implementation]
    mutants: dict[int, list[PlannedMutant]] = field(default_factory=dict)


def _row(res: ImplValidation, skipped: bool) -> SummaryRow:
    return SummaryRow(
        task=res.task, impl=res.impl, valid=res.valid, golden_passes=res.golden_passes, repeat=res.repeat,
        masked_failed=res.masked_failed, mutants_killed=res.mutants_killed, mutants_total=res.mutants_total,
        flaky=len(res.flaky_tests), seconds=res.seconds, skipped=skipped, reasons=res.reasons,
        evidence=res.evidence_text,
        weak=res.weak, kill_rate=res.kill_rate,
        survivors=[f"{m.name or m.kind}: {m.description}" for m in survivors(res.mutants)],
    )


def _runs_of(job: _Job, opts: ValidateOptions) -> int:
    total = 0
    for impl in job.impls:
        total += opts.repeat + 1 + len(pick_mutants(job.mutants.get(impl.index, []), opts.max_mutants))
    return total


def _validate_job(
    sandbox: Sandbox,
    job: _Job,
    opts: ValidateOptions,
    run_dir: Path,
    run_token: str,
    progress: Progress,
    cancel: threading.Event,
) -> list[ImplValidation]:
    """Prepare one task's environment and validate its pending implementations, saving each result."""
    out = []
    env_error = None
    # Refused before anything is built (a scaffold still holding LMRBENCH-TODO, no tests): no environment for them.
    refused = {impl.index for impl in job.impls if static_problems(job.task, impl)}
    try:
        check_cancel(cancel)
        if any(impl.index not in refused for impl in job.impls):
            sandbox.prepare(job.task, rebuild=opts.rebuild, progress=progress, cancel=cancel)
    except Cancelled:
        raise
    except LmrError as exc:
        env_error = f"environment: {exc}"
        progress.log(f"{job.task.name}: {env_error}")
    for impl in sorted(job.impls, key=lambda i: i.index not in refused):
        if env_error and impl.index not in refused:
            res = ImplValidation(
                task=job.task.name, impl=impl.index, runner=sandbox.name, fingerprint=job.fingerprint,
                repeat=opts.repeat, test_files=impl_test_files(job.task, impl), valid=False,
                reasons=[env_error], finished_at=datetime.now(UTC),
            )
            progress.advance(_runs_of(_Job(job.task, job.fingerprint, [impl], job.mutants), opts))
        else:
            res = validate_implementation(
                sandbox, job.task, impl, options=opts, fingerprint=job.fingerprint,
                mutants=job.mutants.get(impl.index), run_token=run_token, progress=progress, cancel=cancel,
            )
        atomic_write_json(result_path(run_dir, job.task.name, impl.index), res.model_dump(mode="json"))
        out.append(res)
    return out


def validate_taskset(
    bench: Path,
    *,
    only: list[str] | None = None,
    runner: RunnerKind | None = None,
    options: ValidateOptions | None = None,
    run_dir: Path | None = None,
    sandbox: Sandbox | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> ValidationSummary:
    """Validate every implementation of a task set; returns the summary (also written as summary.json).

    Tasks run in ``options.jobs`` threads. On KeyboardInterrupt or ``cancel`` the running jobs stop at their
    next step, nothing half-written is left, and the interrupt is raised again.
    """
    opts = options or ValidateOptions()
    if opts.repeat < 1:
        raise LmrError(f"--repeat must be at least 1 (got {opts.repeat})")
    if opts.jobs < 1:
        raise LmrError(f"--jobs must be at least 1 (got {opts.jobs})")
    progress = progress or NullProgress()
    cancel = cancel or threading.Event()
    started = time.monotonic()
    bench = Path(bench)
    tasks, load_problems = load_taskset(bench, only)
    run_dir = Path(run_dir) if run_dir else default_run_dir(bench)
    for d in task_dirs(bench):
        if is_within(d, run_dir.resolve()):
            raise LmrError("the run folder must not be inside a task folder", run_dir)
    problems = [str(p) for p in load_problems]

    rows: dict[tuple[str, int], SummaryRow] = {}
    jobs: list[_Job] = []
    for task in tasks:
        fp = task_fingerprint(task)
        job = _Job(task=task, fingerprint=fp, impls=[])
        for impl in task.info.implementations:
            old = None if opts.force else load_result(result_path(run_dir, task.name, impl.index))
            if old is not None and is_reusable(old, fp, opts, sandbox.name if sandbox else runner):
                old.min_kill_rate, old.weak = opts.min_kill_rate, is_weak(old, opts.min_kill_rate)
                rows[(task.name, impl.index)] = _row(old, skipped=True)
                continue
            job.impls.append(impl)
            if opts.max_mutants > 0 and not static_problems(task, impl):
                try:
                    job.mutants[impl.index] = plan_mutants(task, impl)
                except LmrError as exc:
                    progress.log(f"{task.name}#{impl.index}: no mutants: {exc}")
        if job.impls:
            jobs.append(job)

    if jobs:
        sandbox = sandbox or get_sandbox(runner, progress=progress)
        ensure_base_image(sandbox, progress=progress, cancel=cancel)
        progress.start("validate", sum(_runs_of(j, opts) for j in jobs))
        for res in _run_jobs(sandbox, jobs, opts, run_dir, progress, cancel, problems):
            rows[(res.task, res.impl)] = _row(res, skipped=False)
    order = {t.name: i for i, t in enumerate(tasks)}
    ordered = [rows[k] for k in sorted(rows, key=lambda k: (order.get(k[0], 1 << 30), k[1]))]
    rate = sum(r.golden_passes == r.repeat for r in ordered) / len(ordered) if ordered else None
    summary = ValidationSummary(
        bench=str(bench), runner=sandbox.name if sandbox else (runner or "auto"), rows=ordered,
        problems=problems, golden_pass_rate=rate, seconds=round(time.monotonic() - started, 3),
        finished_at=datetime.now(UTC),
    )
    atomic_write_json(run_dir / SUMMARY_FILE, summary.model_dump(mode="json"))
    return summary


def ensure_base_image(sandbox: Sandbox, *, progress: Progress, cancel: threading.Event | None = None) -> None:
    """With the Docker runner and no base image at all, pull or bootstrap one (saying so): a fresh machine works."""
    from lmrbench.benchmark.sandbox.docker import DockerRunner

    if not isinstance(sandbox, DockerRunner) or sandbox.base_image:
        return
    from lmrbench.benchmark.sandbox.base_image import obtain_base_image

    choice = obtain_base_image(sandbox.client, progress=progress, cancel=cancel)
    if choice.how != "present":
        progress.log(choice.line())


def _run_jobs(
    sandbox: Sandbox,
    jobs: list[_Job],
    opts: ValidateOptions,
    run_dir: Path,
    progress: Progress,
    cancel: threading.Event,
    problems: list[str],
) -> list[ImplValidation]:
    """Run the jobs in a thread pool. On Ctrl-C or ``cancel``: stop starting runs, kill the running ones (by
    the token every run of this call carries), wait for the workers, then raise again."""
    results: list[ImplValidation] = []
    token = secrets.token_hex(8)
    pool = ThreadPoolExecutor(max_workers=opts.jobs, thread_name_prefix="lmrbench-validate")
    futures: dict[Future[list[ImplValidation]], _Job] = {}
    try:
        for j in jobs:
            futures[pool.submit(_validate_job, sandbox, j, opts, run_dir, token, progress, cancel)] = j
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in done:
                try:
                    results.extend(fut.result())
                except Cancelled:
                    pass
                except Exception as exc:  # one task's failure never stops the others
                    problems.append(f"{futures[fut].task.name}: {type(exc).__name__}: {exc}")
            if cancel.is_set():
                raise Cancelled()
    except BaseException:
        cancel.set()
        pool.shutdown(wait=False, cancel_futures=True)
        while any(not f.done() for f in futures):
            stop_runs(token)
            wait(list(futures), timeout=0.5)
        stop_runs(token)
        raise
    pool.shutdown(wait=True)
    return results


def stop_runs(token: str) -> int:
    """Kill every sandbox run started with ``token`` in its environment; returns how many were stopped.

    Docker: the containers of this run (found by the runner's label, then the token in their environment) are
    killed; the runner removes them. Local: the process groups whose environment holds the token.
    """
    needle = f"{RUN_TOKEN_ENV}={token}"
    stopped = 0
    try:
        import docker

        from lmrbench.benchmark.sandbox.containers import RUN_LABEL

        client = docker.from_env(timeout=10)
        try:
            for c in client.containers.list(all=True, filters={"label": RUN_LABEL}):
                if needle in (c.attrs.get("Config", {}).get("Env") or []):
                    with contextlib.suppress(docker.errors.APIError):
                        c.remove(force=True)
                        stopped += 1
        finally:
            client.close()
    except Exception:  # no engine: nothing of ours can run there
        pass
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        if needle.encode() in environ.split(b"\0"):
            with contextlib.suppress(OSError):
                os.killpg(os.getpgid(int(proc.name)), signal.SIGKILL)
                stopped += 1
    return stopped
