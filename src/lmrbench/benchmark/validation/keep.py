"""Keeping the evidence of an implementation's validation runs beside its result (``store.evidence_dir``).

The runs' evidence comes back with each unit and is written when the implementation's result is: the whole
folder at once (``check.json``, the settings, and one folder per run: ``golden-1``, ``masked``, ``mutant-3``,
``tolerance``), replacing an older validation's only once it is complete, so an interrupted validation leaves
the older result and its evidence as they were. ``regrade`` reads them back.
"""

from __future__ import annotations

from pathlib import Path

from lmrbench.benchmark.execution.unit import RunUnit, UnitResult
from lmrbench.benchmark.validation.implementation import ImplCheck
from lmrbench.benchmark.validation.store import evidence_dir, started_dir, unit_folder
from lmrbench.fsutil import atomic_write_text, staging_dir
from lmrbench.harness.evidence import end_journal, unit_record, write_unit
from lmrbench.schemas.evidence import CheckRecord

CHECK_FILE = "check.json"


def keep_check(run_dir: Path, check: ImplCheck, runs: list[tuple[RunUnit, UnitResult]]) -> None:
    """Write the evidence of ``check``'s runs (each run's spec, reports and whole output, and the report decided
    from them) and the settings it ran with; a warning, never a lost result, when it cannot be written."""
    o = check.opts
    settings = CheckRecord(repeat=o.repeat, timeout=o.timeout, max_mutants=o.max_mutants,
                           min_kill_rate=o.min_kill_rate, check_tolerances=o.check_tolerances)
    try:
        with staging_dir(evidence_dir(run_dir, check.task.name, check.impl.index), replace=True) as tmp:
            atomic_write_text(tmp / CHECK_FILE, settings.model_dump_json(indent=2) + "\n")
            for unit, result in runs:
                record, commands = unit_record(unit.purpose, unit.ordinal, unit.key, result.report,
                                               result.evidence, environment_error=result.environment_error,
                                               env_id=result.env_id)
                write_unit(tmp / unit_folder(unit.purpose, unit.ordinal), record, commands)
    except OSError as exc:
        check.progress.log(f"{check.label}: warning: cannot keep the runs' evidence: {exc}")
    end_journal(started_dir(run_dir, check.task.name, check.impl.index))
