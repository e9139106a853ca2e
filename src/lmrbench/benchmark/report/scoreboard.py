"""The paper's Table 2 for any number of runs, a per-category breakdown, written as Markdown, CSV and JSON.

Unit-test accuracy is the fraction of implementations whose tests all pass, over the implementations with a
result that is not an infrastructure error. Infrastructure errors are shown apart, and so are pending
implementations (no candidate or no result yet). Judge columns give the shares of Completely Correct,
Logically Correct and Logically Incorrect among judged candidates; a candidate with no usable code counts as
Logically Incorrect, an endpoint failure during generation is left out, and candidates without a verdict are
shown apart. Only results and verdicts of the current candidate (same digest) count. Everything is rebuilt
from the files on disk.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

from lmrbench.benchmark.labels.consensus import run_consensus
from lmrbench.benchmark.pipeline.context import CONTEXT_SETTINGS, run_context
from lmrbench.benchmark.pipeline.rundir import RunDir, run_labels, speaks_of_current
from lmrbench.errors import LmrError
from lmrbench.schemas.categories import Category
from lmrbench.schemas.run import Candidate, CandidateStatus, JudgeCategory, ResultStatus, RunManifest

UNCATEGORIZED = "Uncategorized"


@dataclass
class RunRow:
    """One row of Table 2: a run (and one of its judges)."""

    run: str
    path: str
    judge: str = ""
    context: str = "full"
    """The input setting the candidates were made under (full, paper+goal-file, paper-only)."""
    model: str = ""
    """The generating model or the agent's label (the run label without a folder suffix)."""
    implementations: int = 0
    passed: int = 0
    failed: int = 0
    infra_errors: int = 0
    pending: int = 0
    accuracy: float | None = None
    judged: int = 0
    cc: int = 0
    lc: int = 0
    li: int = 0
    no_verdict: int = 0
    generation_tokens: int = 0
    """Prompt and completion tokens spent on the run's candidates."""
    judge_tokens: int = 0
    """Prompt and completion tokens spent by this judge."""
    weaker_passes: int = 0
    """Passes that rest on weaker evidence (tests that shared the candidate's process, or script logs)."""
    labelled: int = 0
    """Candidates with a current human label (their consensus is counted in h_cc, h_lc, h_li)."""
    h_cc: int = 0
    h_lc: int = 0
    h_li: int = 0

    def pct(self, n: int) -> float | None:
        """``n`` as a percentage of the judged candidates."""
        return 100.0 * n / self.judged if self.judged else None

    def hpct(self, n: int) -> float | None:
        """``n`` as a percentage of the labelled candidates."""
        return 100.0 * n / self.labelled if self.labelled else None


@dataclass
class CategoryRow:
    """Unit-test accuracy of one run on one category."""

    run: str
    category: str
    implementations: int = 0
    passed: int = 0
    accuracy: float | None = None


@dataclass
class Report:
    """Everything the report files hold."""

    rows: list[RunRow] = field(default_factory=list)
    categories: list[CategoryRow] = field(default_factory=list)
    manifests: dict[str, RunManifest] = field(default_factory=dict)


def agent_infra_errors(run: RunDir, tasks: set[str]) -> set[str]:
    """The tasks of ``tasks`` whose agent run ended in an infrastructure error (its endpoint or container
    failed), so that no candidate exists: counted as infrastructure errors, not as pending."""
    from lmrbench.benchmark.agents.runner import outcome
    from lmrbench.schemas.agent_run import AgentStatus

    return {t for t in tasks if (o := outcome(run, t)) is not None and o.status is AgentStatus.INFRA_ERROR}


def build_report(run_paths: list[Path], *, judge: str | None = None) -> Report:
    """Read every run folder (LmrError naming one that is not a run) into a report."""
    report = Report()
    for path, label in zip(run_paths, run_labels(run_paths), strict=True):
        run = RunDir(Path(path))
        report.manifests[label] = run.require_manifest()
        cands = {(c.task, c.impl): c for c in run.candidates()}
        results = {(r.task, r.impl): r for r in run.results()}
        verdict_keys = {(v.task, v.impl) for name in run.judges() for v in run.verdicts(name)}
        imported = {k for k, r in results.items() if k not in cands and not r.candidate_digest}
        expected = {(t.name, i) for t in report.manifests[label].tasks for i in t.implementations}
        manifest = report.manifests[label]
        base = RunRow(run=label, path=str(run.path),
                      implementations=len(expected | set(cands) | imported | (verdict_keys - set(cands))),
                      context=run_context(manifest.settings),
                      model=manifest.generation.model if manifest.generation else manifest.label or label)  # fmt: skip
        missing = expected - set(cands) - imported
        down = agent_infra_errors(run, {task for task, _ in missing})
        base.infra_errors = sum(1 for task, _ in missing if task in down)  # the agent never got to answer
        base.pending = len(missing) - base.infra_errors
        per_cat: dict[str, Counter[str]] = defaultdict(Counter)
        for key in sorted(set(cands) | imported):
            res = results.get(key)
            if res is None or not speaks_of_current(cands, key, res.candidate_digest):
                base.pending += 1
                continue
            if res.status is ResultStatus.INFRA_ERROR:
                base.infra_errors += 1
                continue
            cat = res.category or UNCATEGORIZED
            per_cat[cat]["n"] += 1
            if res.status is ResultStatus.PASSED:
                base.passed += 1
                base.weaker_passes += res.weaker_evidence or res.isolation != "split"
                per_cat[cat]["passed"] += 1
            else:
                base.failed += 1
        scored = base.passed + base.failed
        base.accuracy = 100.0 * base.passed / scored if scored else None
        human = Counter(run_consensus(run).values())
        base.labelled, base.h_li, base.h_lc, base.h_cc = sum(human.values()), human[1], human[2], human[3]
        base.generation_tokens = sum(
            c.usage.prompt_tokens + c.usage.completion_tokens for c in cands.values()
        )
        order = [c.value for c in Category] + [UNCATEGORIZED]
        for cat in sorted(per_cat, key=lambda c: order.index(c) if c in order else len(order)):
            n, ok = per_cat[cat]["n"], per_cat[cat]["passed"]
            report.categories.append(CategoryRow(label, cat, n, ok, 100.0 * ok / n if n else None))
        if judge and judge not in run.judges():
            have = ", ".join(run.judges()) or "none"
            raise LmrError(f"no verdicts of judge {judge!r} (judges here: {have})", run.path)
        judges = [judge] if judge else run.judges()
        if not judges:
            report.rows.append(base)
        for name in judges:
            report.rows.append(_judged(run, base, name, cands))
    return report


def _judged(run: RunDir, base: RunRow, name: str, cands: dict[tuple[str, int], Candidate]) -> RunRow:
    row = RunRow(**{**asdict(base), "judge": name})
    verdicts = {(v.task, v.impl): v for v in run.verdicts(name)}
    for key, cand in cands.items():
        if cand.status is CandidateStatus.LLM_ERROR:
            continue
        if cand.status is not CandidateStatus.OK:
            row.li += 1
            continue
        verdict = verdicts.get(key)
        if verdict is None or verdict.candidate_digest != cand.digest:
            row.no_verdict += 1
            continue
        _count(row, verdict.category)
    for key, verdict in verdicts.items():  # imported from the official files: no candidate, no digest
        if key not in cands and speaks_of_current(cands, key, verdict.candidate_digest):
            _count(row, verdict.category)
    row.judged = row.cc + row.lc + row.li
    row.judge_tokens = sum(v.usage.prompt_tokens + v.usage.completion_tokens for v in verdicts.values())
    return row


def _count(row: RunRow, category: JudgeCategory | None) -> None:
    if category is None:
        row.no_verdict += 1
    elif category is JudgeCategory.COMPLETELY_CORRECT:
        row.cc += 1
    elif category is JudgeCategory.LOGICALLY_CORRECT:
        row.lc += 1
    else:
        row.li += 1


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


TABLE_HEADERS = [
    "Run", "Context", "Unit test acc. (%)", "Passed", "Scored", "Infra errors", "Pending",
    "Judge", "CC (%)", "LC (%)", "LI (%)", "No verdict", "Weaker-evidence passes",
]  # fmt: skip


WEAKER_NOTE = (
    "Weaker-evidence passes: the candidate ran in the same process as the tests (a task that asks for a "
    "shared process, or results from before split runs), or the verdict came from official script logs."
)


def table_rows(report: Report) -> list[list[str]]:
    """Table 2 as text cells, in TABLE_HEADERS order."""
    return [
        [
            r.run,
            r.context,
            _f(r.accuracy),
            str(r.passed),
            str(r.passed + r.failed),
            str(r.infra_errors),
            str(r.pending),
            r.judge or "-",
            _f(r.pct(r.cc)),
            _f(r.pct(r.lc)),
            _f(r.pct(r.li)),
            str(r.no_verdict) if r.judge else "-",
            str(r.weaker_passes),
        ]  # fmt: skip
        for r in report.rows
    ]


HUMAN_HEADERS = ["Run", "Judge", "CC (%)", "LC (%)", "LI (%)", "Labelled", "Human CC (%)", "Human LC (%)",
                 "Human LI (%)"]  # fmt: skip


def human_table(report: Report) -> list[list[str]]:
    """The paper's Table 6: judge and human shares side by side; empty when no run holds labels."""
    if not any(r.labelled for r in report.rows):
        return []
    return [
        [r.run, r.judge or "-", _f(r.pct(r.cc)), _f(r.pct(r.lc)), _f(r.pct(r.li)), str(r.labelled),
         _f(r.hpct(r.h_cc)), _f(r.hpct(r.h_lc)), _f(r.hpct(r.h_li))]
        for r in report.rows
    ]  # fmt: skip


def category_table(report: Report) -> tuple[list[str], list[list[str]]]:
    """Per-category unit-test accuracy: one row per category, one column per run ("acc% (passed/n)")."""
    runs = list(dict.fromkeys(c.run for c in report.categories)) or list(
        dict.fromkeys(r.run for r in report.rows)
    )
    cats = list(dict.fromkeys(c.category for c in report.categories))
    cells = {
        (c.run, c.category): f"{_f(c.accuracy)} ({c.passed}/{c.implementations})" for c in report.categories
    }
    return ["Category", *runs], [[cat, *(cells.get((run, cat), "-") for run in runs)] for cat in cats]


SETTINGS_TITLE = "By input setting (the paper's Table 3, %)"


def settings_table(report: Report) -> tuple[list[str], list[list[str]]] | None:
    """The paper's Table 3: a row per input setting and model (and judge), with unit-test accuracy
    ("acc% (passed/n)") and, when any run has verdicts, the judge's CC, LC and LI.

    None when every run was made under one setting (there is nothing to put side by side).
    """
    contexts = [c for c in CONTEXT_SETTINGS if any(r.context == c for r in report.rows)]
    if len(contexts) < 2:
        return None
    judged = any(r.judge for r in report.rows)
    headers = ["Setting", "Model", *(["Judge"] if judged else []), "Unit test acc. (%)",
               *(["CC (%)", "LC (%)", "LI (%)"] if judged else [])]  # fmt: skip
    rows: dict[tuple[str, str, str], list[str]] = {}
    for context in contexts:
        for r in (r for r in report.rows if r.context == context):
            judge = [r.judge or "-", _f(r.pct(r.cc)), _f(r.pct(r.lc)), _f(r.pct(r.li))] if judged else []
            unit = f"{_f(r.accuracy)} ({r.passed}/{r.passed + r.failed})"
            rows.setdefault((context, r.model, r.judge), [context, r.model, *judge[:1], unit, *judge[1:]])
    return headers, list(rows.values())
