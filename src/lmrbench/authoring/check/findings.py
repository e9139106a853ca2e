"""Findings of ``lmrbench task check``: a code, a severity, a place and one line of text.

Codes follow ruff's style: a letter for the family and three digits; ``--select``/``--ignore`` take codes or
prefixes (``L``, ``T3``). Identical findings of many tasks are grouped for reading (:func:`group`).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from lmrbench.errors import UsageError


class Severity(enum.IntEnum):
    """How bad a finding is; the exit status of ``task check`` follows the worst one."""

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
    fix: str
    """What to do about it, one line."""


_E, _W, _N = Severity.ERROR, Severity.WARNING, Severity.NOTE
RULES: dict[str, Rule] = {r.code: r for r in (
    Rule("F001", _E, "the task does not load", "fix info.json (the message names the problem)"),
    Rule("F101", _E, "a goal file does not exist", "correct goal_file (relative to the repository folder)"),
    Rule("F102", _E, "a golden file does not exist", "correct golden_file (relative to the task folder)"),
    Rule("F103", _E, "a golden file has a syntax error", "fix the golden file so that it parses"),
    Rule("F104", _E, "a goal function is missing from the golden file", "correct goal_function or class_name"),
    Rule("F105", _E, "a goal function is missing from the masked goal file", "mask the function, do not delete it"),
    Rule("F106", _E, "an implementation names no goal function", "set goal_function"),
    Rule("F107", _E, "an implementation has no unit test file", "set unit_test_file"),
    Rule("F108", _E, "a unit test file does not exist", "correct unit_test_file (relative to the repository folder)"),
    Rule("F109", _W, "a retrieval context file does not exist", "correct or drop the retrieval context entry"),
    Rule("F110", _E, "a test file is offered as retrieval context", "drop the test file from retrieval_context"),
    Rule("F111", _W, "the category matches none of the nine categories", "use one of the paper's nine categories"),
    Rule("F112", _E, "a symlink leads out of the task folder", "replace the symlink with the file it points to"),
    Rule("F113", _E, "Git LFS pointer files stand where data should be", "run `git lfs pull` and copy the real files"),
    Rule("F114", _N, "the category is empty", "set one of the paper's nine categories"),
    Rule("F115", _E, "the repository folder is empty (a submodule never checked out)",
         "run `git submodule update --init` and copy the repository in"),
    Rule("F116", _W, "tests read data outside unit_test/ that trusted_files does not list",
         "list the files in info.json's trusted_files (or move them under unit_test/)"),
    Rule("F117", _W, "the goal function's tests run in the candidate's process (it is defined inside a test file, or "
         "changes module or class state a split run cannot carry)",
         "move the goal function into a module of its own; keep its state in its arguments or instance"),
    Rule("F118", _E, "a test reads data that exists nowhere in the task (named, with the .gitignore line that kept "
         "it out of the repository)", "copy the files in from where they were made, or record the tests again"),
    Rule("L201", _E, "a copy of the golden body (up to names, literals, comments) is in the repository",
         "delete the copy from the repository"),
    Rule("L202", _E, "a near-copy of the golden body is elsewhere in the repository", "delete or mask the near-copy"),
    Rule("L203", _E, "compiled Python (.pyc) in the repository holds the golden code", "delete the .pyc files"),
    Rule("L204", _W, "compiled Python (.pyc) in the repository", "delete the .pyc files (they may be stale code)"),
    Rule("L205", _N, "files not scanned for copies (generated, data, installed packages)",
         "nothing, unless a copy could hide in them"),
    Rule("L206", _E, "the masked goal file keeps the golden body in comments", "delete the commented-out body"),
    Rule("L207", _W, "a near-copy of the golden body lacks its distinguishing statements (named): a relative, "
         "not the answer", "nothing, unless what it lacks is small; mask it when it gives the answer away"),
    Rule("T301", _E, "a test imports the golden code", "import the goal module, never golden_files"),
    Rule("T302", _E, "a test never calls the goal function", "call the goal function (or its module instance)"),
    Rule("T303", _E, "a test's expected value is computed by the goal function itself",
         "compare with recorded values, not with another call of the goal function"),
    Rule("T304", _E, 'a test logs lowercase "passed" (the convention is "Passed")', 'log "Test Passed"'),
    Rule("T305", _W, "the checker in info.json differs from the recorded tests'", "run `lmrbench task record` again"),
    Rule("T306", _E, "a test compares a value with itself", "compare the result with the expected value"),
    Rule("T307", _E, "a test's assertion always holds (a tautology)", "assert on the result against recorded values"),
    Rule("T308", _E, "a test catches a failed assertion and neither raises nor logs it as failed",
         'raise it again, or log "Test Failed"'),
    Rule("T309", _W, "a test draws random numbers without a seed", "seed every generator the test uses"),
    Rule("T310", _W, "a test needs a GPU", "fall back to the CPU when CUDA is not available"),
    Rule("T311", _W, "a test downloads a model or data set from the Hub", "record the model's outputs, or ship a "
         "small local model"),
    Rule("T312", _N, "no test varies a parameter of the goal function", "add cases with other values of it"),
    Rule("T313", _W, "the golden code draws random numbers that nothing seeds",
         "seed the generator in the tests (or pass one in), and record again"),
    Rule("T314", _W, "the golden code needs a GPU (no CPU path)", "fall back to the CPU when CUDA is not available"),
    Rule("D401", _E, "the task has no Dockerfile", "write one (`lmrbench task new` does)"),
    Rule("D402", _W, "the Dockerfile copies the whole task folder (golden files) into the image",
         "copy only the requirements"),
    Rule("D403", _N, "the Dockerfile has no ARG BASE_IMAGE (lmrbench's convention)", "add ARG BASE_IMAGE"),
    Rule("D404", _W, "the Dockerfile's ARG DIR default is not the repository folder",
         "set ARG DIR=<repo_folder_name>"),
)}


class Selection:
    """Which codes ``--select``/``--ignore`` enable (as in ruff: the longest matching prefix decides, and
    ``ignore`` wins a tie)."""

    def __init__(self, select: list[str] | None = None, ignore: list[str] | None = None) -> None:
        self.select = select or ["ALL"]
        self.ignore = ignore or []

    @staticmethod
    def _best(code: str, prefixes: list[str]) -> int:
        return max((0 if p == "ALL" else len(p) for p in prefixes if p == "ALL" or code.startswith(p)), default=-1)

    def enabled(self, code: str) -> bool:
        """Whether findings of ``code`` are kept."""
        return self._best(code, self.select) > self._best(code, self.ignore)

    def wants(self, *prefixes: str) -> bool:
        """Whether any rule whose code starts with one of ``prefixes`` is enabled (so its check must run)."""
        return any(self.enabled(c) for c in RULES if c.startswith(prefixes))

    def keep(self, findings: Iterable[Finding]) -> list[Finding]:
        """The enabled findings."""
        return [f for f in findings if self.enabled(f.code)]


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
            raise UsageError(f"{option} {c!r} matches no rule; codes are {', '.join(RULES)}")
    return out


def selected(findings: Iterable[Finding], select: list[str], ignore: list[str]) -> list[Finding]:
    """Findings enabled by ``select`` (default ALL) and ``ignore`` (see :class:`Selection`)."""
    return Selection(select, ignore).keep(findings)


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
                      "line": f.line, "message": f.message, "rule": RULES[f.code].summary,
                      "fix": RULES[f.code].fix} for f in findings],
    }


def as_sarif(findings: list[Finding], version: str, root: Path | None = None) -> dict[str, object]:
    """A SARIF 2.1.0 log (for code-scanning tools); locations are relative to the task set folder ``root``,
    which ``originalUriBaseIds`` names (as a file URI ending in a slash)."""
    used = sorted({f.code for f in findings})
    results = []
    for f in findings:
        region = {"region": {"startLine": f.line}} if f.line else {}
        uri = f"{f.task}/{f.path}" if f.path else f.task
        results.append({
            "ruleId": f.code, "level": str(f.severity), "message": {"text": f.message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri, "uriBaseId": "TASKSET"}, **region}}],
        })
    rules = [{"id": c, "shortDescription": {"text": RULES[c].summary}, "help": {"text": RULES[c].fix},
              "defaultConfiguration": {"level": str(RULES[c].severity)}} for c in used]
    base = {"TASKSET": {"uri": root.resolve().as_uri().rstrip("/") + "/"}} if root is not None else \
        {"TASKSET": {"description": {"text": "the task set folder"}}}
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "lmrbench", "version": version, "rules": rules}},
                  "originalUriBaseIds": base, "results": results}],
    }
