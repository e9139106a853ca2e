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

import csv
import io
import json
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

from lmrbench.benchmark.labels.consensus import run_consensus
from lmrbench.benchmark.pipeline.context import CONTEXT_SETTINGS, run_context
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_text
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


def _label(run: RunDir, taken: set[str]) -> str:
    manifest = run.require_manifest()
    label = manifest.label or run.path.name
    if label in taken:
        label = f"{label} ({run.path.name})"
    taken.add(label)
    return label


def build_report(run_paths: list[Path], *, judge: str | None = None) -> Report:
    """Read every run folder (LmrError naming one that is not a run) into a report."""
    report = Report()
    taken: set[str] = set()
    for path in run_paths:
        run = RunDir(Path(path))
        label = _label(run, taken)
        report.manifests[label] = run.require_manifest()
        cands = {(c.task, c.impl): c for c in run.candidates()}
        results = {(r.task, r.impl): r for r in run.results()}
        expected = {(t.name, i) for t in report.manifests[label].tasks for i in t.implementations}
        manifest = report.manifests[label]
        base = RunRow(run=label, path=str(run.path), implementations=len(expected | set(cands)),
                      context=run_context(manifest.settings),
                      model=manifest.generation.model if manifest.generation else manifest.label or label)  # fmt: skip
        base.pending = len(expected - set(cands))
        per_cat: dict[str, Counter[str]] = defaultdict(Counter)
        for key, cand in cands.items():
            res = results.get(key)
            if res is None or res.candidate_digest != cand.digest:
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
    for verdict in verdicts.values() if not cands else []:  # imported from the official files: no candidates
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


def settings_table(report: Report) -> tuple[list[str], list[list[str]]] | None:
    """The paper's Table 3: unit-test accuracy per model (rows) and input setting (columns), "acc% (passed/n)".

    None when every run was made under one setting (there is nothing to put side by side).
    """
    contexts = [c for c in CONTEXT_SETTINGS if any(r.context == c for r in report.rows)]
    if len(contexts) < 2:
        return None
    cells: dict[tuple[str, str], str] = {}
    for r in report.rows:
        cells.setdefault((r.model, r.context), f"{_f(r.accuracy)} ({r.passed}/{r.passed + r.failed})")
    models = list(dict.fromkeys(r.model for r in report.rows))
    return ["Model", *contexts], [[m, *(cells.get((m, c), "-") for c in contexts)] for m in models]


def _md_table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(report: Report) -> str:
    """The report as Markdown: Table 2, the category breakdown, and what produced each run."""
    parts = ["# Results", "", _md_table(TABLE_HEADERS, table_rows(report)), "", WEAKER_NOTE, ""]
    if human_table(report):
        parts += ["## Human evaluation and the judge (%)", "", _md_table(HUMAN_HEADERS, human_table(report)), ""]
    headers, rows = category_table(report)
    parts += ["## Unit-test accuracy by category (%)", "", _md_table(headers, rows), ""]
    settings = settings_table(report)
    if settings is not None:
        parts += ["## Unit-test accuracy by input setting (%)", "", _md_table(*settings), ""]
    parts += ["## Runs", ""]
    for label, m in report.manifests.items():
        parts.append(f"- **{label}**: {_describe(m)}")
    return "\n".join(parts) + "\n"


def _describe(m: RunManifest) -> str:
    bits: list[str] = [m.source, f"context {run_context(m.settings)}"]
    if m.generation:
        g = m.generation
        bits.append(f"model {g.model}, temperature {g.temperature}, max tokens {g.max_tokens}")
    if m.prompt_version:
        bits.append(f"prompt {m.prompt_version}")
    bits.append(f"{len(m.tasks)} tasks, sandbox {m.sandbox or '-'}, lmrbench {m.tool_version}")
    judges = [
        f"{j.params.model} (temperature {j.params.temperature}, prompt {j.prompt_version})"
        for j in m.judges.values()
    ]
    if judges:
        bits.append("judges: " + ", ".join(judges))
    return ", ".join(bits)


def render_csv(report: Report) -> str:
    """Table 2 as CSV (numbers unformatted, empty when undefined)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([
        "run", "context", "judge", "implementations", "passed", "failed", "infra_errors", "pending", "accuracy",
        "judged", "cc", "lc", "li", "no_verdict", "cc_pct", "lc_pct", "li_pct", "generation_tokens",
        "judge_tokens", "labelled", "h_cc", "h_lc", "h_li",
    ])  # fmt: skip
    for r in report.rows:
        writer.writerow([
            r.run, r.context, r.judge, r.implementations, r.passed, r.failed, r.infra_errors, r.pending,
            "" if r.accuracy is None else round(r.accuracy, 4), r.judged, r.cc, r.lc, r.li, r.no_verdict,
            *("" if r.pct(n) is None else round(r.pct(n) or 0.0, 4) for n in (r.cc, r.lc, r.li)),
            r.generation_tokens, r.judge_tokens, r.labelled, r.h_cc, r.h_lc, r.h_li,
        ])  # fmt: skip
    return buf.getvalue()


def render_json(report: Report) -> str:
    """Everything, including each run's manifest."""
    data = {
        "rows": [asdict(r) for r in report.rows],
        "categories": [asdict(c) for c in report.categories],
        "runs": {label: m.model_dump(mode="json") for label, m in report.manifests.items()},
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_report(report: Report, out: Path) -> list[Path]:
    """Write report.md, report.csv and report.json into ``out``."""
    out = Path(out)
    written = []
    for name, text in (
        ("report.md", render_markdown(report)),
        ("report.csv", render_csv(report)),
        ("report.json", render_json(report)),
    ):
        atomic_write_text(out / name, text)
        written.append(out / name)
    return written
