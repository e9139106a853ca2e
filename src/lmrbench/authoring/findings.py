"""Findings of ``lmrbench tasks check``: a code, a severity, a place and one line of text.

Codes follow ruff's style: a letter for the family and three digits; ``--select``/``--ignore`` take codes or
prefixes (``L``, ``T3``). Identical findings of many tasks are grouped for reading (:func:`group`).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from lmrbench.errors import LmrError


class Severity(enum.IntEnum):
    """How bad a finding is; the exit status of ``tasks check`` follows the worst one."""

    NOTE = 1
    WARNING = 2
    ERROR = 3

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Rule:
    """One kind of finding."""

    code: str
    severity: Severity
    summary: str


RULES: dict[str, Rule] = {r.code: r for r in (
    Rule("F001", Severity.ERROR, "the task does not load"),
    Rule("F101", Severity.ERROR, "a goal file does not exist"),
    Rule("F102", Severity.ERROR, "a golden file does not exist"),
    Rule("F103", Severity.ERROR, "a golden file has a syntax error"),
    Rule("F104", Severity.ERROR, "a goal function is missing from the golden file"),
    Rule("F105", Severity.ERROR, "a goal function is missing from the masked goal file"),
    Rule("F106", Severity.ERROR, "an implementation names no goal function"),
    Rule("F107", Severity.ERROR, "an implementation has no unit test file"),
    Rule("F108", Severity.ERROR, "a unit test file does not exist"),
    Rule("F109", Severity.WARNING, "a retrieval context file does not exist"),
    Rule("F110", Severity.ERROR, "a test file is offered as retrieval context"),
    Rule("F111", Severity.WARNING, "the category matches none of the nine categories"),
    Rule("F112", Severity.ERROR, "a symlink leads out of the task folder"),
    Rule("L201", Severity.ERROR, "a copy of the golden body (up to names, literals, comments) is in the repository"),
    Rule("L202", Severity.ERROR, "a near-copy of the golden body is elsewhere in the repository"),
    Rule("L203", Severity.ERROR, "compiled Python (.pyc) in the repository holds the golden code"),
    Rule("T301", Severity.ERROR, "a test imports the golden code"),
    Rule("T302", Severity.ERROR, "a test never calls the goal function"),
    Rule("T303", Severity.ERROR, "a test's expected value is computed by the goal function itself"),
    Rule("T304", Severity.ERROR, 'a legacy test looks for lowercase "passed" (the convention is "Passed")'),
    Rule("T305", Severity.WARNING, "the checker in info.json differs from the recorded tests'"),
    Rule("T306", Severity.WARNING, "no recorded test varies a parameter: a wrong answer that ignores it passes"),
    Rule("D401", Severity.ERROR, "the task has no Dockerfile"),
    Rule("D402", Severity.WARNING, "the Dockerfile copies the whole task folder (golden files) into the image"),
    Rule("D403", Severity.NOTE, "the Dockerfile has no ARG BASE_IMAGE (lmrbench's convention)"),
)}


@dataclass(frozen=True)
class Finding:
    """One problem of one task."""

    code: str
    """The rule's code (``L202``)."""
    task: str
    """The task folder's name."""
    path: str
    """The file concerned, relative to the task folder ('' for the task as a whole)."""
    message: str
    """What is wrong there, one line, without the task's name."""
    line: int = 0
    """The line in ``path`` (0 when none applies)."""

    @property
    def severity(self) -> Severity:
        """The rule's severity."""
        return RULES[self.code].severity

    @property
    def where(self) -> str:
        """``path:line`` or ``path``."""
        return f"{self.path}:{self.line}" if self.line else self.path


def parse_codes(text: str | None, option: str) -> list[str]:
    """Codes or prefixes from a comma-separated option; an unknown one is an error."""
    if not text:
        return []
    out = [c.strip().upper() for c in text.split(",") if c.strip()]
    for c in out:
        if c != "ALL" and not any(code.startswith(c) for code in RULES):
            raise LmrError(f"{option} {c!r} matches no rule; codes are {', '.join(RULES)}")
    return out


def selected(findings: Iterable[Finding], select: list[str], ignore: list[str]) -> list[Finding]:
    """Findings enabled by ``select`` (default ALL) and ``ignore``: as in ruff, the longest matching prefix
    decides, and ``ignore`` wins a tie."""

    def best(code: str, prefixes: list[str]) -> int:
        return max((0 if p == "ALL" else len(p) for p in prefixes if p == "ALL" or code.startswith(p)), default=-1)

    return [f for f in findings if best(f.code, select or ["ALL"]) > best(f.code, ignore)]


@dataclass(frozen=True)
class Group:
    """Findings with the same code and message, from one or more tasks."""

    code: str
    message: str
    where: list[tuple[str, str]]
    """(task, place) of each finding."""

    @property
    def severity(self) -> Severity:
        """The rule's severity."""
        return RULES[self.code].severity


def group(findings: Iterable[Finding]) -> list[Group]:
    """Identical findings (same code and message) together, worst severity first, then by code."""
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for f in findings:
        groups.setdefault((f.code, f.message), []).append((f.task, f.where))
    out = [Group(code, msg, where) for (code, msg), where in groups.items()]
    return sorted(out, key=lambda g: (-g.severity, g.code, g.message))


def exit_status(findings: Iterable[Finding], fail_on: Severity = Severity.ERROR) -> int:
    """1 when any finding is at least ``fail_on`` severe, else 0."""
    return int(any(f.severity >= fail_on for f in findings))


def as_json(tasks: list[str], findings: list[Finding]) -> dict[str, object]:
    """The ``--format json`` document: every finding, ungrouped, plus counts by severity."""
    return {
        "schema_version": 1,
        "tasks": tasks,
        "counts": {str(s): sum(f.severity is s for f in findings) for s in reversed(Severity)},
        "findings": [{"code": f.code, "severity": str(f.severity), "task": f.task, "path": f.path,
                      "line": f.line, "message": f.message, "rule": RULES[f.code].summary} for f in findings],
    }


def as_sarif(findings: list[Finding], version: str) -> dict[str, object]:
    """A SARIF 2.1.0 log (for code-scanning tools); locations are relative to the task set folder."""
    used = sorted({f.code for f in findings})
    results = []
    for f in findings:
        region = {"region": {"startLine": f.line}} if f.line else {}
        uri = f"{f.task}/{f.path}" if f.path else f.task
        results.append({
            "ruleId": f.code, "level": str(f.severity), "message": {"text": f.message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri, "uriBaseId": "TASKSET"}, **region}}],
        })
    rules = [{"id": c, "shortDescription": {"text": RULES[c].summary},
              "defaultConfiguration": {"level": str(RULES[c].severity)}} for c in used]
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "lmrbench", "version": version, "rules": rules}},
                  "results": results}],
    }
