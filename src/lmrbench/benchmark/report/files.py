"""The report's files: Markdown (Table 2, the breakdowns, the comparison with the paper's published Table 2,
the runs), CSV and JSON."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict
from pathlib import Path

from lmrbench.benchmark.report.leaderboard import leaderboard_table
from lmrbench.benchmark.report.paper_figures import CITATION
from lmrbench.benchmark.report.paper_table import (
    CellCheck,
    against_paper,
    comparison_table,
    difference_lines,
    off_paper_line,
    summary_line,
)
from lmrbench.benchmark.report.results import Results, stage_table
from lmrbench.benchmark.report.samples import write_samples
from lmrbench.benchmark.report.scoreboard import (
    HUMAN_HEADERS,
    SETTINGS_TITLE,
    TABLE_HEADERS,
    WEAKER_NOTE,
    Report,
    category_table,
    human_table,
    run_context,
    settings_table,
    table_rows,
)
from lmrbench.fsutil import atomic_write_text
from lmrbench.schemas.run import RunManifest

BOARD_NOTE = ("Ranked by unit-test accuracy (pass@1: with several samples, the mean over samples); 95% CI: Wilson's "
              "for one sample, a bootstrap over implementations for several; pass@k: the unbiased estimator.")


def _md_table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render_markdown(report: Report, results: Results | None = None) -> str:
    """The report as Markdown: the leaderboard, Table 2, the task x run matrix, the breakdowns, the cost of each
    stage, and what produced each run."""
    parts = ["# Results", ""]
    if results is not None and results.board:
        parts += ["## Leaderboard", "", _md_table(*leaderboard_table(results.board)), "", BOARD_NOTE, ""]
    parts += ["## Unit tests and LLM judge", "", _md_table(TABLE_HEADERS, table_rows(report)), "", WEAKER_NOTE, ""]
    if results is not None and results.matrix[1]:
        parts += ["## Tasks by run (passing/scored)", "", _md_table(*results.matrix), ""]
    if human_table(report):
        parts += ["## Human evaluation and the judge (%)", "", _md_table(HUMAN_HEADERS, human_table(report)), ""]
    headers, rows = category_table(report)
    parts += ["## Unit-test accuracy by category (%)", "", _md_table(headers, rows), ""]
    settings = settings_table(report)
    if settings is not None:
        parts += [f"## {SETTINGS_TITLE}", "", _md_table(*settings), ""]
    if results is not None and results.stages:
        parts += ["## Tokens and cost by stage", "", _md_table(*stage_table(results.stages)), ""]
    parts += paper_sections(against_paper(report))
    if (line := off_paper_line(report)) is not None:
        parts += [line[0].upper() + line[1:] + ".", ""]
    parts += ["## Runs", ""]
    for label, m in report.manifests.items():
        parts.append(f"- **{label}**: {_describe(m)}")
    return "\n".join(parts) + "\n"


def paper_sections(checks: list[CellCheck]) -> list[str]:
    """Markdown lines: for Table 2 and Table 3, the run's cells above the paper's, the count, and each difference
    with its cause (nothing when no run maps to a row of the paper)."""
    parts: list[str] = []
    for name in ("Table 2", "Table 3"):
        table = comparison_table(checks, name)
        if table is None:
            continue
        parts += [f"## Against the paper's {name}", "", f"From {CITATION}. A cell marked * differs from the paper's.",
                  "", summary_line(checks, name) + ".", "", _md_table(*table), ""]  # fmt: skip
        parts += [f"- {line}" for line in difference_lines([c for c in checks if c.table == name])] + [""]
    return parts


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


def write_report(report: Report, out: Path, results: Results | None = None) -> list[Path]:
    """Write report.md, report.csv and report.json into ``out`` (and, with ``results``, the per-sample table)."""
    out = Path(out)
    written = write_samples(results.samples, out) if results is not None else []
    for name, text in (
        ("report.md", render_markdown(report, results)),
        ("report.csv", render_csv(report)),
        ("report.json", render_json(report)),
    ):
        atomic_write_text(out / name, text)
        written.append(out / name)
    return written
