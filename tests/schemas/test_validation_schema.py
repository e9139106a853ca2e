"""Validation results as files: what older files said still reads the same."""

from __future__ import annotations


def test_an_older_result_that_said_its_environment_error_only_as_a_reason_still_has_it() -> None:
    from lmrbench.schemas.validation import SummaryRow

    older = {"task": "7-Official", "impl": 1, "valid": False, "golden_passes": 0, "repeat": 3, "masked_failed": False,
             "mutants_killed": 0, "mutants_total": 0, "flaky": 0, "seconds": 1.0, "skipped": False,
             "reasons": ["environment: FROM pytorch/pytorch cannot be pulled"]}
    assert SummaryRow.model_validate(older).environment_error == "FROM pytorch/pytorch cannot be pulled"
    built = dict(older, reasons=["golden run 1 failed: see impl-1.logs/golden-1.log"])
    assert SummaryRow.model_validate(built).environment_error == ""
