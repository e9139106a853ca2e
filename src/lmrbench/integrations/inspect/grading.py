"""Grading goal files read back from a sample's sandbox, as ``lmrbench evaluate`` grades a candidate folder.

The files are only data here: they are checked as untrusted files (``execution.unit.goal_files_of``: no links,
capped, decoded), carried in a ``RunUnit`` as a ``harness.spec.Candidate`` and run by the harness in a fresh
container of the task's image of their own (``execution.unit.execute``), split when the task allows: the goal
functions in the candidate's worker, the recorded expectations and checkers in a trusted process the agent's
container never saw. The agent's container plays no part in the verdict. What the verdict was decided from (each
command's spec, the sealed junit and seal reports, the output) is returned with it and, when asked, written as
``lmrbench evaluate`` writes it (``harness.evidence.write_unit``, sealed with this machine's key).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmrbench.benchmark.execution.unit import RunUnit, TaskRef, UnitResult, execute, goal_files_of
from lmrbench.benchmark.pipeline.evaluate import DEFAULT_TIMEOUT, result_from_report
from lmrbench.benchmark.pipeline.rundir import digest_files
from lmrbench.core.taskset import Task
from lmrbench.core.trust import impl_test_files
from lmrbench.errors import LmrError
from lmrbench.harness.evidence import MAX_FILE, unit_record, write_unit
from lmrbench.harness.spec import Candidate as CandidateVariant
from lmrbench.harness.variant import rejected_report
from lmrbench.integrations.inspect.engine import LogProgress, engine
from lmrbench.schemas.run import Candidate, CandidateStatus, EvalResult, ResultStatus

REPORT_KEEP = 64_000
"""Characters of each raw report (junit, seal) and of each command's output kept in the sample's metadata."""


class InfrastructureError(LmrError):
    """The grading could not run (the image, the engine): no verdict, never a wrong answer."""


@dataclass(frozen=True)
class Graded:
    """The verdict on one implementation's goal files and what it was decided from."""

    result: EvalResult
    """The result ``lmrbench evaluate`` would store (status, reason, tests passed, failures, isolation)."""
    evidence: dict[str, Any]
    """The unit's record (its report, isolation, environment) and each command's spec, raw reports and output."""

    @property
    def passed(self) -> bool:
        """Whether every declared test passed."""
        return self.result.status is ResultStatus.PASSED


def grade_goal_files(task: Task, impl_index: int, files: dict[str, bytes | str], *,
                     timeout: float = DEFAULT_TIMEOUT, evidence_dir: Path | None = None) -> Graded:  # fmt: skip
    """Grade goal files of one implementation: repository-relative path -> its bytes, or why it could not be read
    from the sandbox.

    An unreadable, missing, linked, oversized or undecodable goal file, or one that does not splice, is a failure
    with its reason; ``InfrastructureError`` when no test could run for reasons not the candidate's."""
    impl = task.info.implementation(impl_index)
    blobs = {rel: data for rel, data in files.items() if isinstance(data, bytes)}
    cand = Candidate(task=task.name, impl=impl.index, source="agent", status=CandidateStatus.OK,
                     goal_files=sorted(blobs), digest=digest_files(blobs, salt=CandidateStatus.OK.value))  # fmt: skip
    unread = [f"{rel}: {why}" for rel, why in files.items() if isinstance(why, str)]
    if unread:
        res = UnitResult(rejected_report("; ".join(unread), "docker", impl_test_files(task, impl)))
        return _graded(cand, task, res, evidence_dir)
    with tempfile.TemporaryDirectory(prefix="lmrbench-inspect-grade-") as tmp:
        repo = Path(tmp) / task.info.repo_folder_name
        for rel, data in blobs.items():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_bytes(data)
        try:
            goals = goal_files_of(task, impl.index, Path(tmp))
        except LmrError as exc:  # missing, a link, too large, not UTF-8: the candidate's failure
            res = UnitResult(rejected_report(str(exc), "docker", impl_test_files(task, impl)))
            return _graded(cand, task, res, evidence_dir)
    eng = engine()
    unit = RunUnit(key=f"{task.name}#{impl.index}", task=TaskRef(task.name, str(task.path)), impl=impl.index,
                   variant=CandidateVariant(goals), purpose="candidate", timeout=timeout)  # fmt: skip
    res = execute(unit, task, eng.sandbox, eng.prepared, progress=LogProgress())
    graded = _graded(cand, task, res, evidence_dir)
    if graded.result.status is ResultStatus.INFRA_ERROR:
        raise InfrastructureError(f"{task.name}#{impl.index}: no verdict: {graded.result.reason}")
    return graded


def _graded(cand: Candidate, task: Task, res: UnitResult, evidence_dir: Path | None) -> Graded:
    impl = task.info.implementation(cand.impl)
    result = result_from_report(cand, impl, res.report, res.env_id)
    record, runs = unit_record("candidate", 0, f"{cand.task}#{cand.impl}", res.report, res.evidence,
                               environment_error=res.environment_error, env_id=res.env_id)  # fmt: skip
    if evidence_dir is not None:
        write_unit(evidence_dir / task.name / str(impl.index), record, runs)
    evidence = {
        "record": record.model_dump(mode="json", exclude={"auth"}),
        "runs": [{
            "spec": run.spec.model_dump(mode="json", exclude={"key", "nonce", "wrapped_key", "auth"}),
            "reports": {name: _tail(data.decode("utf-8", errors="replace")) for name, data in run.files.items()},
            "output": _tail(run.output),
            "worker_output": _tail(run.worker_output),
        } for run in runs],
    }  # fmt: skip
    return Graded(result=result, evidence=evidence)


def _tail(text: str) -> str:
    keep = min(REPORT_KEEP, MAX_FILE)
    return text if len(text) <= keep else f"[{len(text) - keep} characters elided]\n" + text[-keep:]
