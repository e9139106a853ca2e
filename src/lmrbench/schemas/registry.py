"""Formats beyond info.json that ``lmrbench schema export`` writes. Each stage adds its own models here."""

from __future__ import annotations

from pydantic import BaseModel

from lmrbench.schemas import agent_run as _agent_run
from lmrbench.schemas import agreement as _agreement
from lmrbench.schemas import evidence as _evidence
from lmrbench.schemas import recording as _recording
from lmrbench.schemas import run as _run
from lmrbench.schemas import testrun as _report
from lmrbench.schemas import validation as _validation
from lmrbench.schemas.agent_export import AgentExport

EXTRA_MODELS: dict[str, type[BaseModel]] = {}
EXTRA_MODELS.update(
    {
        "candidate": _run.Candidate,
        "result": _run.EvalResult,
        "verdict": _run.Verdict,
        "label": _run.HumanLabel,
        "label_queue": _run.LabelQueue,
        "label_skips": _run.SkipList,
        "agreement": _agreement.AgreementReport,
        "run": _run.RunManifest,
        "agent_export": AgentExport,
        "agent_outcome": _agent_run.AgentOutcome,
        "action_report": _agent_run.ActionReport,
        "test_report": _report.TestReport,
        "recording": _recording.RecordingIndex,
        "validation": _validation.ImplValidation,
        "validation_summary": _validation.ValidationSummary,
        "evidence_run": _evidence.RunSpec,
        "evidence_unit": _evidence.UnitRecord,
        "evidence_check": _evidence.CheckRecord,
    }
)

