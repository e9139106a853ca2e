"""Reading pytest's junit XML report into test case results."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from lmrbench.schemas.testrun import TestCaseResult

_MESSAGE_CHARS = 2000


def case_id(classname: str, name: str) -> str:
    """The id of a case as lmrbench spells it: ``<classname>::<name>`` (classname may be empty)."""
    return f"{classname}::{name}" if classname else name


def parse_junit(data: bytes) -> list[TestCaseResult]:
    """Every testcase of a junit report, in document order; ValueError when the XML is not a junit report."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ValueError(f"junit report is not valid XML: {exc}") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise ValueError(f"junit report has root <{root.tag}>, expected <testsuites> or <testsuite>")
    cases = []
    for case in root.iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                message = (child.get("message") or child.text or "").strip()[:_MESSAGE_CHARS]
                if outcome != "skipped":
                    break
        try:
            duration = float(case.get("time") or 0.0)
        except ValueError:
            duration = 0.0
        cases.append(
            TestCaseResult(
                test_id=case_id(case.get("classname", ""), case.get("name", "")),
                outcome=outcome,
                duration=duration,
                message=message,
            )
        )
    return cases
