"""Keeping the evidence of an implementation's validation runs beside its result (``store.evidence_dir``).

When an implementation is validated, its older evidence goes and ``check.json`` records the settings; as each
run comes back, its unit folder (``golden-1``, ``masked``, ``mutant-3``, ``tolerance``) is written whole, before
anything is decided from it. ``regrade`` reads them back.
"""

from __future__ import annotations

from pathlib import Path

from lmrbench.benchmark.execution.unit import RunUnit, UnitResult
from lmrbench.benchmark.validation.implementation import ImplCheck
from lmrbench.benchmark.validation.store import evidence_dir
from lmrbench.fsutil import atomic_write_text
from lmrbench.harness.evidence import remove_units, unit_record, write_unit
from lmrbench.schemas.evidence import CheckRecord

CHECK_FILE = "check.json"


def unit_folder(purpose: str, ordinal: int) -> str:
    """The folder of one run unit: its purpose, and its ordinal when there are several (``golden-2``)."""
    return f"{purpose}-{ordinal}" if ordinal else purpose


def start_evidence(run_dir: Path, check: ImplCheck) -> None:
    """Remove an older validation's evidence of ``check``'s implementation and record its settings."""
    folder = evidence_dir(run_dir, check.task.name, check.impl.index)
    remove_units(folder)
    o = check.opts
    record = CheckRecord(repeat=o.repeat, timeout=o.timeout, max_mutants=o.max_mutants,
                         min_kill_rate=o.min_kill_rate, check_tolerances=o.check_tolerances)
    try:
        atomic_write_text(folder / CHECK_FILE, record.model_dump_json(indent=2) + "\n")
    except OSError as exc:
        check.progress.log(f"{check.label}: warning: cannot keep the runs' evidence: {exc}")


def keep_unit(run_dir: Path, check: ImplCheck, unit: RunUnit, result: UnitResult) -> None:
    """Write one run's evidence (its spec, reports and whole output, and the report decided from them)."""
    folder = evidence_dir(run_dir, check.task.name, check.impl.index) / unit_folder(unit.purpose, unit.ordinal)
    record, runs = unit_record(unit.purpose, unit.ordinal, unit.key, result.report, result.evidence,
                               environment_error=result.environment_error, env_id=result.env_id)
    try:
        write_unit(folder, record, runs)
    except OSError as exc:
        check.progress.log(f"{check.label} {unit.key}: warning: cannot keep the run's evidence: {exc}")
