"""Where validation results live and when one can be reused: one JSON file per (task, implementation).

A result is reused when it was made for the same task files (``task_fingerprint``), the same settings and the
same sandbox, and had no infrastructure error; anything else validates again.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from lmrbench.benchmark.validation.plan import ValidateOptions
from lmrbench.benchmark.validation.weakness import survivors
from lmrbench.core.sandbox import SandboxKind
from lmrbench.core.taskset import Task, task_digest
from lmrbench.defaults import default_run_dir
from lmrbench.fsutil import atomic_write_json, atomic_write_text
from lmrbench.schemas.testrun import TestStatus
from lmrbench.schemas.validation import ImplValidation, SummaryRow, verdict_of

SUMMARY_FILE = "summary.json"
HARNESS = "split-1"
"""The way tests are run and decided; a new value validates every task again."""
_NOT_READ_BY_TESTS = frozenset({"logs", "paper.pdf", "paper.json"})


def result_path(run_dir: Path, task_name: str, impl_index: int) -> Path:
    """The result file of one implementation in a run folder."""
    return Path(run_dir) / task_name / f"impl-{impl_index}.json"


def evidence_dir(run_dir: Path, task_name: str, impl_index: int) -> Path:
    """Where the evidence of one implementation's runs is kept: ``check.json`` and one folder per run (see
    ``schemas.evidence``)."""
    return Path(run_dir) / task_name / f"impl-{impl_index}.runs"


def started_dir(run_dir: Path, task_name: str, impl_index: int) -> Path:
    """Where the specs of one implementation's commands are written as they start (``Evidence.journal``), one
    folder per run unit: what a validation that was killed ran. Removed once the runs' evidence is kept."""
    return Path(run_dir) / task_name / f"impl-{impl_index}.started"


def unit_folder(purpose: str, ordinal: int) -> str:
    """The folder of one run unit: its purpose, and its ordinal when there are several (``golden-2``)."""
    return f"{purpose}-{ordinal}" if ordinal else purpose


R = TypeVar("R", SummaryRow, ImplValidation)


def golden_ran(rows: Sequence[R]) -> list[R]:
    """The implementations whose golden code ran: one stopped before it (by its checkout, its environment or the
    codec) is not run, and counts in no golden pass rate."""
    return [r for r in rows if r.not_run is None and not r.environment_error]


def golden_pass_rate(rows: list[SummaryRow]) -> float | None:
    """The share of implementations whose golden code passed every run, among those whose golden code ran; None
    when there is none."""
    ran = golden_ran(rows)
    return sum(r.golden_passes == r.repeat for r in ran) / len(ran) if ran else None


def log_file(impl_index: int, run: str) -> str:
    """Where the whole output of one run of a result is kept, relative to the result's folder."""
    return f"impl-{impl_index}.logs/{run}.log"


def save_result(run_dir: Path, result: ImplValidation) -> Path:
    """Write a result and, beside it, the whole output of its golden and masked runs (``impl-<k>.logs/``, named
    by each report's ``log_file``); the JSON keeps the tails. Returns the result file."""
    path = result_path(run_dir, result.task, result.impl)
    shutil.rmtree(path.parent / log_file(result.impl, "x").split("/")[0], ignore_errors=True)  # an older run's
    runs = [(f"golden-{k}", r) for k, r in enumerate(result.golden_runs, start=1)]
    runs += [("masked", result.masked)] if result.masked is not None else []
    for name, report in runs:
        if report.log:
            rel = log_file(result.impl, name)
            atomic_write_text(path.parent / rel, report.log)
            report.log_file = rel
    atomic_write_json(path, result.model_dump(mode="json"))
    return path


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


def task_fingerprint(task: Task) -> str:
    """A hash of everything a task's test results depend on (paper and logs excluded), and of how the harness
    runs tests (``HARNESS``): results from an older way of running are not reused."""
    return task_digest(task, exclude=_NOT_READ_BY_TESTS, salt=HARNESS.encode())[:24]


def infra_errors(result: ImplValidation) -> int:
    """Runs of a result that ended in an infrastructure error (a result with any is validated again)."""
    runs = [*result.golden_runs, *([result.masked] if result.masked else [])]
    n = sum(r.status is TestStatus.INFRA_ERROR for r in runs)
    n += sum(m.status is TestStatus.INFRA_ERROR for m in result.mutants)
    return n + bool(result.environment_error)


def is_reusable(
    result: ImplValidation | None, fingerprint: str, opts: ValidateOptions, runner: SandboxKind | None = None
) -> bool:
    """True when a stored result is about the same files and settings, was made by ``runner`` (any runner when
    None: the automatic choice) and had no infrastructure errors."""
    return (
        result is not None
        and result.fingerprint == fingerprint
        and result.repeat == opts.repeat
        and (runner is None or result.sandbox == runner)
        and infra_errors(result) == 0
        and result.not_run is None
        and len(result.golden_runs) == result.repeat  # stopped before the golden runs: cheap to check again
    )


def summary_row(res: ImplValidation, skipped: bool) -> SummaryRow:
    """The summary table's row of one result (``skipped``: reused, not run now)."""
    from lmrbench.benchmark.validation.not_run import environment_not_run

    not_run = res.not_run
    if not_run is None and res.environment_error:  # written before not_run was a field
        cause = "image" if "cannot be pulled" in res.environment_error else "environment"
        not_run = environment_not_run(res.environment_error, cause)
    return SummaryRow(
        not_run=not_run, verdict=verdict_of(res.valid, res.weak, not_run),
        task=res.task, impl=res.impl, valid=res.valid, golden_passes=res.golden_passes, repeat=res.repeat,
        masked_failed=res.masked_failed, mutants_killed=res.mutants_killed, mutants_total=res.mutants_total,
        flaky=len(res.flaky_tests), seconds=res.seconds, skipped=skipped, reasons=res.reasons,
        environment_error=res.environment_error,
        evidence=res.evidence_text,
        weak=res.weak, kill_rate=res.kill_rate, tolerance_margin=res.tolerance_margin,
        tolerance_note=res.tolerance_note,
        survivors=[f"{m.name or m.kind}: {m.description}" for m in survivors(res.mutants)],
        weak_reasons=res.weak_reasons, kinds={k: list(v) for k, v in res.kind_kills.items()},
        equivalent=[f"{m.name or m.kind}: {m.description}" for m in res.mutants if m.equivalent],
    )
