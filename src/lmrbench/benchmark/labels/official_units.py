"""Reading the official unit-test results: ``results/unit_test_evaluation/<BaseAgent|OpenHands>/<model>/results.txt``.

The official statistics script writes one line per unit-test log it found, and one line per task whose log
folder was missing; it counts both in ``Total log files`` (a missing folder is a failure):

```
1-DPO/unit_test_1.log: PASS                               (also "PASS fail_count: 0")
18-MassActiv/unit_test.log: PASS                          (no number: the task's first implementation)
11-moverscore/unit_test_1.log: FAIL (found 2 failure lines)
/home/.../o4mini/13-DecBound/DecBound-main/unit_test/logs is not a directory

Total log files: 28
Passed files:    10
```
``unit_test_<k>.log`` is implementation ``k`` (info.json's 1-based ``index``). Nothing here writes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lmrbench.benchmark.labels.official_files import FOLDER_AGENTS, HUMAN_DIR, JUDGE_DIR, read_text
from lmrbench.schemas.run import EvalResult, ResultStatus

UNIT_DIR = "unit_test_evaluation"
RESULTS_TXT = "results.txt"
_LOG = re.compile(r"(?P<task>[^/\s][^/]*)/unit_test(?:_(?P<k>\d+))?\.log:\s*(?P<verdict>PASS|FAIL)\b(?P<rest>.*)")
_NO_DIR = re.compile(r"(?P<path>\S.*?)\s+is not a directory\s*")
_TOTAL = re.compile(r"Total log files:\s*(\d+)")
_PASSED = re.compile(r"Passed files:\s*(\d+)")
_SUMMARY = re.compile(r"(Failed files|Overall pass rate):.*")


@dataclass
class UnitOutcome:
    """One line of results.txt: a log's verdict, or a task that left no logs (``impl`` None: every one)."""

    task: str
    impl: int | None
    passed: bool
    line: str
    lineno: int


@dataclass
class UnitFile:
    """One results.txt: its outcomes, the totals it declares, and lines it holds that were not understood."""

    agent_type: str
    model_name: str
    path: Path
    outcomes: list[UnitOutcome] = field(default_factory=list)
    declared_total: int | None = None
    declared_passed: int | None = None
    unread: list[str] = field(default_factory=list)


def parse_results_txt(text: str, agent_type: str, model_name: str, path: Path) -> UnitFile:
    """The outcomes of one results.txt (see the module); a line of another shape goes to ``unread``."""
    out = UnitFile(agent_type, model_name, path)
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or _SUMMARY.fullmatch(line):
            continue
        if m := _LOG.fullmatch(line):
            k = int(m.group("k")) if m.group("k") else 1
            out.outcomes.append(UnitOutcome(m.group("task"), k, m.group("verdict") == "PASS", line, lineno))
        elif m := _NO_DIR.fullmatch(line):
            task = _task_of_missing(m.group("path"), model_name)
            if task is None:
                out.unread.append(f"line {lineno}: {line}")
            else:
                out.outcomes.append(UnitOutcome(task, None, False, line, lineno))
        elif m := _TOTAL.fullmatch(line):
            out.declared_total = int(m.group(1))
        elif m := _PASSED.fullmatch(line):
            out.declared_passed = int(m.group(1))
        else:
            out.unread.append(f"line {lineno}: {line}")
    return out


def _task_of_missing(path: str, model_name: str) -> str | None:
    """The task folder in ``.../<model>/<task>/<repo>/unit_test/logs``: the part after the model, else the
    part three above ``logs``."""
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    if model_name in parts:
        k = len(parts) - 1 - parts[::-1].index(model_name)
        if k + 1 < len(parts):
            return parts[k + 1]
    if len(parts) >= 4 and parts[-2:] == ["unit_test", "logs"]:
        return parts[-4]
    return None


def read_unit_files(results: Path) -> list[UnitFile]:
    """Every ``unit_test_evaluation/<agent folder>/<model>/results.txt`` (agent folders other than BaseAgent
    and OpenHands are skipped by the caller, which names them)."""
    root = Path(results) / UNIT_DIR
    if not root.is_dir():
        return []
    files = []
    for agent_dir in sorted(p for p in root.iterdir() if p.is_dir() and p.name in FOLDER_AGENTS):
        for model_dir in sorted(p for p in agent_dir.iterdir() if p.is_dir()):
            path = model_dir / RESULTS_TXT
            if path.is_file():
                files.append(parse_results_txt(read_text(path), FOLDER_AGENTS[agent_dir.name], model_dir.name, path))
    return files


def unit_results(
    unit: UnitFile,
    canonical: Callable[[str], str],
    indexes: Callable[[str], list[int]],
    category: Callable[[str, int], str | None],
    notes: list[str],
) -> list[tuple[str, EvalResult]]:
    """(the name results.txt uses, the EvalResult) of every implementation a results.txt speaks of.

    A task that left no logs fails in every implementation (the official totals count it as one failed
    file). Repeated lines, totals that disagree with the lines and unknown lines are added to ``notes``.
    """
    out: dict[tuple[str, int], tuple[str, EvalResult]] = {}
    for o in unit.outcomes:
        task = canonical(o.task)
        for impl in [o.impl] if o.impl is not None else indexes(task):
            if (task, impl) in out:
                notes.append(f"{unit.path}: line {o.lineno} repeats {o.task} implementation {impl}; the later counts")
            out[(task, impl)] = (o.task, EvalResult(
                task=task, impl=impl, category=category(task, impl),
                status=ResultStatus.PASSED if o.passed else ResultStatus.FAILED,
                reason="" if o.passed else ("no unit-test logs" if o.impl is None else "a unit test failed"),
                test_status="PASS" if o.passed else "FAIL", passed_tests=int(o.passed), total_tests=1,
                weaker_evidence=True, log_tail=o.line,
            ))  # fmt: skip
    counted, passed = len(unit.outcomes), sum(o.passed for o in unit.outcomes)
    if unit.declared_total is not None and unit.declared_total != counted:
        notes.append(f"{unit.path}: says {unit.declared_total} log files, its lines give {counted}")
    if unit.declared_passed is not None and unit.declared_passed != passed:
        notes.append(f"{unit.path}: says {unit.declared_passed} passed, its lines give {passed}")
    notes += [f"{unit.path}: {line}: not a line of the official statistics; skipped" for line in unit.unread]
    return list(out.values())


def not_imported(results: Path) -> list[str]:
    """One line per file or folder of a results folder that the import does not read, and why."""
    results = Path(results)
    lines: list[str] = []
    for entry in sorted(results.iterdir()):
        if entry.name in (HUMAN_DIR, JUDGE_DIR, UNIT_DIR) and entry.is_dir():
            continue
        if entry.is_dir():
            n = sum(1 for p in entry.rglob("*") if p.is_file())
            lines.append(f"{entry}/ ({n} files): agent trajectories and logs, part of no table; left where they are")
        else:
            lines.append(f"{entry}: not a results folder")
    human = results / HUMAN_DIR
    for entry in sorted(human.iterdir()) if human.is_dir() else []:
        if entry.suffix != ".json" or not entry.is_file():
            lines.append(f"{entry}: not a label file (labels are read from {HUMAN_DIR}/*.json)")
    judged = sorted((results / JUDGE_DIR).glob("*/*/summary.txt"))
    if judged:
        lines.append(
            f"{results / JUDGE_DIR}/*/*/summary.txt ({len(judged)} files): the judge script's own tallies, which "
            "disagree with its analyses; the verdicts come from the *_analysis.txt files"
        )
    units = results / UNIT_DIR
    for agent_dir in sorted(units.iterdir()) if units.is_dir() else []:
        if agent_dir.name not in FOLDER_AGENTS:
            lines.append(f"{agent_dir}: not an agent folder ({' or '.join(FOLDER_AGENTS)})")
            continue
        for model_dir in sorted(p for p in agent_dir.iterdir() if p.is_dir()):
            if not (model_dir / RESULTS_TXT).is_file():
                lines.append(f"{model_dir}: no {RESULTS_TXT}")
            others = [p for p in model_dir.rglob("*") if p.is_file() and p.name != RESULTS_TXT]
            if others:
                lines.append(f"{model_dir}: {len(others)} other files (logs); outcomes are read from {RESULTS_TXT}")
    return lines


def results_txt(results: list[EvalResult], names: dict[str, str]) -> str:
    """A results.txt in the official script's format for the outcomes of a run (infrastructure errors left out).

    An imported outcome gives back its own line (a task without logs once, however many implementations it
    has); any other is written as ``<task>/unit_test_<k>.log: PASS`` or ``FAIL (found N failure lines)``, the
    task under the name ``names`` gives it (the name the results used), else its own.
    """
    lines: dict[str, bool] = {}
    for r in results:
        if r.status is ResultStatus.INFRA_ERROR:
            continue
        passed = r.status is ResultStatus.PASSED
        line = r.log_tail.strip() if r.weaker_evidence and _is_official_line(r.log_tail.strip()) else ""
        if not line:
            failed = len(r.failures) or max(0, r.total_tests - r.passed_tests)
            verdict = "PASS" if passed else f"FAIL (found {failed} failure lines)"
            line = f"{names.get(r.task, r.task)}/unit_test_{r.impl}.log: {verdict}"
        lines.setdefault(line, passed)
    body = sorted(lines)
    wins = sum(lines[line] for line in body)
    total = len(body)
    rate = 100.0 * wins / total if total else 0.0
    return "\n".join(body) + (
        f"\n\nTotal log files: {total}\nPassed files:    {wins}\nFailed files:    {total - wins}\n"
        f"Overall pass rate: {rate:.2f}%\n"
    )


def _is_official_line(line: str) -> bool:
    return bool(_LOG.fullmatch(line) or _NO_DIR.fullmatch(line))
